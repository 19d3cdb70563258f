/**
 * Authentication of calls between services (issue 22, item 1): a server in mutual TLS with identity's certificate,
 * and callers that are forged (another CA), altered or replayed on the wire (a proxy in between), expired, calling a
 * pattern their service may not call, or talking to an impostor server. A refused call runs no handler.
 */
import { execFile } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { ApiError } from '@switchyard/api';
import { freePort, repoRoot, rpcCredentialsForTests, type TestRpcCredentials } from '@switchyard/testing';
import { createRpcCredentialSet, type RpcCredentials } from './rpc-credentials';
import { startTcpRpcServer, TcpRpcClient, type RpcRefusal } from './tcp-rpc';
import type { RpcCall, RpcHandlers } from './rpc';

const KEYS = 'identity.api-key-pairs.create';
const ACCOUNT = 'identity.merchant-accounts.get';

let credentials: TestRpcCredentials;
let port: number;
let server: { close(): Promise<void> };
const served: { pattern: string; payload: unknown; call: RpcCall }[] = [];
const refusals: RpcRefusal[] = [];
const clients: TcpRpcClient[] = [];

const handlers: RpcHandlers = {
  [KEYS]: async (payload, call) => (
    served.push({ pattern: KEYS, payload, call }), { created: true, actor: call.actor }
  ),
  [ACCOUNT]: async (payload, call) => (served.push({ pattern: ACCOUNT, payload, call }), { id: 'default' }),
  'identity.ping': async () => ({ status: 'ok' }),
};

function clientAs(own: RpcCredentials, options: { port?: number; service?: string } = {}): TcpRpcClient {
  const client = new TcpRpcClient({
    host: '127.0.0.1',
    port: options.port ?? port,
    service: options.service ?? 'identity',
    credentials: own,
    timeoutMs: 3_000,
  });
  clients.push(client);
  return client;
}

async function refusedWith(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => {
      throw new Error('the call was served');
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

/** A TCP proxy in front of the server that can record what the client sends, or flip one bit of it. */
function startProxy(
  target: number,
): Promise<{ port: number; recorded: Buffer[]; tamperNext: () => void; close: () => void }> {
  const recorded: Buffer[] = [];
  let tamper = false;
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((inbound) => {
    const outbound = net.connect(target, '127.0.0.1');
    sockets.add(inbound).add(outbound);
    inbound.on('data', (chunk: Buffer) => {
      recorded.push(Buffer.from(chunk));
      if (tamper) {
        tamper = false;
        chunk[chunk.length - 1]! ^= 0x01;
      }
      outbound.write(chunk);
    });
    outbound.on('data', (chunk) => inbound.write(chunk));
    for (const [a, b] of [
      [inbound, outbound],
      [outbound, inbound],
    ] as const) {
      a.on('close', () => b.destroy());
      a.on('error', () => b.destroy());
    }
  });
  return new Promise((resolve) =>
    proxy.listen(0, '127.0.0.1', () =>
      resolve({
        port: (proxy.address() as net.AddressInfo).port,
        recorded,
        tamperNext: () => (tamper = true),
        close: () => {
          for (const socket of sockets) socket.destroy();
          proxy.close();
        },
      }),
    ),
  );
}

beforeAll(async () => {
  credentials = await rpcCredentialsForTests();
  port = await freePort();
  server = await startTcpRpcServer(`tcp://127.0.0.1:${port}`, handlers, {
    credentials: credentials.of('identity'),
    onUnexpected: () => undefined,
    onRefused: (refusal) => refusals.push(refusal),
  });
});

beforeEach(() => {
  served.length = 0;
  refusals.length = 0;
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await server?.close();
});

it('serves a caller its patterns, with the actor the call names', async () => {
  const answer = await clientAs(credentials.of('gateway')).call(
    KEYS,
    { body: {} },
    { actor: { type: 'dashboard-user', id: 'user-1' } },
  );
  expect(answer).toEqual({ created: true, actor: { type: 'dashboard-user', id: 'user-1' } });
  expect(served).toEqual([
    {
      pattern: KEYS,
      payload: { body: {} },
      call: { caller: 'gateway', actor: { type: 'dashboard-user', id: 'user-1' } },
    },
  ]);
});

it('takes the actor only from the call: an `actor` in the payload is a payload field, nothing more', async () => {
  await clientAs(credentials.of('gateway')).call(KEYS, { body: {}, actor: { type: 'dashboard-user', id: 'admin' } });
  expect(served[0]?.call).toEqual({ caller: 'gateway', actor: null });
});

it('refuses a known caller a pattern its service may not call (403), runs no handler, and reports it', async () => {
  const error = await refusedWith(
    clientAs(credentials.of('webhooks')).call(KEYS, { body: {} }, { actor: { type: 'dashboard-user', id: 'user-1' } }),
  );
  expect(error.status).toBe(403);
  expect(error.code).toBe('forbidden');
  expect(served).toEqual([]);
  expect(refusals).toEqual([{ reason: 'not-allowed', caller: 'webhooks', pattern: KEYS, remoteAddress: '127.0.0.1' }]);
  // The same caller is served what the table gives it.
  const transactions = clientAs(credentials.of('transactions'));
  await expect(transactions.call(ACCOUNT, { id: 'default' })).resolves.toEqual({ id: 'default' });
  expect((await refusedWith(transactions.call(KEYS, {}))).status).toBe(403);
});

it('refuses a forged caller: a gateway certificate of another CA never gets past the handshake', async () => {
  const forged = await createRpcCredentialSet({ services: ['gateway'] });
  const client = clientAs({ service: 'gateway', ca: credentials.set.ca.cert, ...forged.services.gateway! });
  expect((await refusedWith(client.call(KEYS, { body: {} }))).status).toBe(502);
  expect(served).toEqual([]);
  expect(refusals.map((refusal) => refusal.reason)).toContain('unauthenticated');
});

it('refuses an expired certificate of the right CA', async () => {
  const longAgo = await createRpcCredentialSet({
    ca: credentials.set.ca,
    services: ['gateway'],
    days: 1,
    now: new Date(Date.now() - 10 * 24 * 3600 * 1000),
  });
  const client = clientAs({ service: 'gateway', ca: credentials.set.ca.cert, ...longAgo.services.gateway! });
  expect((await refusedWith(client.call(KEYS, { body: {} }))).status).toBe(502);
  expect(served).toEqual([]);
  expect(refusals.find((refusal) => refusal.reason === 'unauthenticated')?.detail).toBe('CERT_HAS_EXPIRED');
});

it('refuses an altered message: one bit flipped on the wire ends the connection before any handler runs', async () => {
  const proxy = await startProxy(port);
  try {
    const client = clientAs(credentials.of('gateway'), { port: proxy.port });
    await client.call(ACCOUNT, { id: 'default' });
    expect(served).toHaveLength(1);
    proxy.tamperNext();
    expect((await refusedWith(client.call(KEYS, { body: { display_name: 'altered' } }))).status).toBe(502);
    expect(served).toHaveLength(1);
  } finally {
    proxy.close();
  }
});

it('refuses a replayed message: the bytes of a served call, sent again on a new connection, run nothing', async () => {
  const proxy = await startProxy(port);
  try {
    await clientAs(credentials.of('gateway'), { port: proxy.port }).call(KEYS, { body: { display_name: 'once' } });
    expect(served).toHaveLength(1);
    const replay = net.connect(port, '127.0.0.1');
    const answer = await new Promise<string>((resolve) => {
      let received = '';
      replay.on('connect', () => replay.write(Buffer.concat(proxy.recorded)));
      replay.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      replay.on('close', () => resolve(received));
      replay.on('error', () => undefined);
      setTimeout(() => replay.destroy(), 2_000);
    });
    expect(answer).not.toContain('created');
    expect(served).toHaveLength(1);
  } finally {
    proxy.close();
  }
});

it('talks only to the service it meant: the client refuses a server with another service’s certificate', async () => {
  const impostorPort = await freePort();
  const impostor = await startTcpRpcServer(`tcp://127.0.0.1:${impostorPort}`, handlers, {
    credentials: credentials.of('webhooks'),
    onUnexpected: () => undefined,
    onRefused: () => undefined,
  });
  try {
    expect(
      (
        await refusedWith(
          clientAs(credentials.of('gateway'), { port: impostorPort, service: 'identity' }).call(ACCOUNT, {
            id: 'default',
          }),
        )
      ).status,
    ).toBe(502);
    expect(served).toEqual([]);
  } finally {
    await impostor.close();
  }
});

it('listens only on the address its setting names', async () => {
  const namedPort = await freePort();
  const named = await startTcpRpcServer(`tcp://127.0.0.2:${namedPort}`, handlers, {
    credentials: credentials.of('identity'),
    onUnexpected: () => undefined,
    onRefused: () => undefined,
  });
  try {
    const refused = await new Promise<string>((resolve) => {
      const socket = net.connect(namedPort, '127.0.0.1');
      socket.on('connect', () => (socket.destroy(), resolve('connected')));
      socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
    await expect(clientAs(credentials.of('gateway'), { port: namedPort }).call(ACCOUNT, {})).rejects.toThrow();
    const onNamed = new TcpRpcClient({
      host: '127.0.0.2',
      port: namedPort,
      service: 'identity',
      credentials: credentials.of('gateway'),
      timeoutMs: 3_000,
    });
    clients.push(onNamed);
    await expect(onNamed.call(ACCOUNT, { id: 'default' })).resolves.toEqual({ id: 'default' });
  } finally {
    await named.close();
  }
});

it('answers the health probe (scripts/rpc-ping.cjs): the service’s ping, with its own certificate', async () => {
  const probe = (service: string, extra: Record<string, string> = {}) =>
    new Promise<number>((resolve) =>
      execFile(
        process.execPath,
        [path.join(repoRoot, 'scripts/rpc-ping.cjs'), service],
        { env: { ...process.env, ...credentials.env, IDENTITY_RPC_URL: `tcp://0.0.0.0:${port}`, ...extra } },
        (error) => resolve(error ? Number(error.code ?? 1) : 0),
      ),
    );
  expect(await probe('identity')).toBe(0);
  // Its own certificate admits it to its ping only: as webhooks (another service's certificate) it is refused.
  const asWebhooks = {
    RPC_TLS_CERT_FILE: `${credentials.dir}/webhooks.crt`,
    RPC_TLS_KEY_FILE: `${credentials.dir}/webhooks.key`,
  };
  expect(await probe('identity', asWebhooks)).toBe(1);
  expect(refusals).toEqual([
    { reason: 'not-allowed', caller: 'webhooks', pattern: 'identity.ping', remoteAddress: '127.0.0.1' },
  ]);
});
