/**
 * Issue 19 item 4: the card data of a `POST /transactions`, handed to the vault by the gateway
 * (`vault.cards.hand-over`) before the transactions service sees the request. The answer holds the card's id, the
 * security code's alias and a keyed digest (the Idempotency-Key fingerprint's stand-in), never a card value; the card
 * goes under the data key of the request's buyer when it exists; a card no payment takes in time is removed, whatever
 * restarts came between (its wait is a row written with it, `vault_card_hand_overs`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  legacyForgetSecurityCodePattern,
  vaultPatterns,
  vaultPortPatterns,
  type CardHandOver,
  type CardHandOverRequest,
} from '@switchyard/contracts';
import { SqliteEventStore } from '@switchyard/eventstore';
import { EMBEDDED_CALL } from '@switchyard/rpc';
import { VaultService } from './vault-service';

const account = 'shop-hand-over';
const NUMBER = '4111111111111111';
const CVC = '123';

let dir: string;
let store: SqliteEventStore;
let vault: VaultService;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-hand-over-'));
  store = new SqliteEventStore(path.join(dir, 'vault.db'));
  vault = new VaultService({ store, db: store.database, vaultKey: Buffer.alloc(32, 7), cardHandOverTtlMs: 50 });
  await vault.catchUp();
});

afterEach(async () => {
  await vault.stop();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Through the RPC handler, as the gateway calls it. */
const handOver = async (request: Omit<CardHandOverRequest, 'merchant_account_id'>): Promise<CardHandOver> => {
  const answer = await vault.rpcHandlers()[vaultPatterns.handOverCard]!(
    { merchant_account_id: account, ...request },
    EMBEDDED_CALL,
  );
  const json = JSON.stringify(answer);
  expect(json).not.toContain(NUMBER);
  expect(json).not.toContain(`"${CVC}"`);
  return answer as CardHandOver;
};

const card = (overrides: Partial<NonNullable<CardHandOverRequest['card']>> = {}) => ({
  number: NUMBER,
  expiration_date: '12/30',
  security_code: CVC,
  ...overrides,
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it('stores the card and answers its id, the alias of its security code and a digest', async () => {
  const answer = await handOver({ card: card() });
  expect(answer.security_code_alias).toMatch(/^tok[0-9A-Za-z]{32}$/);
  expect(vault.slices.cardAliases.resolve(account, answer.security_code_alias as string)).toBe(CVC);
  expect(vault.slices.vault.reveal(account, answer.card_id as string)).toEqual({
    number: NUMBER,
    expirationDate: '12/30',
  });
  expect(answer.digest).toMatch(/^[0-9a-f]{64}$/);
});

it('the digest is the same for the same card data, and another for another number or security code', async () => {
  const first = await handOver({ card: card() });
  const same = await handOver({ card: card() });
  expect(same.card_id).not.toBe(first.card_id);
  expect(same.digest).toBe(first.digest);
  const digests = [
    (await handOver({ card: card({ number: '5555555555554444' }) })).digest,
    (await handOver({ card: card({ security_code: '124' }) })).digest,
    (await handOver({ card: { number: NUMBER, expiration_date: '12/30' } })).digest,
    (await handOver({ security_code: CVC })).digest,
  ];
  expect(new Set([first.digest, ...digests]).size).toBe(5);
});

it("a stored method's security code alone: an alias, no card", async () => {
  const answer = await handOver({ security_code: CVC });
  expect(answer.card_id).toBeNull();
  expect(vault.slices.cardAliases.resolve(account, answer.security_code_alias as string)).toBe(CVC);
});

it("goes under the buyer's data key when the buyer exists, and without one when it does not", async () => {
  const buyer = await vault.slices.buyers.create({
    merchant_account_id: account,
    body: { display_name: 'Ada' },
  } as never);
  const theirs = await handOver({ card: card(), buyer: { buyer_id: buyer.id } });
  const unknown = await handOver({ card: card(), buyer: { buyer_id: '00000000-0000-4000-8000-00000000dead' } });
  for (const id of [theirs.card_id, unknown.card_id])
    expect(vault.slices.vault.find(account, id as string)).not.toBeNull();
  const buyerOf = (id: string | null) =>
    (
      store.database.prepare('SELECT buyer_id FROM vault_cards WHERE id = ?').get(id) as
        | { buyer_id: string | null }
        | undefined
    )?.buyer_id ?? null;
  expect(buyerOf(theirs.card_id)).toBe(buyer.id);
  expect(buyerOf(unknown.card_id)).toBeNull();
});

it('a take without aliases only claims the card: it answers whether the card is there, and decrypts nothing', async () => {
  const taken = await handOver({ card: card() });
  const reveal = vi.spyOn(vault.slices.vault, 'reveal');
  expect(await vault.port.takeHandedOverCard(account, taken.card_id as string)).toBe(true);
  vault.slices.vault.remove(account, taken.card_id as string);
  expect(await vault.port.takeHandedOverCard(account, taken.card_id as string)).toBe(false);
  expect(reveal).not.toHaveBeenCalled();
  // With aliases (a transactions process of a release whose hand-over answered only the card's id): the summary too.
  const again = await handOver({ card: card() });
  expect(
    await vault.port.takeHandedOverCard(account, again.card_id as string, { aliases: { securityCode: null } }),
  ).toMatchObject({ id: again.card_id, last4: '1111', aliases: { number: expect.stringMatching(/^tok/) } });
});

it('a card no payment takes in time is removed; one taken stays', async () => {
  const taken = await handOver({ card: card() });
  const forgotten = await handOver({ card: card() });
  expect(await vault.port.takeHandedOverCard(account, taken.card_id as string)).toBe(true);
  expect(vault.port.sweepHandedOverCards()).toBe(0); // not yet due
  await sleep(80);
  expect(vault.port.sweepHandedOverCards()).toBe(1);
  expect(vault.slices.vault.find(account, forgotten.card_id as string)).toBeNull();
  expect(vault.slices.vault.find(account, taken.card_id as string)).not.toBeNull();
});

it('a restart forgets no hand-over: a card no payment took is removed after it, one taken before it stays', async () => {
  const taken = await handOver({ card: card() });
  const forgotten = await handOver({ card: card() });
  expect(await vault.port.takeHandedOverCard(account, taken.card_id as string)).toBe(true);
  // Stopped before the take's wait was released on its own: the stop releases it.
  await vault.stop();
  vault = new VaultService({ store, db: store.database, vaultKey: Buffer.alloc(32, 7), cardHandOverTtlMs: 50 });
  await vault.catchUp();
  await sleep(80);
  expect(vault.port.sweepHandedOverCards()).toBe(1);
  expect(vault.slices.vault.find(account, forgotten.card_id as string)).toBeNull();
  expect(vault.slices.vault.find(account, taken.card_id as string)).not.toBeNull();
  expect(vault.port.sweepHandedOverCards()).toBe(0);
});

it('a taken card is never swept while its release waits, and the release is one commit for the takes of its moment', async () => {
  const cards = await Promise.all([handOver({ card: card() }), handOver({ card: card() })]);
  for (const { card_id } of cards) await vault.port.takeHandedOverCard(account, card_id as string);
  const waiting = () =>
    (store.database.prepare('SELECT count(*) AS n FROM vault_card_hand_overs').get() as { n: number }).n;
  expect(waiting()).toBe(2);
  await sleep(80); // past the TTL, before the release
  expect(vault.port.sweepHandedOverCards()).toBe(0);
  await sleep(300);
  expect(waiting()).toBe(0);
  for (const { card_id } of cards) expect(vault.slices.vault.find(account, card_id as string)).not.toBeNull();
});

it('a taken card kept for a stored method is released at once: a crash before the batched release does not lose it', async () => {
  const kept = await handOver({ card: card() });
  expect(await vault.port.takeHandedOverCard(account, kept.card_id as string)).toBe(true);
  await vault.port.recordStoreRequested(account, {
    card: kept.card!,
    transactionId: '00000000-0000-4000-8000-000000000001',
    paymentServiceId: '00000000-0000-4000-8000-000000000002',
    buyerId: null,
    externalIdentifier: null,
  });
  // Killed -9 right after (its pending releases never written): another process on the same files sweeps.
  const crashed = vault;
  vault = new VaultService({ store, db: store.database, vaultKey: Buffer.alloc(32, 7), cardHandOverTtlMs: 50 });
  try {
    await vault.catchUp();
    await sleep(80);
    expect(vault.port.sweepHandedOverCards()).toBe(0);
    expect(vault.slices.vault.find(account, kept.card_id as string)).not.toBeNull();
  } finally {
    await crashed.stop();
  }
});

it("forgets security codes' aliases many at a call, and one at a call for a transactions process of an earlier release", async () => {
  const handlers = vault.portRpcHandlers(1_000);
  const aliases = await Promise.all(
    [0, 1, 2].map(async () => (await handOver({ card: card() })).security_code_alias as string),
  );
  const live = (alias: string) => {
    try {
      vault.slices.cardAliases.resolve(account, alias);
      return true;
    } catch {
      return false;
    }
  };
  expect(aliases.map(live)).toEqual([true, true, true]);
  await handlers[vaultPortPatterns.forgetSecurityCodes]!(
    [aliases.slice(0, 2).map((alias) => ({ merchantAccountId: account, alias }))],
    EMBEDDED_CALL,
  );
  expect(aliases.map(live)).toEqual([false, false, true]);
  await handlers[legacyForgetSecurityCodePattern]!([account, aliases[2]], EMBEDDED_CALL);
  expect(live(aliases[2]!)).toBe(false);
});
