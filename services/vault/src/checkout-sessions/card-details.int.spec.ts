/**
 * The card details the secure fields' card number frame asks for (`vault.checkout-sessions.card-details`),
 * over a real store and the shipped sample BIN data: what a 6 to 8 digit prefix says (the longest range wins, so
 * `445566` has no country and `44556677` has one), and the session as the credential — unknown or deleted 404,
 * expired or used 400 — with nothing appended.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from '@switchyard/api';
import { loadBinData } from '@switchyard/bin-data';
import { checkoutSessionCreateSchema, checkoutSessionPatterns } from '@switchyard/contracts';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { ServiceHost } from '@switchyard/service';
import { EMBEDDED_CALL } from '@switchyard/rpc';
import { CardVault, loadVaultKey } from '../vault/card-vault';
import { keyRing, VaultKeys } from '../vault/vault-keys';
import { CheckoutSessions } from './checkout-sessions.slice';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';

const shop = 'shop-a';

let dir: string;
let storage: ServiceStorage;
let host: ServiceHost;
let sessions: CheckoutSessions;
let clock: number;

beforeEach(async () => {
  clock = Date.parse('2026-01-01T00:00:00.000Z');
  dir = createTestDataDir('card-details');
  storage = openServiceStorage('transactions', { dataDir: dir });
  host = new ServiceHost({ store: storage.store, db: storage.db, now: () => new Date(clock) });
  const vault = new CardVault(storage.db, {
    keys: new VaultKeys(storage.db, keyRing(loadVaultKey({}))),
    now: host.context.now,
  });
  sessions = new CheckoutSessions(host.context, { vault, binData: loadBinData({}) });
  host.add(sessions);
  await host.catchUp();
});
afterEach(async () => {
  await host.stop();
  await storage.close();
  removeTestDataDir(dir);
});

const open = async (body: Record<string, unknown> = {}) =>
  (await sessions.create({ merchant_account_id: shop, body: checkoutSessionCreateSchema.parse(body) })).id;
/** Through the RPC handler, as the gateway calls it. */
const cardDetails = (id: string, bin: string) =>
  sessions.rpcHandlers()[checkoutSessionPatterns.cardDetails]!({ checkout_session_id: id, bin }, EMBEDDED_CALL);

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('an open session', () => {
  it('gets what the BIN data says about the prefix, the longest range winning', async () => {
    const id = await open();
    expect(await cardDetails(id, '411111')).toEqual({
      country: 'US',
      scheme: 'visa',
      card_type: 'credit',
      additional_schemes: [],
    });
    expect(await cardDetails(id, '41111112')).toEqual({
      country: 'IE',
      scheme: 'visa',
      card_type: 'debit',
      additional_schemes: [],
    });
    expect(await cardDetails(id, '445566')).toEqual({
      country: null,
      scheme: 'visa',
      card_type: 'credit',
      additional_schemes: [],
    });
    expect(await cardDetails(id, '4455667')).toEqual({
      country: null,
      scheme: 'visa',
      card_type: 'credit',
      additional_schemes: [],
    });
    expect(await cardDetails(id, '44556677')).toEqual({
      country: 'US',
      scheme: 'visa',
      card_type: 'credit',
      additional_schemes: [],
    });
  });

  it('gets the scheme from the pattern alone for a BIN the data does not know', async () => {
    const id = await open();
    expect(await cardDetails(id, '400005')).toEqual({
      country: null,
      scheme: 'visa',
      card_type: null,
      additional_schemes: [],
    });
    expect(await cardDetails(id, '999999')).toEqual({
      country: null,
      scheme: null,
      card_type: null,
      additional_schemes: [],
    });
  });

  it('is asked with 6 to 8 digits only', async () => {
    const id = await open();
    for (const bin of ['41111', '411111111', '4111a1', '']) {
      const refused = await refusal(cardDetails(id, bin));
      expect(refused.status).toBe(400);
      expect(refused.details[0]).toMatchObject({ location: 'query', pointer: '/bin' });
    }
  });

  it('appends nothing', async () => {
    const id = await open();
    const before = (await storage.store.readStream(`checkout-session-${id}`)).length;
    await cardDetails(id, '41111111');
    expect(await storage.store.readStream(`checkout-session-${id}`)).toHaveLength(before);
  });
});

describe('the session as the credential', () => {
  it('unknown or deleted: 404', async () => {
    expect((await refusal(cardDetails(randomUUID(), '411111'))).status).toBe(404);
    const id = await open();
    await sessions.delete({ merchant_account_id: shop, checkout_session_id: id });
    expect((await refusal(cardDetails(id, '411111'))).status).toBe(404);
  });

  it('expired: 400 checkout_session_expired', async () => {
    const id = await open({ expires_in: 60 });
    clock += 61_000;
    const refused = await refusal(cardDetails(id, '411111'));
    expect(refused.status).toBe(400);
    expect(refused.details[0]).toMatchObject({
      location: 'path',
      pointer: '/session_id',
      type: 'checkout_session_expired',
    });
  });

  it('used by a transaction: 400 checkout_session_used', async () => {
    const id = await open();
    await sessions.attachFields({
      checkout_session_id: id,
      body: {
        payment_method: { method: 'card', number: '4111111111111111', expiration_date: '11/30', security_code: '123' },
      },
    });
    await sessions.claim(shop, id, randomUUID());
    const refused = await refusal(cardDetails(id, '411111'));
    expect(refused.status).toBe(400);
    expect(refused.details[0]).toMatchObject({ type: 'checkout_session_used' });
  });
});
