/**
 * Issue 19 item 4: the vault never answers the transactions service a card number or security code. A stored card,
 * a checkout session's card and a card given with the payment all reach the provider's authorization and the 3-D
 * Secure directory server as the vault's aliases, swapped back only by the vault's forwarder (which holds the
 * directory's calls to its declared host). Every argument and answer crossing the `VaultPort` is recorded as JSON (as
 * it would cross RPC) and searched; the simulator decides on the real values (3-D Secure frictionless only for its
 * 3-D Secure test numbers, `no_match` only for the security code 333), so aliases reaching it unswapped would show.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  checkoutSessionCreateSchema,
  transactionsPatterns,
  type CardHandOver,
  type ThreeDsConfiguration,
} from '@switchyard/contracts';
import { ApiError } from '@switchyard/api';
import { EMBEDDED_CALL } from '@switchyard/rpc';
import type { ProviderFetch } from '@switchyard/connectors';
import { startSimulator, type RunningSimulator } from '@switchyard/connectors/src/simulator';
import { SqliteEventStore } from '@switchyard/eventstore';
import { VaultService } from '@switchyard/vault';
import { simulatorDirectory, TransactionsService, type TransactionsVault } from '../transactions-service';
import type { VaultPort } from '../vault-port';

const account = 'shop-aliases';
const webhookSecret = 'whsec_test_0123456789';
/** Frictionless at the simulator's directory server (a US Visa). */
const NUMBER = '4111111111101203';
/** Challenged at the simulator's directory server (a US Visa). */
const CHALLENGE_NUMBER = '4111111111181072';
const CVC = '333';
const OTHER_HOST = '127.0.0.1:9';

let dir: string;
let sqlite: SqliteEventStore;
let vaultStore: SqliteEventStore;
let vault: VaultService;
let simulator: RunningSimulator;
let service: TransactionsService;
/** Every argument and answer of the port, as JSON. */
let crossed: { method: string; way: 'argument' | 'answer'; json: string }[];
/** Port calls whose arguments or answer JSON could not carry (they could not cross RPC). */
let notJson: string[];
/** Every body a connector or the directory handed the forwarder, before the swap, with its URL. */
let handedOver: { url: string; body: string }[];
/** What the service reported as failed outside a request's answer (its log, in a real process). */
let backgroundErrors: unknown[];

/** Whether a value holds anything JSON cannot carry across RPC (a function, a class instance other than a Date). */
function jsonUnsafe(value: unknown): boolean {
  if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') return true;
  if (value === null || typeof value !== 'object' || value instanceof Date) return false;
  if (Array.isArray(value)) return value.some(jsonUnsafe);
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return true;
  return Object.values(value).some(jsonUnsafe);
}

/** The port as the transactions service sees it, every call recorded as it would cross RPC. */
function recorded(port: VaultPort): VaultPort {
  return new Proxy(port, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        for (const arg of args) {
          if (jsonUnsafe(arg)) notJson.push(`${String(property)} argument`);
          crossed.push({ method: String(property), way: 'argument', json: JSON.stringify(arg) });
        }
        const answer = await value.apply(target, args);
        if (jsonUnsafe(answer)) notJson.push(`${String(property)} answer`);
        crossed.push({ method: String(property), way: 'answer', json: JSON.stringify(answer) ?? '' });
        return answer;
      };
    },
  });
}

/** The transactions service over `vault`, its port recorded, its card connection the simulator's. */
function transactionsServiceOver(vault: VaultService): TransactionsService {
  const transactionsVault: TransactionsVault = {
    port: recorded(vault.port as unknown as VaultPort),
    cardForwarding: vault.cardForwarding,
    keysForTransactions: () => vault.keysForTransactions(),
    useConnections: (connections) => vault.useConnections(connections),
  };
  return new TransactionsService({
    store: sqlite,
    db: sqlite.database,
    vault: transactionsVault,
    providers: { publicBaseUrl: () => 'http://127.0.0.1:9', mockCard: { baseUrl: simulator.url, webhookSecret } },
    directory: simulatorDirectory({ baseUrl: simulator.url }),
    onBackgroundError: (error) => backgroundErrors.push(error),
  });
}

const threeDsConfiguration: ThreeDsConfiguration = {
  type: 'merchant-account.three-ds-configuration',
  id: '00000000-0000-4000-8000-000000000001',
  merchant_account_id: account,
  merchant_acquirer_bin: '400000',
  merchant_acquirer_id: 'acq-1',
  merchant_name: 'Switchyard Test Shop',
  merchant_country_code: 'GB',
  merchant_category_code: '5999',
  merchant_url: 'https://shop.example',
  scheme: null,
  currency: null,
  metadata: {},
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
};

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-aliases-'));
  sqlite = new SqliteEventStore(path.join(dir, 'transactions.db'));
  simulator = await startSimulator({ webhookSecret });
  vaultStore = new SqliteEventStore(path.join(dir, 'vault.db'));
  vault = new VaultService({ store: vaultStore, db: vaultStore.database, vaultKey: Buffer.alloc(32, 7) });
  crossed = [];
  notJson = [];
  handedOver = [];
  backgroundErrors = [];
  const forwarder = vault.slices.forwarder;
  const realFetchFor = forwarder.fetchFor.bind(forwarder);
  vi.spyOn(forwarder, 'fetchFor').mockImplementation((merchantAccountId, hosts): ProviderFetch => {
    const send = realFetchFor(merchantAccountId, hosts);
    return (input, init) => {
      if (typeof init?.body === 'string') handedOver.push({ url: String(input), body: init.body });
      return send(input, init);
    };
  });
  service = transactionsServiceOver(vault);
  await service.catchUp();
  await service.paymentServices.create(account, {
    display_name: 'Cards',
    payment_service_definition_id: 'mock-card',
    fields: [{ key: 'merchant_id', value: 'm-1' }],
    accepted_currencies: ['USD'],
    accepted_countries: ['US'],
    three_d_secure_enabled: true,
  } as never);
});

afterEach(async () => {
  // Every argument and answer of the port can cross RPC as JSON (no callback, no class instance).
  expect(notJson).toEqual([]);
  vi.restoreAllMocks();
  await service.stop();
  await simulator.stop();
  await sqlite.close();
  await vaultStore.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const authorize = (paymentMethod: Record<string, unknown>, configurations = [threeDsConfiguration]) =>
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
    three_ds_configurations: configurations,
  });

/** A payment challenged at the simulator's ACS, and the buyer through the challenge: the token of their return. */
async function passedChallenge() {
  const created = await authorize({
    method: 'card',
    number: CHALLENGE_NUMBER,
    expiration_date: '12/30',
    security_code: CVC,
    redirect_url: 'https://shop.example/return',
  });
  expect(created.status).toBe('buyer_approval_pending');
  const approvalUrl = (created.payment_method as { approval_url: string }).approval_url;
  const submitted = await fetch(approvalUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'result=Y',
    redirect: 'manual',
  });
  const token = new URL(submitted.headers.get('location') ?? '').searchParams.get('token') ?? '';
  return { created, token };
}

/** The buyer's browser back at the return URL, as the gateway hands it to the service. */
const buyerReturn = async (transactionId: string, token: string) =>
  (await service.transactions.rpcHandlers()[transactionsPatterns.buyerReturn]!(
    { transaction_id: transactionId, token },
    EMBEDDED_CALL,
  )) as { location: string | null; transaction_status: string };

/** What the vault answered the transactions service: never the number or the security code. */
function expectNoCardAnswered(): void {
  const answers = crossed.filter((c) => c.way === 'answer');
  expect(answers.length).toBeGreaterThan(0);
  for (const answer of answers) {
    expect(answer.json, answer.method).not.toContain(NUMBER);
    expect(answer.json, answer.method).not.toContain(`"${CVC}"`);
  }
}

/** The 3-D Secure directory and the provider got aliases, through the forwarder. */
function expectAliasesHandedOver(): void {
  const directory = handedOver.find((h) => h.url.includes('/v1/3ds/authentications'));
  expect(directory, 'the directory call goes through the forwarder').toBeDefined();
  expect(directory?.body).toMatch(/"number":"tok[0-9A-Za-z]{32}"/);
  const authorization = handedOver.find((h) => h.body.includes('"payment_instrument"'));
  expect(authorization?.body).toMatch(/"number":"tok[0-9A-Za-z]{32}"/);
  expect(authorization?.body).toMatch(/"security_code":"tok[0-9A-Za-z]{32}"/);
  for (const h of handedOver) {
    expect(h.body).not.toContain(NUMBER);
    expect(h.body).not.toContain(`"${CVC}"`);
  }
}

/**
 * The security code alias the vault answered `storeCard`, and that it is forgotten (the authorization is done) a
 * moment after the answer (`DEFAULT_FORGET_AFTER_MS`).
 */
async function expectSecurityCodeForgotten(): Promise<void> {
  const stored = crossed.find((c) => c.method === 'storeCard' && c.way === 'answer');
  const alias = (JSON.parse(stored?.json ?? '{}') as { securityCodeAlias?: string }).securityCodeAlias;
  expect(alias).toMatch(/^tok[0-9A-Za-z]{32}$/);
  await vi.waitFor(() => expect(() => vault.slices.cardAliases.resolve(account, alias as string)).toThrow(/unknown/), {
    timeout: 2_000,
  });
}

it('the security codes of the payments of one moment are forgotten together: one call to the vault', async () => {
  const payments = await Promise.all(
    ['12/30', '11/30', '10/30'].map((expiry) =>
      authorize({ method: 'card', number: NUMBER, expiration_date: expiry, security_code: CVC }, []),
    ),
  );
  for (const payment of payments) expect(payment).toMatchObject({ status: 'authorization_succeeded' });
  const aliases = crossed
    .filter((c) => c.method === 'storeCard' && c.way === 'answer')
    .map((c) => (JSON.parse(c.json) as { securityCodeAlias: string }).securityCodeAlias);
  expect(aliases).toHaveLength(3);
  await vi.waitFor(() => expect(crossed.filter((c) => c.method === 'forgetSecurityCodes')).toHaveLength(2), {
    timeout: 2_000,
  });
  const [forgets] = crossed.filter((c) => c.method === 'forgetSecurityCodes' && c.way === 'argument');
  expect(JSON.parse(forgets!.json)).toEqual(
    expect.arrayContaining(aliases.map((alias) => ({ merchantAccountId: account, alias }))),
  );
  for (const alias of aliases) expect(() => vault.slices.cardAliases.resolve(account, alias)).toThrow(/unknown/);
});

it('the port has no way to reveal a card to this service', () => {
  expect('revealCard' in vault.port).toBe(false);
  expect(typeof (vault.port as unknown as Record<string, unknown>).cardAliases).toBe('function');
});

it('a stored card: the number is neither asked for nor answered; 3-D Secure and the provider get aliases', async () => {
  const stored = await vault.slices.paymentMethods.create({
    merchant_account_id: account,
    body: { method: 'card', number: NUMBER, expiration_date: '12/30' },
  } as never);
  const transaction = await authorize({ method: 'id', id: stored.id, security_code: CVC });
  expect(transaction).toMatchObject({ status: 'authorization_succeeded', cvv_response_code: 'no_match' });
  expect(transaction.three_d_secure).toMatchObject({ status: 'complete' });
  expectNoCardAnswered();
  for (const c of crossed.filter((c) => c.way === 'argument')) expect(c.json, c.method).not.toContain(NUMBER);
  expectAliasesHandedOver();
});

it("a checkout session's card: claimed as its id and an alias of its security code", async () => {
  const session = await vault.slices.checkoutSessions.create({
    merchant_account_id: account,
    body: checkoutSessionCreateSchema.parse({}),
  });
  await vault.slices.checkoutSessions.attachFields({
    checkout_session_id: session.id,
    body: { payment_method: { method: 'card', number: NUMBER, expiration_date: '12/30', security_code: CVC } },
  } as never);
  const transaction = await authorize({ method: 'checkout-session', id: session.id });
  expect(transaction).toMatchObject({ status: 'authorization_succeeded', cvv_response_code: 'no_match' });
  expect(transaction.three_d_secure).toMatchObject({ status: 'complete' });
  expectNoCardAnswered();
  for (const c of crossed) {
    expect(c.json, c.method).not.toContain(NUMBER);
    expect(c.json, c.method).not.toContain(`"${CVC}"`);
  }
  expectAliasesHandedOver();
});

it('a card given with the payment: the vault keeps it and answers its id and summary only', async () => {
  const transaction = await authorize({ method: 'card', number: NUMBER, expiration_date: '12/30', security_code: CVC });
  expect(transaction).toMatchObject({ status: 'authorization_succeeded', cvv_response_code: 'no_match' });
  expect(transaction.three_d_secure).toMatchObject({ status: 'complete' });
  expectNoCardAnswered();
  expectAliasesHandedOver();
  await expectSecurityCodeForgotten();
});

it("the directory's calls are held to its declared host", async () => {
  await service.stop();
  service = new TransactionsService({
    store: sqlite,
    db: sqlite.database,
    vault,
    providers: { publicBaseUrl: () => 'http://127.0.0.1:9', mockCard: { baseUrl: simulator.url, webhookSecret } },
    // Declares another host than the one it calls: the forwarder refuses, nothing reaches the directory.
    directory: { ...simulatorDirectory({ baseUrl: simulator.url }), hosts: [OTHER_HOST] },
  });
  await service.catchUp();
  const transaction = await authorize({ method: 'card', number: NUMBER, expiration_date: '12/30', security_code: CVC });
  expect(transaction.three_d_secure).toMatchObject({ status: 'error' });
  expect(handedOver.some((h) => h.url.includes('/v1/3ds/'))).toBe(true);
  expect(vault.slices.forwarder.fetchFor).toHaveBeenCalledWith(account, [OTHER_HOST]);
});

it('a challenge: the vault keeps the security code past the alias TTL until the buyer is back', async () => {
  await service.stop();
  await vault.stop();
  // Aliases live 300 ms; the buyer takes longer at the ACS.
  vault = new VaultService({
    store: vaultStore,
    db: vaultStore.database,
    vaultKey: Buffer.alloc(32, 7),
    cardAliasTtlMs: 300,
  });
  const forwarder = vault.slices.forwarder;
  const realFetchFor = forwarder.fetchFor.bind(forwarder);
  vi.spyOn(forwarder, 'fetchFor').mockImplementation((merchantAccountId, hosts): ProviderFetch => {
    const send = realFetchFor(merchantAccountId, hosts);
    return (input, init) => {
      if (typeof init?.body === 'string') handedOver.push({ url: String(input), body: init.body });
      return send(input, init);
    };
  });
  service = transactionsServiceOver(vault);
  await service.catchUp();
  const { created, token } = await passedChallenge();
  await new Promise((resolve) => setTimeout(resolve, 500));
  await buyerReturn(created.id, token);
  await service.catchUp();
  const transaction = await service.transactions.get(account, created.id);
  expect(transaction).toMatchObject({ status: 'authorization_succeeded', cvv_response_code: 'no_match' });
  for (const answer of crossed.filter((c) => c.way === 'answer')) {
    expect(answer.json, answer.method).not.toContain(CHALLENGE_NUMBER);
    expect(answer.json, answer.method).not.toContain(`"${CVC}"`);
  }
  for (const h of handedOver) expect(h.body).not.toContain(CHALLENGE_NUMBER);
  await expectSecurityCodeForgotten();
});

it("the vault lost at the buyer's return, before the authorization went out: the payment fails at once, and the buyer is sent back with it", async () => {
  const { created, token } = await passedChallenge();
  // The vault process dies as the card's aliases for the authorization are asked for.
  vi.spyOn(vault.port, 'cardAliases').mockRejectedValueOnce(
    ApiError.badGateway(new Error('the vault closed the connection')),
  );
  const returned = await buyerReturn(created.id, token);
  // Nothing can have been charged: failed now, not left `processing` for the hold timer and reconciliation.
  expect(returned.transaction_status).toBe('authorization_failed');
  expect(returned.location).toContain('transaction_status=authorization_failed');
  const transaction = await service.transactions.get(account, created.id);
  expect(transaction).toMatchObject({ status: 'authorization_failed', error_code: 'internal_error' });
  expect(transaction.raw_response_description).toContain('not sent to the payment service');
  expect(handedOver.some((h) => h.body.includes('"payment_instrument"'))).toBe(false);
  // Why it failed is reported (logged) though the buyer's return answered.
  expect(backgroundErrors).toContainEqual(expect.objectContaining({ status: 502 }));
  // A second return (the buyer's back button) changes nothing and asks no provider.
  const again = await buyerReturn(created.id, token);
  expect(again.transaction_status).toBe('authorization_failed');
  expect(handedOver.some((h) => h.body.includes('"payment_instrument"'))).toBe(false);
  await expectSecurityCodeForgotten();
});

describe('a card handed over by the gateway', () => {
  const handOverCard = () =>
    vault.port.handOverCard({
      merchant_account_id: account,
      card: { number: NUMBER, expiration_date: '12/30', security_code: CVC },
    });
  const handOverAndAuthorize = async () => authorizeHandedOver(await handOverCard());
  const authorizeHandedOver = (
    handOver: CardHandOver,
    configurations: ThreeDsConfiguration[] = [],
    idempotencyKey?: string,
  ) =>
    service.transactions.create({
      merchant_account_id: account,
      ...(idempotencyKey ? { idempotency_key: idempotencyKey } : {}),
      body: {
        amount: 10_000,
        currency: 'USD',
        payment_method: { method: 'card', expiration_date: '12/30' } as never,
        intent: 'authorize',
        store: false,
        merchant_initiated: false,
        is_subsequent_payment: false,
        is_amount_estimated: false,
      },
      card_hand_over: handOver,
      three_ds_configurations: configurations,
    });
  /** Calls of a port method (one answer each). */
  const calls = (method: string) => crossed.filter((c) => c.method === method && c.way === 'answer').length;

  it('is taken with its first aliases, which the provider call uses: no second call for aliases', async () => {
    const transaction = await handOverAndAuthorize();
    expect(transaction).toMatchObject({ status: 'authorization_succeeded', cvv_response_code: 'no_match' });
    expect(calls('takeHandedOverCard')).toBe(1);
    expect(calls('cardAliases')).toBe(0);
    const authorization = handedOver.find((h) => h.body.includes('"payment_instrument"'));
    expect(authorization?.body).toMatch(/"security_code":"tok[0-9A-Za-z]{32}"/);
    expectNoCardAnswered();
  });

  it('comes with its summary and first aliases: the payment is decided and recorded while the vault takes it, and only the provider call waits for the take', async () => {
    const handOver = await handOverCard();
    expect(handOver.card).toMatchObject({ bin: NUMBER.slice(0, 6), binPrefix: NUMBER.slice(0, 8), last4: '1203' });
    expect(handOver.aliases?.number).toMatch(/^tok[0-9A-Za-z]{32}$/);
    expect(JSON.stringify(handOver)).not.toContain(NUMBER);
    expect(JSON.stringify(handOver)).not.toContain(`"${CVC}"`);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const take = vault.port.takeHandedOverCard.bind(vault.port);
    vi.spyOn(vault.port, 'takeHandedOverCard').mockImplementation(async (...args) => {
      await held;
      return take(...args);
    });
    const payment = authorizeHandedOver(handOver);
    await vi.waitFor(async () => expect((await sqlite.readAll()).map((e) => e.type)).toContain('TransactionCreated'), {
      timeout: 3_000,
    });
    expect(handedOver).toEqual([]);
    release();
    expect(await payment).toMatchObject({ status: 'authorization_succeeded', cvv_response_code: 'no_match' });
    expect(calls('takeHandedOverCard')).toBe(1);
    expect(calls('cardAliases')).toBe(0);
  });

  it.each([
    ['the provider', []],
    ['the 3-D Secure directory', [threeDsConfiguration]],
  ])('is not sent to %s when the vault no longer has it at the take', async (_, configurations) => {
    const handOver = await handOverCard();
    vi.spyOn(vault.port, 'takeHandedOverCard').mockResolvedValue(null);
    await expect(authorizeHandedOver(handOver, configurations)).rejects.toMatchObject({ status: 502 });
    expect(handedOver).toEqual([]);
  });

  it('lost by the vault at the take after the payment was recorded: the payment fails at once, and a retry with the same Idempotency-Key answers it and makes no second one', async () => {
    // The vault process dies during the take, which runs beside the payment's first append (the crash suite's case).
    vi.spyOn(vault.port, 'takeHandedOverCard').mockRejectedValueOnce(
      ApiError.badGateway(new Error('the vault closed the connection')),
    );
    await expect(authorizeHandedOver(await handOverCard(), [], 'order-7007')).rejects.toMatchObject({ status: 502 });
    const recorded = async () =>
      (await sqlite.readAll()).filter((e) => e.type === 'TransactionCreated').map((e) => e.streamId);
    expect(await recorded()).toHaveLength(1);

    // The client retries; the gateway hands the same card over again.
    const retried = await authorizeHandedOver(await handOverCard(), [], 'order-7007');
    expect(await recorded()).toEqual([`transaction-${retried.id}`]);
    // No provider was asked: the payment is failed now, not left `processing` for reconciliation to settle.
    expect(retried).toMatchObject({ status: 'authorization_failed', error_code: 'internal_error' });
    expect(retried.raw_response_description).toContain('not sent to the payment service');
    expect(handedOver).toEqual([]);
  });

  it('asks for fresh aliases when those issued with the card would not outlive the set-up', async () => {
    await service.stop();
    await vaultStore.close();
    vaultStore = new SqliteEventStore(path.join(dir, 'vault.db'));
    // Issued for 5 s: less than the 10 s a provider call needs left.
    vault = new VaultService({
      store: vaultStore,
      db: vaultStore.database,
      vaultKey: Buffer.alloc(32, 7),
      cardAliasTtlMs: 5_000,
    });
    service = transactionsServiceOver(vault);
    await service.catchUp();
    const transaction = await handOverAndAuthorize();
    expect(transaction).toMatchObject({ status: 'authorization_succeeded', cvv_response_code: 'no_match' });
    expect(calls('cardAliases')).toBe(1);
  });
});
