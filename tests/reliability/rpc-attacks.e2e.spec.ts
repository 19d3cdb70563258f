/**
 * Attacks on the RPC port of a real identity process (issue 22, item 1), started from its `main.ts` as the
 * distributed runtime starts it. The review's exploit: one unauthenticated TCP message in the NestJS framing
 * (`<length>#<json>`) to identity's port, naming a dashboard user as the actor, answered with a new administrator
 * API key and its private key. Every attack here must get no such answer and leave no key pair in identity's store.
 * The transport's own refusals (forged, altered, replayed, expired, a known caller off its patterns) are in
 * libs/rpc/src/tcp-rpc-auth.int.spec.ts.
 */
import net from 'node:net';
import tls from 'node:tls';
import { apiKeyPairPatterns } from '@switchyard/contracts';
import { IdentityService } from '@switchyard/identity';
import { openServiceStorage } from '@switchyard/readmodel';
import {
  createTestDataDir,
  freePort,
  kafkaBrokersForTests,
  removeTestDataDir,
  rpcCredentialsForTests,
  startTsProcess,
  waitFor,
  type RunningProcess,
  type TestRpcCredentials,
} from '@switchyard/testing';

const ENTRY = 'services/identity/src/main.ts';
let credentials: TestRpcCredentials;
let dataDir: string;
let port: number;
let identity: RunningProcess;

const frame = (message: unknown): string => {
  const json = JSON.stringify(message);
  return `${json.length}#${json}`;
};

/** The exploit's message: create an administrator key named `name`, acting as a dashboard user the sender made up. */
const exploit = (name: string): string =>
  frame({
    pattern: apiKeyPairPatterns.create,
    data: { body: { display_name: name, role_ids: ['administrator'] }, actor: { user_id: 'made-up-user' } },
    id: name,
  });

/** Whatever comes back on `socket` within `ms` (or until it closes). */
function collect(socket: net.Socket, ms: number): Promise<string> {
  return new Promise((resolve) => {
    let received = '';
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(received);
    };
    const timer = setTimeout(done, ms);
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', done);
    socket.on('close', done);
  });
}

async function keyPairNames(): Promise<string[]> {
  const storage = openServiceStorage('identity', { dataDir });
  try {
    const service = new IdentityService({ store: storage.store, db: storage.db });
    await service.catchUp();
    return service.apiKeyPairs.list({ limit: 100 }).items.map((pair) => pair.display_name);
  } finally {
    await storage.close();
  }
}

beforeAll(async () => {
  credentials = await rpcCredentialsForTests();
  dataDir = createTestDataDir('rpc-attacks');
  port = await freePort();
  identity = startTsProcess(ENTRY, {
    DATA_DIR: dataDir,
    IDENTITY_RPC_URL: `tcp://127.0.0.1:${port}`,
    KAFKA_BROKERS: kafkaBrokersForTests().join(','),
    LOG_LEVEL: 'info',
    ...credentials.env,
  });
  await waitFor(
    'identity serving RPC',
    async () => (identity.output().includes('identity service listening') ? true : undefined),
    60_000,
    () => identity.output(),
  );
}, 90_000);

afterAll(async () => {
  await identity?.kill('SIGTERM');
  if (dataDir) removeTestDataDir(dataDir);
});

it('an unauthenticated TCP message to identity creates no API key (the review’s exploit)', async () => {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('connect', () => socket.write(exploit('exploit-plain')));
  const answer = await collect(socket, 3_000);
  expect(answer).not.toContain('private_key');
  expect(answer).not.toContain('"ok":true');
  expect(await keyPairNames()).not.toContain('exploit-plain');
});

it('the same message over TLS without a client certificate creates no API key', async () => {
  const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
  socket.on('secureConnect', () => socket.write(exploit('exploit-tls')));
  const answer = await collect(socket, 3_000);
  expect(answer).not.toContain('private_key');
  expect(await keyPairNames()).not.toContain('exploit-tls');
  // The refused handshake is in identity's log.
  await waitFor(
    'the refusal logged',
    async () => (/"reason":"unauthenticated".*"msg":"RPC call refused"/.test(identity.output()) ? true : undefined),
    5_000,
    () => identity.output(),
  );
});

it('a distributed service does not start without RPC credentials, and says what to set', async () => {
  const bareDataDir = createTestDataDir('rpc-attacks-bare');
  const bare = startTsProcess(ENTRY, {
    DATA_DIR: bareDataDir,
    IDENTITY_RPC_URL: `tcp://127.0.0.1:${await freePort()}`,
    KAFKA_BROKERS: kafkaBrokersForTests().join(','),
  });
  const exited = new Promise<number | null>((resolve) => bare.child.once('exit', (exitCode) => resolve(exitCode)));
  const code = await Promise.race([
    exited,
    new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 30_000)),
  ]);
  await bare.kill('SIGTERM');
  removeTestDataDir(bareDataDir);
  expect(code).not.toBe('running');
  expect(code).not.toBe(0);
  expect(bare.output()).toContain('the identity service needs its RPC credentials');
  expect(bare.output()).toContain('rpc-credentials create --out DIR');
}, 60_000);
