/**
 * The network tokens slice over a real store and read model, beside the payment services slice, against the
 * simulator's token service over real HTTP (`SimulatorTokenServiceProvider`, with a switch to take it down), with the
 * payment methods and merchant account settings it reads played by fakes: API provisioning and its rules, the token's
 * life, automatic provisioning when a card is stored, deletion with the payment method, the token for a transaction,
 * and no card number or clear token number in any event.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { ApiError } from '@switchyard/api';
import {
  ConnectorUnavailableError,
  mockCardDefinition,
  SimulatorTokenServiceProvider,
  type TokenProvisionRequest,
  type TokenServiceProvider,
} from '@switchyard/connectors';
import { startSimulator, type RunningSimulator } from '@switchyard/connectors/src/simulator';
import type { MerchantAccount } from '@switchyard/contracts';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { ServiceHost } from '@switchyard/service';
import { PaymentServices } from '@switchyard/transactions/src/payment-services/payment-services.slice';
import type { TokenizablePaymentMethod } from './network-token-eligibility';
import { NetworkTokens, type NetworkTokenPaymentMethods, type NetworkTokensDependencies } from './network-tokens.slice';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';

const VISA = '4111111111111111';
const MASTERCARD = '5555555555554444';
const DISCOVER = '6011111111111117';
const NOT_ELIGIBLE = '4000000000000002';
const CARDS = [VISA, MASTERCARD, DISCOVER, NOT_ELIGIBLE];

/** Identity's merchant account, network tokens on unless overridden. */
function merchantAccount(id: string, overrides: Partial<MerchantAccount> = {}): MerchantAccount {
  return {
    type: 'merchant-account',
    id,
    display_name: id,
    account_updater_enabled: false,
    account_updater_request_encryption_key: null,
    account_updater_request_encryption_key_id: null,
    account_updater_response_decryption_key: null,
    account_updater_response_decryption_key_id: null,
    over_capture_amount: null,
    over_capture_percentage: null,
    multiple_captures_enabled: false,
    loon_client_key: null,
    loon_secret_key: null,
    loon_accepted_schemes: null,
    visa_network_tokens_requestor_id: null,
    visa_network_tokens_app_id: null,
    amex_network_tokens_requestor_id: null,
    amex_network_tokens_app_id: null,
    mastercard_network_tokens_requestor_id: null,
    mastercard_network_tokens_app_id: null,
    discover_network_tokens_requestor_id: null,
    discover_network_tokens_app_id: null,
    async_network_tokens_enabled: false,
    network_tokens_enabled: true,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}

/** The payment methods slice as this one sees it: stored cards, and the hooks it registers. */
class FakePaymentMethods implements NetworkTokenPaymentMethods {
  private readonly methods = new Map<
    string,
    TokenizablePaymentMethod & { card: { number: string; expirationDate: string } }
  >();
  private readonly stored: ((view: TokenizablePaymentMethod) => Promise<void>)[] = [];
  private readonly deleted: ((view: TokenizablePaymentMethod) => Promise<void>)[] = [];

  add(
    merchantAccountId: string,
    number: string,
    overrides: Partial<TokenizablePaymentMethod> = {},
  ): TokenizablePaymentMethod {
    const scheme = number.startsWith('4')
      ? 'visa'
      : number.startsWith('5')
        ? 'mastercard'
        : number.startsWith('6')
          ? 'discover'
          : null;
    const view = { id: randomUUID(), merchantAccountId, status: 'succeeded', method: 'card', scheme, ...overrides };
    this.methods.set(view.id, { ...view, card: { number, expirationDate: '11/30' } });
    return view;
  }

  find(merchantAccountId: string, id: string): TokenizablePaymentMethod | null {
    const found = this.methods.get(id);
    if (!found || found.merchantAccountId !== merchantAccountId) return null;
    const { card: _card, ...view } = found;
    return view;
  }

  cardOf(merchantAccountId: string, id: string) {
    const found = this.methods.get(id);
    return found && found.merchantAccountId === merchantAccountId ? found.card : null;
  }

  onStored(listener: (view: TokenizablePaymentMethod) => Promise<void>): void {
    this.stored.push(listener);
  }

  onDeleted(listener: (view: TokenizablePaymentMethod) => Promise<void>): void {
    this.deleted.push(listener);
  }

  async store(merchantAccountId: string, number: string): Promise<TokenizablePaymentMethod> {
    const view = this.add(merchantAccountId, number);
    for (const listener of this.stored) await listener(view);
    return view;
  }

  /** As the slice does: the listeners first, then `PaymentMethodDeleted` on the method's stream (the same log). */
  async remove(view: TokenizablePaymentMethod): Promise<void> {
    this.methods.delete(view.id);
    for (const listener of this.deleted) await listener(view);
    const data = {
      id: view.id,
      merchantAccountId: view.merchantAccountId,
      reason: 'request',
      at: new Date().toISOString(),
    };
    await host.context.store.append(`payment-method-${view.id}`, [{ type: 'PaymentMethodDeleted', data }], {
      expectedRevision: 'any',
    });
    await host.catchUp();
  }
}

/** The simulator's token service, recording every request, and down while `down` is set. */
class RecordingTokenService implements TokenServiceProvider {
  down = false;
  readonly provisions: TokenProvisionRequest[] = [];
  readonly calls: string[] = [];
  constructor(private readonly inner: TokenServiceProvider) {}

  private async call<T>(name: string, work: () => Promise<T>): Promise<T> {
    this.calls.push(name);
    if (this.down) throw new ConnectorUnavailableError('network token service unreachable (ECONNREFUSED)', true);
    return work();
  }
  provision(request: TokenProvisionRequest) {
    this.provisions.push(request);
    return this.call('provision', () => this.inner.provision(request));
  }
  suspend(id: string) {
    return this.call('suspend', () => this.inner.suspend(id));
  }
  resume(id: string) {
    return this.call('resume', () => this.inner.resume(id));
  }
  delete(id: string) {
    return this.call('delete', () => this.inner.delete(id));
  }
  cryptogram(id: string, options: { merchantInitiated: boolean }) {
    return this.call('cryptogram', () => this.inner.cryptogram(id, options));
  }
}

let simulator: RunningSimulator;
let dir: string;
let storage: ServiceStorage;
let host: ServiceHost;
let paymentServices: PaymentServices;
let paymentMethods: FakePaymentMethods;
let accounts: Map<string, MerchantAccount>;
let tsp: RecordingTokenService;
let backgroundErrors: unknown[];
let networkTokens: NetworkTokens;

beforeAll(async () => {
  simulator = await startSimulator({ webhookSecret: 'whsec_network_tokens' });
});
afterAll(() => simulator.stop());

async function start(overrides: Partial<NetworkTokensDependencies> = {}): Promise<NetworkTokens> {
  const slice = new NetworkTokens(host.context, {
    paymentMethods,
    merchantAccounts: { get: async (id) => accounts.get(id) ?? null },
    paymentServices,
    tokenService: tsp,
    sealingKey: randomBytes(32),
    apiProvisioning: true,
    retryDelaysMs: [30, 30],
    onBackgroundError: (error) => backgroundErrors.push(error),
    ...overrides,
  });
  host.add(slice);
  await host.catchUp();
  return slice;
}

beforeEach(async () => {
  dir = createTestDataDir('network-tokens');
  storage = openServiceStorage('transactions', { dataDir: dir });
  host = new ServiceHost({ store: storage.store, db: storage.db });
  paymentServices = new PaymentServices(host.context);
  host.add(paymentServices);
  paymentMethods = new FakePaymentMethods();
  accounts = new Map([
    ['shop', merchantAccount('shop')],
    ['other', merchantAccount('other')],
  ]);
  tsp = new RecordingTokenService(new SimulatorTokenServiceProvider({ baseUrl: simulator.url, timeoutMs: 2_000 }));
  backgroundErrors = [];
  networkTokens = await start();
});
afterEach(async () => {
  networkTokens.stop();
  await host.stop();
  await storage.close();
  removeTestDataDir(dir);
});

const rejection = async (promise: Promise<unknown>): Promise<ApiError> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
};
const rejectionOf = (work: () => unknown): Promise<ApiError> => rejection(Promise.resolve().then(work));

const events = async () =>
  (await storage.store.readAll()).filter((event) => event.streamId.startsWith('network-token-'));
const body = { merchant_initiated: false, is_subsequent_payment: false };
const provision = (view: TokenizablePaymentMethod, extra: Record<string, unknown> = {}) =>
  networkTokens.create({
    merchant_account_id: view.merchantAccountId,
    payment_method_id: view.id,
    body: { ...body, ...extra },
  });
const ref = (view: TokenizablePaymentMethod, networkTokenId: string) => ({
  merchant_account_id: view.merchantAccountId,
  payment_method_id: view.id,
  network_token_id: networkTokenId,
});
const cardConnection = (merchantAccountId: string, overrides: Record<string, unknown> = {}) =>
  paymentServices.create(merchantAccountId, {
    display_name: 'Cards',
    payment_service_definition_id: 'mock-card',
    fields: [{ key: 'merchant_id', value: 'sim-shop' }],
    accepted_currencies: ['USD'],
    accepted_countries: ['US'],
    network_tokens_enabled: true,
    ...overrides,
  } as never);
/** The token service's own record of our token. */
const simulatedToken = (networkTokenId: string) =>
  [...simulator.ledger.networkTokens.values()].find((t) => t.reference === networkTokenId);
const waitFor = async (check: () => Promise<boolean> | boolean, what: string) => {
  const deadline = Date.now() + 3_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('provisioning through the API', () => {
  it('provisions an active token for a stored card: the network token number, sealed in its event, never the card', async () => {
    const view = paymentMethods.add('shop', VISA);
    const token = await provision(view, { security_code: '9731' });
    expect(token).toEqual({
      type: 'network-token',
      id: expect.any(String),
      payment_method_id: view.id,
      status: 'active',
      token: expect.stringMatching(/^4111\d{12}$/),
      expiration_date: '11/30',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(token.token).not.toBe(VISA);
    expect(tsp.provisions[0]).toMatchObject({
      reference: token.id,
      scheme: 'visa',
      card: { number: VISA },
      securityCode: '9731',
      merchantInitiated: false,
      isSubsequentPayment: false,
    });
    expect(networkTokens.list({ merchant_account_id: 'shop', payment_method_id: view.id })).toEqual({ items: [token] });

    const [provisioned] = await events();
    expect(provisioned).toMatchObject({
      streamId: `network-token-${token.id}`,
      type: 'NetworkTokenProvisioned',
      data: { paymentMethodId: view.id, trigger: 'api', scheme: 'visa' },
    });
    const stored = JSON.stringify(await storage.store.readAll());
    expect(stored).not.toContain(token.token);
    expect(stored).not.toContain(VISA);
    expect(stored).not.toContain('"9731"');
    expect(JSON.stringify(storage.db.prepare('SELECT * FROM network_tokens').all())).not.toContain(token.token);
  });

  it('sends the scheme’s requestor id and app id when the account has them', async () => {
    accounts.set(
      'shop',
      merchantAccount('shop', {
        mastercard_network_tokens_requestor_id: 'mc-req',
        visa_network_tokens_requestor_id: 'visa-req',
      }),
    );
    await provision(paymentMethods.add('shop', MASTERCARD));
    expect(tsp.provisions[0]).toMatchObject({ scheme: 'mastercard', requestorId: 'mc-req' });
    expect(tsp.provisions[0]).not.toHaveProperty('appId');
  });

  it('refuses a Discover card without both Discover settings (400, naming them, nothing asked or recorded); provisions it with them', async () => {
    const view = paymentMethods.add('shop', DISCOVER);
    accounts.set('shop', merchantAccount('shop', { discover_network_tokens_requestor_id: 'disc-req' }));
    const error = await rejection(provision(view));
    expect(error.status).toBe(400);
    expect(error.details).toEqual([expect.objectContaining({ type: 'discover_network_token_settings_missing' })]);
    expect(error.message).toContain('discover_network_tokens_requestor_id');
    expect(error.message).toContain('discover_network_tokens_app_id');
    expect(tsp.calls).toEqual([]);
    expect(await events()).toEqual([]);

    accounts.set(
      'shop',
      merchantAccount('shop', {
        discover_network_tokens_requestor_id: 'disc-req',
        discover_network_tokens_app_id: 'disc-app',
      }),
    );
    expect(await provision(view)).toMatchObject({ status: 'active', token: expect.stringMatching(/^6011/) });
    expect(tsp.provisions[0]).toMatchObject({ scheme: 'discover', requestorId: 'disc-req', appId: 'disc-app' });
  });

  it.each([
    [
      'network tokens are off for the account',
      () => accounts.set('shop', merchantAccount('shop', { network_tokens_enabled: false })),
      {},
      'network_tokens_disabled',
    ],
    [
      'the payment method is still processing',
      () => undefined,
      { status: 'processing' },
      'payment_method_not_eligible',
    ],
    ['the card scheme is unknown', () => undefined, { scheme: null }, 'card_scheme_unknown'],
  ])('refuses when %s (400, nothing asked)', async (_, arrange, overrides, type) => {
    arrange();
    const error = await rejection(provision(paymentMethods.add('shop', VISA, overrides)));
    expect(error).toMatchObject({
      status: 400,
      details: [expect.objectContaining({ type, location: 'path', pointer: '/payment_method_id' })],
    });
    expect(tsp.calls).toEqual([]);
  });

  it('answers 403 when API provisioning is off, before anything else', async () => {
    networkTokens.stop();
    const off = await start({ apiProvisioning: false });
    const error = await rejection(off.create({ merchant_account_id: 'shop', payment_method_id: randomUUID(), body }));
    expect(error).toMatchObject({
      status: 403,
      code: 'forbidden',
      message: 'network token provisioning through the API is not enabled',
    });
    expect(tsp.calls).toEqual([]);
  });

  it("is a 404 for another account's payment method", async () => {
    const view = paymentMethods.add('other', VISA);
    expect(
      (await rejection(networkTokens.create({ merchant_account_id: 'shop', payment_method_id: view.id, body }))).status,
    ).toBe(404);
    expect(
      (await rejectionOf(() => networkTokens.list({ merchant_account_id: 'shop', payment_method_id: view.id }))).status,
    ).toBe(404);
  });

  it('answers 409 (resource_id: the live token) while the card has a live token, even suspended; after a delete it provisions again', async () => {
    const view = paymentMethods.add('shop', VISA);
    const first = await provision(view);
    await networkTokens.suspend(ref(view, first.id));
    const duplicate = await rejection(provision(view));
    expect(duplicate).toMatchObject({ status: 409, resourceId: first.id });
    await networkTokens.delete(ref(view, first.id));
    const second = await provision(view);
    expect(second.id).not.toBe(first.id);
  });

  it('answers a refusal of the token service with a 400 carrying its code, recording nothing (a refused request changes nothing)', async () => {
    const view = paymentMethods.add('shop', NOT_ELIGIBLE);
    const error = await rejection(provision(view));
    expect(error).toMatchObject({ status: 400, details: [expect.objectContaining({ type: 'card_not_eligible' })] });
    expect(tsp.calls).toEqual(['provision']);
    expect(await events()).toEqual([]);
    expect(networkTokens.list({ merchant_account_id: 'shop', payment_method_id: view.id })).toEqual({ items: [] });
  });

  it('answers 502 when the token service is unreachable, recording nothing', async () => {
    tsp.down = true;
    expect((await rejection(provision(paymentMethods.add('shop', VISA)))).status).toBe(502);
    expect(await events()).toEqual([]);
  });
});

describe("a token's life", () => {
  it('suspends, resumes, gives cryptograms while active, and deletes (final: 404 afterwards)', async () => {
    const view = paymentMethods.add('shop', VISA);
    const token = await provision(view);
    expect(await networkTokens.suspend(ref(view, token.id))).toMatchObject({
      id: token.id,
      status: 'suspended',
      token: token.token,
    });
    expect(await networkTokens.suspend(ref(view, token.id))).toMatchObject({ status: 'suspended' });
    expect(tsp.calls.filter((call) => call === 'suspend')).toHaveLength(1);
    const refused = await rejection(
      networkTokens.cryptogram({ ...ref(view, token.id), body: { merchant_initiated: false } }),
    );
    expect(refused).toMatchObject({
      status: 400,
      details: [expect.objectContaining({ type: 'network_token_not_active' })],
    });

    expect(await networkTokens.resume(ref(view, token.id))).toMatchObject({ status: 'active' });
    const cryptogram = await networkTokens.cryptogram({ ...ref(view, token.id), body: { merchant_initiated: true } });
    expect(cryptogram).toEqual({
      type: 'network-token-cryptogram',
      cryptogram: expect.stringMatching(/^[A-Za-z0-9+/]{27}=$/),
    });

    await networkTokens.delete(ref(view, token.id));
    expect(networkTokens.list({ merchant_account_id: 'shop', payment_method_id: view.id })).toEqual({ items: [] });
    expect(simulatedToken(token.id)?.status).toBe('deleted');
    for (const work of [
      () => networkTokens.delete(ref(view, token.id)),
      () => networkTokens.resume(ref(view, token.id)),
    ])
      expect((await rejection(work())).status).toBe(404);
    expect((await events()).map((event) => event.type)).toEqual([
      'NetworkTokenProvisioned',
      'NetworkTokenSuspended',
      'NetworkTokenResumed',
      'NetworkTokenDeleted',
    ]);
  });

  it('is a 404 through another payment method or account', async () => {
    const view = paymentMethods.add('shop', VISA);
    const token = await provision(view);
    const elsewhere = paymentMethods.add('shop', MASTERCARD);
    expect((await rejection(networkTokens.suspend(ref(elsewhere, token.id)))).status).toBe(404);
    expect(
      (await rejection(networkTokens.cryptogram({ ...ref(elsewhere, token.id), body: { merchant_initiated: false } })))
        .status,
    ).toBe(404);
    expect(
      (await rejection(networkTokens.delete({ ...ref(view, token.id), merchant_account_id: 'other' }))).status,
    ).toBe(404);
    expect((await rejection(networkTokens.delete(ref(view, randomUUID())))).status).toBe(404);
  });
});

describe('automatic provisioning when a card is stored', () => {
  it('provisions when the account and one of its card connections take network tokens', async () => {
    await cardConnection('shop');
    const view = await paymentMethods.store('shop', VISA);
    const [token] = networkTokens.list({ merchant_account_id: 'shop', payment_method_id: view.id }).items;
    expect(token).toMatchObject({ status: 'active', payment_method_id: view.id });
    expect((await events())[0]).toMatchObject({ type: 'NetworkTokenProvisioned', data: { trigger: 'automatic' } });
    expect(tsp.provisions[0]).toMatchObject({ merchantInitiated: false, isSubsequentPayment: false });
  });

  it.each([
    ['no card connection', async () => undefined],
    ['a connection with network tokens off', async () => cardConnection('shop', { network_tokens_enabled: false })],
    [
      'a connection without the capability',
      async () => cardConnection('shop', { capabilities: { network_tokens: false } }),
    ],
    ['an inactive connection', async () => cardConnection('shop', { active: false })],
    [
      'the account setting off',
      async () => {
        await cardConnection('shop');
        accounts.set('shop', merchantAccount('shop', { network_tokens_enabled: false }));
      },
    ],
  ])('skips the card with %s (nothing asked, no event)', async (_, arrange) => {
    await arrange();
    await paymentMethods.store('shop', VISA);
    expect(tsp.calls).toEqual([]);
    expect(await events()).toEqual([]);
  });

  it('skips a Discover card without the Discover settings, and records a refusal of the token service', async () => {
    await cardConnection('shop');
    await paymentMethods.store('shop', DISCOVER);
    expect(tsp.calls).toEqual([]);
    await paymentMethods.store('shop', NOT_ELIGIBLE);
    expect(await events()).toEqual([
      expect.objectContaining({
        type: 'NetworkTokenProvisionFailed',
        data: expect.objectContaining({ errorCode: 'card_not_eligible', trigger: 'automatic' }),
      }),
    ]);
    expect(backgroundErrors).toEqual([]);
  });

  it('tries again with the same reference when the token service is down, and provisions once it is back', async () => {
    await cardConnection('shop');
    tsp.down = true;
    const view = await paymentMethods.store('shop', VISA);
    expect(backgroundErrors).toEqual([expect.any(ConnectorUnavailableError)]);
    tsp.down = false;
    await waitFor(
      () => networkTokens.list({ merchant_account_id: 'shop', payment_method_id: view.id }).items.length === 1,
      'the retried provisioning',
    );
    expect(new Set(tsp.provisions.map((request) => request.reference)).size).toBe(1);
  });
});

describe('when the payment method is deleted', () => {
  it('deletes its live tokens at the token service and records why', async () => {
    const view = paymentMethods.add('shop', VISA);
    const token = await provision(view);
    await paymentMethods.remove(view);
    expect((await events()).at(-1)).toMatchObject({
      type: 'NetworkTokenDeleted',
      data: { id: token.id, reason: 'payment_method_deleted' },
    });
    expect(simulatedToken(token.id)?.status).toBe('deleted');
    expect(networkTokens.readModel.find(token.id)).toBeNull();
    expect(networkTokens.readModel.pendingDeletions(10)).toEqual([]);
  });

  it('deletes them on a later round when the token service was down, also after a restart: the log remembers, not a timer', async () => {
    const view = paymentMethods.add('shop', VISA);
    const token = await provision(view);
    tsp.down = true;
    await paymentMethods.remove(view);
    expect(backgroundErrors).toEqual([expect.any(ConnectorUnavailableError)]);
    expect(networkTokens.readModel.pendingDeletions(10)).toEqual([
      { merchantAccountId: 'shop', paymentMethodId: view.id },
    ]);
    // A restart: a new host and slice over the same store and file, nothing carried over in memory.
    networkTokens.stop();
    await host.stop();
    host = new ServiceHost({ store: storage.store, db: storage.db });
    paymentServices = new PaymentServices(host.context);
    host.add(paymentServices);
    networkTokens = await start();
    await new Promise((resolve) => setTimeout(resolve, 100)); // past every retry delay of the old process (30 ms)
    expect(networkTokens.readModel.find(token.id)).not.toBeNull();
    await networkTokens.deleteTokensOfDeletedMethods(); // still down: reported, still owed
    expect(backgroundErrors).toHaveLength(2);
    expect(networkTokens.readModel.find(token.id)).not.toBeNull();
    tsp.down = false;
    await networkTokens.deleteTokensOfDeletedMethods();
    expect(simulatedToken(token.id)?.status).toBe('deleted');
    expect(networkTokens.readModel.find(token.id)).toBeNull();
    expect((await events()).at(-1)).toMatchObject({
      type: 'NetworkTokenDeleted',
      data: { id: token.id, reason: 'payment_method_deleted' },
    });
    expect(networkTokens.readModel.pendingDeletions(10)).toEqual([]);
  });
});

describe('the token for a transaction', () => {
  it('is the active token with a fresh cryptogram, which the provider accepts in place of the card', async () => {
    const view = paymentMethods.add('shop', VISA);
    const token = await provision(view);
    const forPayment = await networkTokens.tokenForTransaction('shop', view.id, { merchantInitiated: false });
    expect(forPayment).toEqual({
      token: token.token,
      expirationDate: '11/30',
      cryptogram: expect.stringMatching(/^[A-Za-z0-9+/]{27}=$/),
      eci: '05',
    });
    const again = await networkTokens.tokenForTransaction('shop', view.id, { merchantInitiated: true });
    expect(again).toMatchObject({ eci: '07' });
    expect(again?.cryptogram).not.toBe(forPayment?.cryptogram);

    const connector = mockCardDefinition.create({
      baseUrl: simulator.url,
      merchantId: 'sim-shop',
      webhookSecret: 'whsec_network_tokens',
      timeoutMs: 2_000,
    });
    const reference = randomUUID();
    const answer = await connector.authorize({
      reference,
      amount: 1299,
      currency: 'USD',
      capture: false,
      paymentInstrument: {
        type: 'network-token',
        networkToken: {
          token: forPayment!.token,
          expirationDate: forPayment!.expirationDate,
          cryptogram: forPayment!.cryptogram,
        },
      },
    });
    expect(answer).toMatchObject({ outcome: 'succeeded' });
    expect(simulatedToken(token.id)?.authorizations).toEqual([reference]);
  });

  it('is null without a token, with a suspended one, for another account, or when the token service fails', async () => {
    const view = paymentMethods.add('shop', VISA);
    expect(await networkTokens.tokenForTransaction('shop', view.id, { merchantInitiated: false })).toBeNull();
    const token = await provision(view);
    expect(await networkTokens.tokenForTransaction('other', view.id, { merchantInitiated: false })).toBeNull();
    tsp.down = true;
    expect(await networkTokens.tokenForTransaction('shop', view.id, { merchantInitiated: false })).toBeNull();
    tsp.down = false;
    await networkTokens.suspend(ref(view, token.id));
    expect(await networkTokens.tokenForTransaction('shop', view.id, { merchantInitiated: false })).toBeNull();
  });
});

describe('card data', () => {
  it('never reaches an event in clear: no card number, no token number', async () => {
    await cardConnection('shop');
    const tokens: string[] = [];
    for (const number of CARDS) {
      const view = await paymentMethods.store('shop', number);
      tokens.push(
        ...networkTokens.list({ merchant_account_id: 'shop', payment_method_id: view.id }).items.map((t) => t.token),
      );
    }
    expect(tokens.length).toBeGreaterThan(0);
    const stored = JSON.stringify(await storage.store.readAll());
    for (const secret of [...CARDS, ...tokens]) expect(stored).not.toContain(secret);
  });
});
