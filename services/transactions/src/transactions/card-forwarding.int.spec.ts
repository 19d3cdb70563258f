/**
 * Issue 19 item 4, authorization: the connector builds its request with the vault's card aliases, never the card,
 * and its call goes through the vault's outbound forwarder, which puts the real values in (the simulator answers
 * `no_match` only for the real security code 333). What the connector hands over is recorded by wrapping the
 * forwarder's fetch; the provider is the simulator over HTTP.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type ProviderFetch } from '@switchyard/connectors';
import { startSimulator, type RunningSimulator } from '@switchyard/connectors/src/simulator';
import { SqliteEventStore } from '@switchyard/eventstore';
import { loadSettings } from '@switchyard/config';
import { VaultService, vaultOptionsFrom } from '@switchyard/vault';
import { TransactionsService } from '../transactions-service';

const account = 'shop-forwarding';
const webhookSecret = 'whsec_test_0123456789';
const NUMBER = '4111111111111111';
const CVC = '333';

let dir: string;
let sqlite: SqliteEventStore;
let vaultStore: SqliteEventStore;
let vault: VaultService;
let simulator: RunningSimulator;
let service: TransactionsService;
/** The bodies the connector gave the forwarder, before the swap. */
let handedOver: string[];
/** The forwarder's own `fetchFor`, unwrapped. */
let realFetchFor: (merchantAccountId: string, hosts: readonly string[]) => ProviderFetch;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-forwarding-'));
  sqlite = new SqliteEventStore(path.join(dir, 'transactions.db'));
  simulator = await startSimulator({ webhookSecret });
  vaultStore = new SqliteEventStore(path.join(dir, 'vault.db'));
  vault = new VaultService({ store: vaultStore, db: vaultStore.database, vaultKey: Buffer.alloc(32, 7) });
  service = new TransactionsService({
    store: sqlite,
    db: sqlite.database,
    vault,
    providers: { publicBaseUrl: () => 'http://127.0.0.1:9', mockCard: { baseUrl: simulator.url, webhookSecret } },
  });
  handedOver = [];
  const forwarder = vault.slices.forwarder;
  realFetchFor = forwarder.fetchFor.bind(forwarder);
  vi.spyOn(forwarder, 'fetchFor').mockImplementation((merchantAccountId, hosts): ProviderFetch => {
    const send = realFetchFor(merchantAccountId, hosts);
    return (input, init) => {
      if (typeof init?.body === 'string') handedOver.push(init.body);
      return send(input, init);
    };
  });
  await service.catchUp();
  await service.paymentServices.create(account, {
    display_name: 'Cards',
    payment_service_definition_id: 'mock-card',
    fields: [{ key: 'merchant_id', value: 'm-1' }],
    accepted_currencies: ['USD'],
    accepted_countries: ['US'],
  });
});

afterEach(async () => {
  vi.restoreAllMocks();
  await service.stop();
  await simulator.stop();
  await sqlite.close();
  await vaultStore.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const authorize = (paymentMethod: Record<string, unknown>) =>
  service.transactions.create({
    merchant_account_id: account,
    body: {
      amount: 10_000,
      currency: 'USD',
      payment_method: paymentMethod as never,
      intent: 'authorize',
      store: false,
      merchant_initiated: false,
      is_subsequent_payment: false,
      is_amount_estimated: false,
    },
  });

it('a raw card: the connector gets aliases, the provider the card (its security code answered no_match)', async () => {
  const transaction = await authorize({ method: 'card', number: NUMBER, expiration_date: '12/30', security_code: CVC });
  expect(transaction).toMatchObject({ status: 'authorization_succeeded', cvv_response_code: 'no_match' });
  expect(vault.slices.forwarder.fetchFor).toHaveBeenCalledWith(account, [new URL(simulator.url).host]);
  const authorization = handedOver.find((body) => body.includes('"payment_instrument"'));
  expect(authorization).toBeDefined();
  expect(authorization).toMatch(/"number":"tok[0-9A-Za-z]{32}"/);
  expect(authorization).toMatch(/"security_code":"tok[0-9A-Za-z]{32}"/);
  for (const body of handedOver) {
    expect(body).not.toContain(NUMBER);
    expect(body).not.toContain(`"${CVC}"`);
  }
});

it('a stored card (decrypted by the vault) goes as aliases too', async () => {
  const stored = await vault.slices.paymentMethods.create({
    merchant_account_id: account,
    body: { method: 'card', number: NUMBER, expiration_date: '12/30' },
  } as never);
  const transaction = await authorize({ method: 'id', id: stored.id, security_code: CVC });
  expect(transaction).toMatchObject({ status: 'authorization_succeeded', cvv_response_code: 'no_match' });
  expect(handedOver.some((body) => /"number":"tok[0-9A-Za-z]{32}"/.test(body))).toBe(true);
  for (const body of handedOver) expect(body).not.toContain(NUMBER);
});

it('a call the forwarder refuses is a failure of a call not sent, never an unknown outcome', async () => {
  // The connector's request carries a token shaped like an alias the vault never issued: refused, nothing sent.
  vi.mocked(vault.slices.forwarder.fetchFor).mockImplementation((merchantAccountId, hosts): ProviderFetch => {
    const send = realFetchFor(merchantAccountId, hosts);
    return (input, init) =>
      send(input, {
        ...init,
        headers: { ...(init?.headers as Record<string, string>), 'x-trace': `tok${'Z9'.repeat(16)}` },
      });
  });
  const transaction = await authorize({ method: 'card', number: NUMBER, expiration_date: '12/30', security_code: CVC });
  expect(simulator.ledger.all()).toHaveLength(0);
  expect(transaction.status).toBe('authorization_failed');
});

it('aliases live as long as the vault is told (CARD_ALIAS_TTL_MS, through vaultOptionsFrom)', async () => {
  expect(vaultOptionsFrom(loadSettings({ DATA_DIR: dir } as NodeJS.ProcessEnv)).cardAliasTtlMs).toBe(60_000);
  const { cardAliasTtlMs } = vaultOptionsFrom(
    loadSettings({ DATA_DIR: dir, CARD_ALIAS_TTL_MS: '2500' } as NodeJS.ProcessEnv),
  );
  expect(cardAliasTtlMs).toBe(2500);
  const store = new SqliteEventStore(path.join(dir, 'short.db'));
  const short = new VaultService({ store, db: store.database, vaultKey: Buffer.alloc(32, 7), cardAliasTtlMs });
  try {
    const before = Date.now();
    const { expiresAt } = short.slices.cardAliases.issue(account, { number: NUMBER });
    expect(expiresAt.getTime()).toBeGreaterThanOrEqual(before + 2500);
    expect(expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 2500);
  } finally {
    await short.stop();
    await store.close();
  }
});
