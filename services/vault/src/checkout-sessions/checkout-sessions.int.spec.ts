/**
 * The checkout sessions slice over a real store, read model and card vault: create, read, update, delete; card data
 * attached (and replaced) with the number in the vault and the security code sealed in the secrets table only; a
 * transaction's claim — once, also under concurrency —; the expiry sweep; and the read model rebuilt from events.
 */
import Database from 'better-sqlite3';
import { ApiError } from '@switchyard/api';
import { loadBinData } from '@switchyard/bin-data';
import { checkoutSessionCreateSchema, checkoutSessionUpdateSchema } from '@switchyard/contracts';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { ServiceHost } from '@switchyard/service';
import { CardVault, loadVaultKey } from '../vault/card-vault';
import { keyRing, VaultKeys } from '../vault/vault-keys';
import { CheckoutSessions } from './checkout-sessions.slice';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';

const shopA = 'shop-a';
const NUMBER = '4111111111111111';
const OTHER_NUMBER = '5555555555554444';
const SECURITY_CODE = '7391';
const GRACE_MS = 60_000;

let dir: string;
let storage: ServiceStorage;
let host: ServiceHost;
let vault: CardVault;
let sessions: CheckoutSessions;
let clock: number;

beforeEach(async () => {
  clock = Date.parse('2026-01-01T00:00:00.000Z');
  dir = createTestDataDir('checkout-sessions');
  storage = openServiceStorage('transactions', { dataDir: dir });
  host = new ServiceHost({ store: storage.store, db: storage.db, now: () => new Date(clock) });
  vault = new CardVault(storage.db, {
    keys: new VaultKeys(storage.db, keyRing(loadVaultKey({}))),
    now: host.context.now,
  });
  sessions = new CheckoutSessions(host.context, { vault, binData: loadBinData({}), expiryGraceMs: GRACE_MS });
  host.add(sessions);
  await host.catchUp();
});
afterEach(async () => {
  await host.stop();
  await storage.close();
  removeTestDataDir(dir);
});

const create = (body: Record<string, unknown> = {}, merchantAccountId = shopA) =>
  sessions.create({ merchant_account_id: merchantAccountId, body: checkoutSessionCreateSchema.parse(body) });
const attach = (id: string, card: Record<string, unknown> = {}) =>
  sessions.attachFields({
    checkout_session_id: id,
    body: {
      payment_method: {
        method: 'card',
        number: NUMBER,
        expiration_date: '11/30',
        security_code: SECURITY_CODE,
        ...card,
      },
    } as never,
  });
const secretRows = (id: string) =>
  storage.db.prepare('SELECT * FROM checkout_session_secrets WHERE session_id = ?').all(id) as {
    card_id: string;
    sealed_security_code: string | null;
  }[];
const later = (ms: number) => {
  clock += ms;
};

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('the merchant’s session', () => {
  it('is created from an empty body for an hour, read, updated and deleted', async () => {
    const session = await create();
    expect(session).toEqual({
      type: 'checkout-session',
      id: expect.any(String),
      expires_at: '2026-01-01T01:00:00.000Z',
      cart_items: null,
      metadata: null,
      buyer: null,
      airline: null,
      amount: null,
      currency: null,
      payment_service_id: null,
      payment_method: null,
    });
    const ref = { merchant_account_id: shopA, checkout_session_id: session.id };
    expect(sessions.get(ref)).toEqual(session);

    later(1000);
    const cart = [{ name: 'Shoes', quantity: 1, unit_amount: 1299 }];
    const updated = await sessions.update({
      ...ref,
      body: checkoutSessionUpdateSchema.parse({ amount: 1299, currency: 'USD', cart_items: cart, expires_in: 120 }),
    });
    expect(updated).toMatchObject({
      amount: 1299,
      currency: 'USD',
      cart_items: cart,
      expires_at: '2026-01-01T00:02:01.000Z',
    });
    // Absent fields stay, null clears, no expires_in keeps the expiry.
    const cleared = await sessions.update({ ...ref, body: checkoutSessionUpdateSchema.parse({ currency: null }) });
    expect(cleared).toMatchObject({
      amount: 1299,
      currency: null,
      cart_items: cart,
      expires_at: '2026-01-01T00:02:01.000Z',
    });

    await sessions.delete(ref);
    expect((await rejection(Promise.resolve().then(() => sessions.get(ref)))).status).toBe(404);
    expect((await rejection(sessions.delete(ref))).status).toBe(404);
  });

  it('does not exist for another merchant account', async () => {
    const session = await create({ metadata: { order: 'A-1' } });
    const elsewhere = { merchant_account_id: 'shop-b', checkout_session_id: session.id };
    expect(() => sessions.get(elsewhere)).toThrow(expect.objectContaining({ status: 404 }));
    expect((await rejection(sessions.update({ ...elsewhere, body: { amount: 1 } }))).status).toBe(404);
    expect((await rejection(sessions.delete(elsewhere))).status).toBe(404);
    expect(sessions.get({ merchant_account_id: shopA, checkout_session_id: session.id }).metadata).toEqual({
      order: 'A-1',
    });
  });

  it('refuses updates once expired, naming the session', async () => {
    const session = await create({ expires_in: 60 });
    later(60_000);
    const refused = await rejection(
      sessions.update({ merchant_account_id: shopA, checkout_session_id: session.id, body: { amount: 5 } }),
    );
    expect(refused.toBody()).toMatchObject({
      status: 400,
      details: [{ location: 'path', pointer: '/session_id', type: 'checkout_session_expired' }],
    });
  });
});

describe('card fields from the buyer’s browser', () => {
  it('keep the number in the vault and the security code sealed in the secrets table; the session shows the summary', async () => {
    const session = await create();
    await attach(session.id);
    const shown = sessions.get({ merchant_account_id: shopA, checkout_session_id: session.id });
    const cardId = shown.payment_method?.id ?? '';
    expect(shown.payment_method).toEqual({
      type: 'payment-method',
      id: expect.any(String),
      method: 'card',
      scheme: 'visa',
      label: '1111',
      fingerprint: expect.any(String),
      details: { bin: '411111', card_type: 'credit', card_country: 'US', card_issuer_name: 'Switchyard Test Bank US' },
    });
    expect(vault.reveal(shopA, cardId)).toEqual({ number: NUMBER, expirationDate: '11/30' });
    const [row, ...none] = secretRows(session.id);
    expect(none).toEqual([]);
    expect(row?.card_id).toBe(cardId);
    expect(row?.sealed_security_code).not.toContain(SECURITY_CODE);
    expect(vault.openWithCard(shopA, cardId, 'security_code', row?.sealed_security_code ?? '')).toBe(SECURITY_CODE);

    const events = await storage.store.readStream(`checkout-session-${session.id}`);
    expect(events.map((event) => event.type)).toEqual(['CheckoutSessionCreated', 'CheckoutSessionCardAttached']);
    expect(Object.keys((events[1]!.data as { card: object }).card).sort()).toEqual(
      [
        'bin',
        'cardId',
        'cardType',
        'expirationDate',
        'fingerprint',
        'issuerCountry',
        'issuerName',
        'last4',
        'scheme',
      ].sort(),
    );
    const everything = JSON.stringify(await storage.store.readAll());
    expect(everything).not.toContain(NUMBER);
    expect(everything).not.toContain(SECURITY_CODE);
  });

  it('attached again replace the card: the previous one leaves the vault', async () => {
    const session = await create();
    await attach(session.id);
    const first = sessions.find(shopA, session.id)?.card?.cardId ?? '';
    await attach(session.id, { number: OTHER_NUMBER, security_code: undefined });
    const second = sessions.find(shopA, session.id)?.card;
    expect(second).toMatchObject({ scheme: 'mastercard', last4: '4444' });
    expect(vault.find(shopA, first)).toBeNull();
    expect(secretRows(session.id)).toEqual([
      expect.objectContaining({ card_id: second?.cardId, sealed_security_code: null }),
    ]);
  });

  it('attached concurrently leave one card: the last appended, the others removed from the vault', async () => {
    const session = await create();
    await Promise.all([attach(session.id), attach(session.id, { number: OTHER_NUMBER }), attach(session.id)]);
    const kept = sessions.find(shopA, session.id)?.card?.cardId;
    expect(storage.db.prepare('SELECT id FROM vault_cards').all()).toEqual([{ id: kept }]);
    expect(secretRows(session.id).map((row) => row.card_id)).toEqual([kept]);
    const attached = (await storage.store.readStream(`checkout-session-${session.id}`)).filter(
      (event) => event.type === 'CheckoutSessionCardAttached',
    );
    expect(attached).toHaveLength(3);
  });

  it('refuse a number failing the Luhn check (400 naming the field), an unknown session (404), an expired one (400) — storing nothing', async () => {
    const session = await create({ expires_in: 60 });
    const luhn = await rejection(attach(session.id, { number: '4111111111111112' }));
    expect(luhn.toBody()).toMatchObject({
      status: 400,
      details: [{ location: 'body', pointer: '/payment_method/number', type: 'invalid_card_number' }],
    });
    expect(JSON.stringify(luhn.toBody())).not.toContain('4111111111111112');
    expect((await rejection(attach('00000000-0000-4000-8000-000000000000'))).status).toBe(404);
    later(60_000);
    const expired = await rejection(attach(session.id));
    expect(expired.toBody()).toMatchObject({ status: 400, details: [{ type: 'checkout_session_expired' }] });
    expect(storage.db.prepare('SELECT COUNT(*) AS n FROM vault_cards').get()).toEqual({ n: 0 });
    expect(secretRows(session.id)).toEqual([]);
  });

  it('after the session was deleted are a 404, and deleting removed the card', async () => {
    const session = await create();
    await attach(session.id);
    const cardId = sessions.find(shopA, session.id)?.card?.cardId ?? '';
    await sessions.delete({ merchant_account_id: shopA, checkout_session_id: session.id });
    expect(vault.find(shopA, cardId)).toBeNull();
    expect(secretRows(session.id)).toEqual([]);
    expect((await rejection(attach(session.id))).status).toBe(404);
  });
});

describe('a transaction’s claim', () => {
  it('answers the card with its security code, once; the code is deleted, the card stays (the transaction’s)', async () => {
    const session = await create({ amount: 1299, currency: 'USD' });
    await attach(session.id);
    const claimed = await sessions.claim(shopA, session.id, 'tx-1');
    expect(claimed).toEqual({
      session: expect.objectContaining({ id: session.id, amount: 1299, usedByTransactionId: 'tx-1' }),
      cardId: claimed.session.card?.cardId,
      storedPaymentMethod: false,
      card: { number: NUMBER, expirationDate: '11/30', securityCode: SECURITY_CODE },
    });
    expect(secretRows(session.id)).toEqual([]);
    expect(vault.reveal(shopA, claimed.cardId)).toEqual({ number: NUMBER, expirationDate: '11/30' });

    const again = await rejection(sessions.claim(shopA, session.id, 'tx-2'));
    expect(again.toBody()).toMatchObject({
      status: 400,
      details: [{ location: 'body', pointer: '/payment_method/id', type: 'checkout_session_used' }],
    });
    expect((await rejection(attach(session.id))).toBody()).toMatchObject({
      status: 400,
      details: [{ type: 'checkout_session_used' }],
    });
    // Deleting a used session leaves the transaction's card alone.
    await sessions.delete({ merchant_account_id: shopA, checkout_session_id: session.id });
    expect(vault.find(shopA, claimed.cardId)).not.toBeNull();
  });

  it('is refused as a 400 about payment_method.id: unknown or another account’s, without a card, expired', async () => {
    const session = await create({ expires_in: 60 });
    const typeOf = async (merchantAccountId: string, id: string) =>
      (await rejection(sessions.claim(merchantAccountId, id, 'tx'))).toBody();
    expect(await typeOf(shopA, '00000000-0000-4000-8000-000000000000')).toMatchObject({
      status: 400,
      details: [{ pointer: '/payment_method/id', type: 'checkout_session_not_found' }],
    });
    expect(await typeOf(shopA, session.id)).toMatchObject({
      status: 400,
      details: [{ type: 'checkout_session_without_card' }],
    });
    await attach(session.id, { security_code: undefined });
    expect(await typeOf('shop-b', session.id)).toMatchObject({
      status: 400,
      details: [{ type: 'checkout_session_not_found' }],
    });
    later(60_000);
    expect(await typeOf(shopA, session.id)).toMatchObject({
      status: 400,
      details: [{ type: 'checkout_session_expired' }],
    });
  });

  it('has one winner among concurrent claims', async () => {
    const session = await create();
    await attach(session.id, { security_code: undefined });
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => sessions.claim(shopA, session.id, `tx-${i}`)),
    );
    const won = results.filter((result) => result.status === 'fulfilled');
    const lost = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(won[0]).toMatchObject({ value: { card: { number: NUMBER, expirationDate: '11/30' } } });
    expect(lost.map((result) => (result.reason as ApiError).details[0]?.type)).toEqual(
      Array(5).fill('checkout_session_used'),
    );
    const used = (await storage.store.readStream(`checkout-session-${session.id}`)).filter(
      (event) => event.type === 'CheckoutSessionUsed',
    );
    expect(used).toHaveLength(1);
  });
});

describe('the expiry sweep', () => {
  it('removes the cards and codes of sessions expired past the grace period and never used; not a used one’s card, not an extended one', async () => {
    const abandoned = await create({ expires_in: 60 });
    await attach(abandoned.id);
    const abandonedCard = sessions.find(shopA, abandoned.id)?.card?.cardId ?? '';
    const paid = await create({ expires_in: 60 });
    await attach(paid.id);
    const { cardId: paidCard } = await sessions.claim(shopA, paid.id, 'tx-1');
    const extended = await create({ expires_in: 60 });
    await attach(extended.id);
    await sessions.update({ merchant_account_id: shopA, checkout_session_id: extended.id, body: { expires_in: 3600 } });

    later(60_000);
    expect(await sessions.expireSessions()).toBe(0); // within the grace period
    later(GRACE_MS);
    expect(await sessions.expireSessions()).toBe(1);
    expect(vault.find(shopA, abandonedCard)).toBeNull();
    expect(secretRows(abandoned.id)).toEqual([]);
    expect(vault.find(shopA, paidCard)).not.toBeNull();
    expect(secretRows(extended.id)).toHaveLength(1);
    // The session itself stays readable, expired.
    expect(sessions.get({ merchant_account_id: shopA, checkout_session_id: abandoned.id }).expires_at).toBe(
      '2026-01-01T00:01:00.000Z',
    );
    expect(await sessions.expireSessions()).toBe(0);
  });
});

describe('the read model', () => {
  it('is rebuilt from the events alone', async () => {
    const session = await create({ metadata: { order: 'A-1' }, buyer: { display_name: 'Ada' } });
    await attach(session.id);
    await sessions.update({ merchant_account_id: shopA, checkout_session_id: session.id, body: { amount: 700 } });
    const gone = await create();
    await sessions.delete({ merchant_account_id: shopA, checkout_session_id: gone.id });

    const fresh = new Database(':memory:');
    const rebuiltHost = new ServiceHost({ store: storage.store, db: fresh, now: () => new Date(clock) });
    const rebuilt = new CheckoutSessions(rebuiltHost.context, { vault });
    rebuiltHost.add(rebuilt);
    await rebuiltHost.catchUp();
    expect(rebuilt.get({ merchant_account_id: shopA, checkout_session_id: session.id })).toEqual(
      sessions.get({ merchant_account_id: shopA, checkout_session_id: session.id }),
    );
    expect(rebuilt.find(shopA, gone.id)).toBeNull();
    await rebuiltHost.stop();
    fresh.close();
  });
});
