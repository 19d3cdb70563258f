/**
 * A stored payment method chosen in the buyer's browser with its security code typed again
 * (`{"method":"id","id":…,"security_code":…}` on the fields endpoint), over a real store, read model, card vault and
 * payment methods slice: the code is sealed in the secrets table only, with the stored card's key, for as long as a
 * typed card's code is kept; a claim answers the card with that code and says it is a stored method; the stored
 * method itself never leaves the vault with the session (replaced, deleted, expired or used).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiError } from '@switchyard/api';
import { loadBinData } from '@switchyard/bin-data';
import { checkoutSessionCreateSchema, checkoutSessionFieldsSchema } from '@switchyard/contracts';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { ServiceHost } from '@switchyard/service';
import { Buyers } from '../buyers/buyers.slice';
import { buyerDirectory } from '../payment-methods/buyer-directory';
import { PaymentMethods } from '../payment-methods/payment-methods.slice';
import { CardVault, loadVaultKey } from '../vault/card-vault';
import { keyRing, VaultKeys } from '../vault/vault-keys';
import { CheckoutSessions } from './checkout-sessions.slice';

const shopA = 'shop-a';
const NUMBER = '4111111111111111';
const SECURITY_CODE = '7391';
const GRACE_MS = 60_000;

let dir: string;
let storage: ServiceStorage;
let host: ServiceHost;
let vault: CardVault;
let sessions: CheckoutSessions;
let paymentMethods: PaymentMethods;
let clock: number;

beforeEach(async () => {
  clock = Date.parse('2026-01-01T00:00:00.000Z');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-checkout-stored-'));
  storage = openServiceStorage('transactions', { dataDir: dir });
  host = new ServiceHost({ store: storage.store, db: storage.db, now: () => new Date(clock) });
  vault = new CardVault(storage.db, {
    keys: new VaultKeys(storage.db, keyRing(loadVaultKey({}))),
    now: host.context.now,
  });
  const binData = loadBinData({});
  const buyers = new Buyers(host.context, { onDelete: async () => undefined });
  sessions = new CheckoutSessions(host.context, {
    vault,
    binData,
    expiryGraceMs: GRACE_MS,
    storedPaymentMethods: { usable: (merchantAccountId, id) => paymentMethods.usable(merchantAccountId, id) },
  });
  paymentMethods = new PaymentMethods(host.context, {
    vault,
    binData,
    buyers: buyerDirectory(buyers),
    checkoutSessions: sessions,
  });
  host.add(buyers, paymentMethods, sessions);
  await host.catchUp();
});
afterEach(async () => {
  await host.stop();
  await storage.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const storeCard = async (merchantAccountId = shopA) =>
  (
    await paymentMethods.create({
      merchant_account_id: merchantAccountId,
      body: { method: 'card', number: NUMBER, expiration_date: '11/30' } as never,
    })
  ).id;
const create = async (body: Record<string, unknown> = {}) =>
  (await sessions.create({ merchant_account_id: shopA, body: checkoutSessionCreateSchema.parse(body) })).id;
const attachStored = (sessionId: string, paymentMethodId: string, securityCode: string | undefined = SECURITY_CODE) =>
  sessions.attachFields({
    checkout_session_id: sessionId,
    body: checkoutSessionFieldsSchema.parse({
      payment_method: { method: 'id', id: paymentMethodId, ...(securityCode ? { security_code: securityCode } : {}) },
    }),
  });
const attachCard = (sessionId: string) =>
  sessions.attachFields({
    checkout_session_id: sessionId,
    body: checkoutSessionFieldsSchema.parse({
      payment_method: { method: 'card', number: NUMBER, expiration_date: '11/30' },
    }),
  });
const secretRows = (id: string) =>
  storage.db
    .prepare(
      'SELECT card_id, sealed_security_code, stored_payment_method FROM checkout_session_secrets WHERE session_id = ?',
    )
    .all(id) as {
    card_id: string;
    sealed_security_code: string | null;
    stored_payment_method: number;
  }[];

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('a stored payment method attached with its security code', () => {
  it('shows as the session’s card; its code is sealed with the stored card’s key, in the secrets table', async () => {
    const stored = await storeCard();
    const session = await create();
    await attachStored(session, stored);
    expect(sessions.get({ merchant_account_id: shopA, checkout_session_id: session }).payment_method).toEqual({
      type: 'payment-method',
      id: stored,
      method: 'card',
      scheme: 'visa',
      label: '1111',
      fingerprint: expect.any(String),
      details: { bin: '411111', card_type: 'credit', card_country: 'US', card_issuer_name: 'Switchyard Test Bank US' },
    });
    const [row, ...none] = secretRows(session);
    expect(none).toEqual([]);
    expect(row).toMatchObject({ card_id: stored, stored_payment_method: 1 });
    expect(row?.sealed_security_code).not.toContain(SECURITY_CODE);
    const everything = JSON.stringify(await storage.store.readAll());
    expect(everything).not.toContain(SECURITY_CODE);
    expect(everything).not.toContain(NUMBER);
  });

  it('is claimed once: the card with the code, marked stored; then the code is gone, the method stays', async () => {
    const stored = await storeCard();
    const session = await create();
    await attachStored(session, stored);
    const claimed = await sessions.claim(shopA, session, 'tx-1');
    expect(claimed).toMatchObject({
      cardId: stored,
      storedPaymentMethod: true,
      card: { number: NUMBER, expirationDate: '11/30', securityCode: SECURITY_CODE },
    });
    expect(secretRows(session)).toEqual([]);
    await sessions.delete({ merchant_account_id: shopA, checkout_session_id: session });
    expect(vault.reveal(shopA, stored)).toEqual({ number: NUMBER, expirationDate: '11/30' });
    expect(paymentMethods.usable(shopA, stored).id).toBe(stored);
  });

  it('deleted after it was chosen: the claim is refused (400 naming payment_method.id), the session not used', async () => {
    const stored = await storeCard();
    const session = await create();
    await attachStored(session, stored);
    await paymentMethods.delete({ merchant_account_id: shopA, payment_method_id: stored });
    const refused = await rejection(sessions.claim(shopA, session, 'tx-1'));
    expect(refused.toBody()).toMatchObject({
      status: 400,
      details: [{ pointer: '/payment_method/id', type: 'payment_method_not_found' }],
    });
    expect(sessions.find(shopA, session)?.usedByTransactionId).toBeNull();
  });

  it('is refused to become a payment method again, and the session stays usable', async () => {
    const stored = await storeCard();
    const session = await create();
    await attachStored(session, stored);
    const refused = await rejection(
      paymentMethods.create({ merchant_account_id: shopA, body: { method: 'checkout-session', id: session } as never }),
    );
    expect(refused.toBody()).toMatchObject({
      status: 400,
      details: [{ pointer: '/payment_method/id', type: 'checkout_session_holds_payment_method' }],
    });
    expect(vault.reveal(shopA, stored)).not.toBeNull();
    expect((await sessions.claim(shopA, session, 'tx-1')).cardId).toBe(stored);
  });

  it('replaced (by a typed card, another method, itself): only its code is forgotten, never the method', async () => {
    const first = await storeCard();
    const second = await storeCard();
    const session = await create();
    await attachStored(session, first);
    await attachStored(session, first, '1234');
    expect(secretRows(session).map((row) => row.card_id)).toEqual([first]);
    await attachStored(session, second);
    expect(secretRows(session).map((row) => row.card_id)).toEqual([second]);
    await attachCard(session);
    expect(secretRows(session).map((row) => row.stored_payment_method)).toEqual([0]);
    expect(vault.reveal(shopA, first)).not.toBeNull();
    expect(vault.reveal(shopA, second)).not.toBeNull();
    // The typed card replaced by a stored method leaves the vault, as any replaced typed card does.
    const typed = sessions.find(shopA, session)?.card?.cardId ?? '';
    await attachStored(session, first);
    expect(vault.find(shopA, typed)).toBeNull();
  });

  it('deleted or expired with the session: the code goes, the method stays', async () => {
    const stored = await storeCard();
    const deleted = await create();
    await attachStored(deleted, stored);
    await sessions.delete({ merchant_account_id: shopA, checkout_session_id: deleted });
    expect(secretRows(deleted)).toEqual([]);
    const abandoned = await create({ expires_in: 60 });
    await attachStored(abandoned, stored);
    clock += 60_000 + GRACE_MS;
    expect(await sessions.expireSessions()).toBe(1);
    expect(secretRows(abandoned)).toEqual([]);
    expect(vault.reveal(shopA, stored)).toEqual({ number: NUMBER, expirationDate: '11/30' });
  });

  it('is refused, storing nothing, when not the session account’s (400 naming payment_method.id)', async () => {
    const theirs = await storeCard('shop-b');
    const session = await create();
    const refused = await rejection(attachStored(session, theirs));
    expect(refused.toBody()).toMatchObject({
      status: 400,
      details: [{ location: 'body', pointer: '/payment_method/id', type: 'payment_method_not_found' }],
    });
    expect(secretRows(session)).toEqual([]);
    expect(sessions.find(shopA, session)?.card).toBeNull();
  });
});
