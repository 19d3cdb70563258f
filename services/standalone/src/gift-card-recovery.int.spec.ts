/**
 * Issue 7 acceptance: a split payment whose service is killed with SIGKILL right after the second of three gift
 * card redemptions. The service runs as `npm start` does (a child process, its own DATA_DIR); the gift card provider
 * (the simulator) lives in this test, behind a proxy that holds the third redemption so the kill lands exactly
 * there. After the restart — no request from anyone — the gift cards service asks again for the third redemption it
 * had claimed (by reference), the recovery timer reverses all three and voids the card; the simulator's ledger shows
 * every balance back where it started. The held third request is then let through, late, as a network could: its
 * reference was redeemed and reversed by then, so the provider answers it as the redemption it already made and
 * charges nothing.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSimulator, type RunningSimulator } from '@switchyard/connectors/src/simulator';
import {
  createTestDataDir,
  removeTestDataDir,
  runCli,
  signToken,
  startTsProcess,
  waitFor,
  type RunningProcess,
} from '@switchyard/testing';

const webhookSecret = 'whsec_recovery_0123456789abcdef';
// Kept for the card data scan when the run keeps its artifacts (CI).
const dataDir = createTestDataDir('gift-recovery');
let simulator: RunningSimulator;
let proxy: Server;
let service: RunningProcess | undefined;
let env: Record<string, string>;
let baseUrl: string;

/** The third redemption request, held by the proxy: its body, and a way to let it through later. */
let redemptions = 0;
let held: { body: Buffer; release: () => Promise<{ status: number; body: string }> } | undefined;

function forward(
  method: string,
  url: string,
  headers: IncomingMessage['headers'],
  body: Buffer,
): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url, simulator.url);
    const outgoing = httpRequest(target, { method, headers: { ...headers, host: target.host } }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () =>
        resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(chunks) }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

async function relay(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  if (req.method === 'POST' && req.url === '/v1/gift-cards/redemptions' && ++redemptions === 3) {
    // Never answered: the service is killed while it waits.
    held = {
      body,
      release: async () => {
        const answer = await forward('POST', req.url ?? '', req.headers, body);
        return { status: answer.status, body: answer.body.toString() };
      },
    };
    return;
  }
  const answer = await forward(req.method ?? 'GET', req.url ?? '/', req.headers, body);
  res.writeHead(answer.status, { 'content-type': answer.headers['content-type'] ?? 'application/json' });
  res.end(answer.body);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function startService(): Promise<RunningProcess> {
  const started = startTsProcess('services/standalone/src/main.ts', env);
  await waitFor(
    'the service ready',
    async () => ((await fetch(`${baseUrl}/readyz`).catch(() => null))?.status === 200 ? true : undefined),
    60_000,
    started.output,
  );
  return started;
}

beforeAll(async () => {
  simulator = await startSimulator({ webhookSecret });
  proxy = createServer((req, res) => {
    relay(req, res).catch((error: unknown) => {
      res.writeHead(502);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  env = {
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    MOCK_CARD_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    MOCK_CARD_WEBHOOK_SECRET: webhookSecret,
    GIFT_CARD_RECOVERY_AFTER_MS: '1000',
    LOG_LEVEL: 'warn',
  };
  service = await startService();
}, 90_000);

afterAll(async () => {
  await service?.kill();
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
  await simulator.stop();
  removeTestDataDir(dataDir);
});

it('kill -9 right after the second redemption: after the restart the reversal completes by itself, nothing stays charged', async () => {
  const created = await runCli(env, 'api-keys', 'create', '--display-name', 'recovery', '--role', 'administrator');
  expect(created.code).toBe(0);
  const key = JSON.parse(created.stdout) as { kid: string; private_key: string };
  const token = await signToken({ kid: key.kid, privateKeyPem: key.private_key, expiresIn: 600 });
  const api = (method: string, url: string, body?: unknown) =>
    fetch(`${baseUrl}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });

  for (const connection of [
    {
      display_name: 'Cards',
      payment_service_definition_id: 'mock-card',
      fields: [],
      accepted_currencies: ['USD'],
      accepted_countries: ['US'],
    },
    {
      display_name: 'Gift cards',
      payment_service_definition_id: 'mock-gift-card',
      fields: [],
      accepted_currencies: ['USD'],
      accepted_countries: ['US'],
    },
  ]) {
    const response = await api('POST', '/payment-services', connection);
    expect(response.status, await response.clone().text()).toBe(201);
  }

  const numbers = ['6060601000000011', '6060601000000022', '6060601000000033'];
  const gift_cards = numbers.map((number) => ({ number, pin: '05000', amount: 1_000 }));
  // The request never gets its answer: the service dies while the third redemption is held.
  const paying = api('POST', '/transactions', {
    amount: 10_000,
    currency: 'USD',
    payment_method: { method: 'card', number: '4111111111111111', expiration_date: '11/30' },
    gift_cards,
  }).catch((error: unknown) => error);
  await waitFor('the third redemption held', async () => held ?? undefined, 30_000, service?.output);
  const balance = async (number: string) => {
    const card = await fetch(`${simulator.url}/v1/gift-cards/cards/${number}`);
    return card.status === 200 ? ((await card.json()) as { balance: number }).balance : null;
  };
  expect(await Promise.all(numbers.map(balance))).toEqual([4_000, 4_000, null]);

  await service?.kill('SIGKILL');
  expect(await paying).toBeInstanceOf(Error);
  service = await startService();

  // Nobody asks for anything: the recovery timer finds the unfinished payment and undoes it.
  const list = async () =>
    (
      (await (await api('GET', '/transactions?limit=5')).json()) as {
        items: { id: string; status: string; error_code: string | null; gift_card_redemptions: { status: string }[] }[];
      }
    ).items;
  const recovered = await waitFor(
    'the payment rolled back',
    async () => {
      const [t] = await list();
      // Voided first, then the process's completion records the error code: wait for both.
      return t && t.status === 'authorization_voided' && t.error_code !== null ? t : undefined;
    },
    30_000,
    service.output,
  );
  expect(recovered.error_code).toBe('operation_canceled');
  // The card's authorization is voided at the provider, not only in our record: nothing stays held on the card.
  expect(simulator.ledger.counts(recovered.id)).toMatchObject({ authorizations: 1, voids: 1, captures: 0 });
  expect(simulator.ledger.findByReference(recovered.id)).toMatchObject({ status: 'voided', capturedAmount: 0 });
  // The third: its request was claimed by the gift cards service and never answered; restarted, the service asks the
  // provider again by reference (charged once), and the roll-back reverses it.
  expect(recovered.gift_card_redemptions.map((r) => r.status)).toEqual(['reversed', 'reversed', 'reversed']);
  for (const number of numbers.slice(0, 2)) {
    const shown = (await (await fetch(`${simulator.url}/v1/gift-cards/cards/${number}`)).json()) as {
      balance: number;
      redemptions: { status: string }[];
    };
    expect(shown).toMatchObject({ balance: 5_000, redemptions: [{ status: 'reversed' }] });
  }

  // The held third request arrives at the provider only now: its reference was redeemed and reversed, so the provider
  // answers it as that redemption and charges nothing.
  const late = await held!.release();
  expect(late.status).toBe(200);
  const third = (await (await fetch(`${simulator.url}/v1/gift-cards/cards/${numbers[2]}`)).json()) as {
    balance: number;
    redemptions: { status: string }[];
  };
  expect(third).toMatchObject({ balance: 5_000, redemptions: [{ status: 'reversed' }] });
}, 120_000);
