/**
 * What the transaction HTTP specs share: the embedded runtime listening on a loopback port (the simulator calls the
 * provider-notification endpoint back over real HTTP), one admin token, merchant accounts and connections, the
 * test cards, bounded polling, and a tap on every response body so a spec can prove the card number never left.
 */
import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '@switchyard/connectors/src/simulator';
import { signToken } from '@switchyard/testing';
import request from 'supertest';
import { startEmbeddedFixture, type EmbeddedFixture } from './embedded.fixture';

export const ACCOUNT_HEADER = 'x-service-merchant-account-id';
export const isoWithOffset = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** The reference's 3-D Secure test cards (frictionless and challenge) and one whose issuer the sample BIN data does not know. */
export const THREE_DS_PANS = {
  frictionlessVisaUS: '4111111111101203',
  frictionlessMastercardGB: '5200000000001203',
  challengeVisaUS: '4111111111181072',
  challengeMastercardDE: '5240000000001072',
  unknownIssuerVisa: '4000056655665556',
} as const;

/** Full test PANs the specs send; none may ever be stored or answered. */
export const TEST_PANS = [
  '4111111111111111',
  '5555555555554444',
  '378282246310005',
  ...Object.values(THREE_DS_PANS),
] as const;
export const card = (overrides: Record<string, unknown> = {}) => ({
  method: 'card',
  number: TEST_PANS[0],
  expiration_date: '11/30',
  security_code: '123',
  ...overrides,
});

type Body = Record<string, unknown>;

export interface Harness {
  readonly fixture: EmbeddedFixture;
  readonly simulator: RunningSimulator;
  /** `http://127.0.0.1:<port>` of the listening gateway. */
  readonly baseUrl: string;
  /** A supertest agent on the listening gateway. */
  http(): request.Agent;
  /** Authorization (and merchant account, when given) headers. */
  headers(account?: string): Record<string, string>;
  /** Every response body so far that contained a test PAN (method, url). */
  readonly leaks: string[];
  createAccount(id: string, settings?: Body): Promise<void>;
  /** A mock-card connection of the account; returns its id. */
  createConnection(account: string, overrides?: Body): Promise<string>;
  /** A 3-D Secure configuration of the account for every scheme and currency. */
  createThreeDsConfiguration(account: string, overrides?: Body): Promise<void>;
  /** A card-transaction flow rule of the account; returns its id. */
  createFlowRule(account: string, rule: Body): Promise<string>;
  /** POST /transactions, expecting 201; the response body. */
  authorize(
    account: string,
    body?: Body,
    extraHeaders?: Record<string, string>,
  ): Promise<Body & { id: string; status: string }>;
  get(account: string, id: string): Promise<Body & { id: string; status: string }>;
  /** Polls GET /transactions/{id} until the predicate holds; fails after `timeoutMs`. */
  waitFor(
    account: string,
    id: string,
    predicate: (t: Body) => boolean,
    timeoutMs?: number,
  ): Promise<Body & { id: string; status: string }>;
  /** Every file under the data directory (WAL and journal files included) that holds a test PAN. */
  filesWithPan(): string[];
  stop(): Promise<void>;
}

export interface HarnessOptions {
  /**
   * Runs the simulator outside the embedded runtime (MOCK_CARD_URL) so its timings can be set: `settleDelayMs` is how
   * long a pending authorization (500001, 500002, 500005) stays pending. Default: the embedded simulator (50 ms).
   */
  readonly settleDelayMs?: number;
  /** Further simulator options (an outside simulator is started when given). */
  readonly simulator?: Partial<Omit<SimulatorOptions, 'webhookSecret'>>;
  /** Settings of the embedded runtime (e.g. BUYER_APPROVAL_WINDOW_MS). */
  readonly env?: Readonly<Record<string, string>>;
}

/** The outside simulator's notification secret, so a spec can sign a notification of its own. */
export const HARNESS_WEBHOOK_SECRET = 'whsec_harness_0123456789abcdef';

export async function startHarness(name: string, options: HarnessOptions = {}): Promise<Harness> {
  const webhookSecret = HARNESS_WEBHOOK_SECRET;
  const outside = options.settleDelayMs !== undefined || options.simulator !== undefined;
  const external = outside
    ? await startSimulator({
        webhookSecret,
        ...options.simulator,
        ...(options.settleDelayMs !== undefined ? { settleDelayMs: options.settleDelayMs } : {}),
      })
    : null;
  const env: Record<string, string> = {
    ...options.env,
    ...(external ? { MOCK_CARD_URL: external.url, MOCK_CARD_WEBHOOK_SECRET: webhookSecret } : {}),
  };
  const fixture = await startEmbeddedFixture(name, env, { listen: true });
  const simulator = external ?? fixture.service.simulator;
  if (!simulator) throw new Error('no simulator');
  const server = fixture.service.gateway.app.getHttpServer();
  const address = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${address.port}`;

  // Tee every response body: a later check proves no test PAN was ever answered.
  const leaks: string[] = [];
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    const keep = (chunk: unknown) => {
      if (typeof chunk === 'string') chunks.push(Buffer.from(chunk));
      else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    };
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      keep(chunk);
      return write(chunk, ...rest);
    }) as typeof res.write;
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      if (typeof chunk !== 'function') keep(chunk);
      const body = Buffer.concat(chunks);
      if (TEST_PANS.some((pan) => body.includes(pan))) leaks.push(`${req.method} ${req.url}`);
      return end(chunk, ...rest);
    }) as typeof res.end;
  });

  const created = await fixture.service.identity.apiKeyPairs.create(
    { display_name: 'admin', roles: ['administrator'] },
    { kind: 'operator' },
  );
  const token = await signToken({ kid: created.kid, privateKeyPem: created.private_key!, expiresIn: 3600 });
  const http = () => request.agent(baseUrl);
  const headers = (account?: string) => ({
    authorization: `Bearer ${token}`,
    ...(account ? { [ACCOUNT_HEADER]: account } : {}),
  });

  const get = async (account: string, id: string) =>
    (await http().get(`/transactions/${id}`).set(headers(account)).expect(200)).body;

  return {
    fixture,
    simulator,
    baseUrl,
    http,
    headers,
    leaks,
    async createAccount(id, settings = {}) {
      await http()
        .post('/merchant-accounts')
        .set(headers())
        .send({ id, display_name: `Account ${id}`, ...settings })
        .expect(201);
    },
    async createConnection(account, overrides = {}) {
      const response = await http()
        .post('/payment-services')
        .set(headers(account))
        .send({
          display_name: 'Card simulator',
          payment_service_definition_id: 'mock-card',
          fields: [{ key: 'merchant_id', value: `sim-${account}` }],
          accepted_currencies: ['USD', 'EUR'],
          accepted_countries: ['US', 'DE'],
          ...overrides,
        })
        .expect(201);
      return response.body.id as string;
    },
    async createThreeDsConfiguration(account, overrides = {}) {
      await http()
        .post(`/merchant-accounts/${account}/three-ds-configurations`)
        .set(headers())
        .send({
          merchant_acquirer_bin: '400000',
          merchant_acquirer_id: `acq-${account}`,
          merchant_name: 'Switchyard Test Shop',
          merchant_country_code: 'GB',
          merchant_category_code: '5999',
          merchant_url: 'https://shop.example',
          ...overrides,
        })
        .expect(201);
    },
    async createFlowRule(account, rule) {
      const response = await http().post('/flows/card-transaction/rules').set(headers(account)).send(rule);
      if (response.status !== 201)
        throw new Error(`POST /flows/card-transaction/rules answered ${response.status}: ${response.text}`);
      return response.body.id as string;
    },
    async authorize(account, body = {}, extraHeaders = {}) {
      const response = await http()
        .post('/transactions')
        .set(headers(account))
        .set(extraHeaders)
        .send({ amount: 10_000, currency: 'USD', payment_method: card(), ...body });
      if (response.status !== 201) throw new Error(`POST /transactions answered ${response.status}: ${response.text}`);
      return response.body;
    },
    get,
    async waitFor(account, id, predicate, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const t = await get(account, id);
        if (predicate(t)) return t;
        if (Date.now() > deadline)
          throw new Error(
            `transaction ${id} did not reach the expected state in ${timeoutMs} ms: ${JSON.stringify(t)}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    filesWithPan() {
      const found: string[] = [];
      const walk = (dir: string) => {
        for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
          const file = path.join(dir, entry.name);
          if (entry.isDirectory()) walk(file);
          else if (entry.isFile()) {
            const bytes = fs.readFileSync(file);
            if (TEST_PANS.some((pan) => bytes.includes(pan))) found.push(file);
          }
        }
      };
      walk(fixture.dataDir);
      return found;
    },
    async stop() {
      await fixture.stop();
      await external?.stop();
    },
  };
}

/** The data directory holds SQLite files and their -wal/-shm companions; the check must have read some. */
export function dataFiles(harness: Harness): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else files.push(file);
    }
  };
  walk(harness.fixture.dataDir);
  return files;
}
