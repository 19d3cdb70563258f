/**
 * A data directory written before the gift cards service had a store of its own: stored cards as streams of
 * transactions.db, their numbers and PINs in its `vault_gift_cards`, an issued card's answer kept for its
 * Idempotency-Key in its `idempotency_keys` — written here the way that release's gift cards slice wrote them. The
 * first start moves all of it into gift-cards.db, and the service serves it as before.
 */
import { giftCardLegacyKeysOf } from '@switchyard/vault';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { SqliteEventStore } from '@switchyard/eventstore';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';
import { IdempotencyStore } from '@switchyard/transactions';
import Database from 'better-sqlite3';
import { GiftCardsService } from './gift-cards-service';
import { GIFT_CARDS_MIGRATION, openGiftCardsStorage } from './gift-cards-storage';
import { GiftCardVault } from './vault/gift-card-vault';

/** The transactions service's vault root, which sealed the earlier release's gift cards; and the gift cards key now. */
const legacyKey = randomBytes(32);
const key = randomBytes(32);
const fingerprintKey = randomBytes(32);
const account = 'shop-a';
const cardId = randomUUID();
const secret = { number: '6033991234567894321', pin: '0150073' };
const issued = { number: '6033990000111122223', pin: '4455' };
const issueBody = { theme: 'birthday', amount: 5000, currency: 'USD' };
const giftCardService = { id: randomUUID(), definitionId: 'mock-gift-card', displayName: 'Gift cards' };

let dataDir: string;

/**
 * What the transactions service of the earlier release left in DATA_DIR/transactions.db; or, in EventStoreDB mode,
 * its events in `events` (a store standing in for its EventStoreDB) and its tables in DATA_DIR/transactions-read.db.
 */
async function writeEarlierRelease(events?: SqliteEventStore): Promise<void> {
  const store = events ?? new SqliteEventStore(path.join(dataDir, 'transactions.db'));
  const tables = events ? new Database(path.join(dataDir, 'transactions-read.db')) : store.database;
  try {
    await store.append(
      `gift-card-${cardId}`,
      [
        {
          type: 'GiftCardStored',
          data: {
            id: cardId,
            merchantAccountId: account,
            bin: '603399',
            subBin: '1234',
            last4: '4321',
            currency: 'USD',
            expirationDate: null,
            buyerId: null,
            buyerExternalIdentifier: 'buyer-1',
            giftCardService,
            at: '2026-01-02T03:04:05.000Z',
          },
        },
      ],
      { expectedRevision: 'no_stream' },
    );
    await store.append(`transaction-${randomUUID()}`, [{ type: 'TransactionCreated', data: {} }], {
      expectedRevision: 'no_stream',
    });
    const vault = new GiftCardVault(tables, { key: legacyKey });
    vault.store(account, cardId, secret);
    tables.exec('ALTER TABLE vault_gift_cards DROP COLUMN key_version'); // as that release's table was
    const idempotency = new IdempotencyStore(tables);
    const operation = 'transactions.gift-cards.issue';
    await idempotency.runRequest(
      { merchantAccountId: account, operation, key: 'issue-1', body: issueBody, fingerprintKey },
      async () => ({
        summary: { type: 'gift-card', merchant_account_id: account },
        sealed: vault.seal(issued, [account, operation, 'issue-1']),
      }),
    );
  } finally {
    if (events) tables.close();
    else await store.close();
  }
}

/** No gift card service: only what was moved can answer. */
const noServices = {
  activeGiftCardService: async () => null,
  serviceRef: async () => null,
  giftCardService: async () => null,
};

beforeEach(() => {
  dataDir = createTestDataDir('gift-cards-storage');
});
afterEach(() => removeTestDataDir(dataDir));

it('moves the stored cards, their numbers and PINs and the kept answers, seals them under the gift cards key, and serves them as before', async () => {
  await writeEarlierRelease();
  const storage = await openGiftCardsStorage({ dataDir });
  const service = new GiftCardsService({
    store: storage.store,
    db: storage.db,
    key,
    legacyKeys: giftCardLegacyKeysOf(legacyKey),
    fingerprintKey,
    services: noServices,
  });
  try {
    expect(storage.migration).toEqual({
      ran: true,
      copied: 1,
      alreadyPresent: 0,
      rows: { vault_gift_cards: 1, idempotency_keys: 1 },
    });
    // The old file keeps no ciphertext of a moved card.
    const old = new Database(path.join(dataDir, 'transactions.db'), { readonly: true });
    expect(old.prepare('SELECT count(*) AS n FROM vault_gift_cards').get()).toEqual({ n: 0 });
    old.close();
    await service.start();
    expect(await service.giftCards.get({ merchant_account_id: account, gift_card_id: cardId })).toMatchObject({
      id: cardId,
      last4: '4321',
      buyer: { external_identifier: 'buyer-1' },
      created_at: '2026-01-02T03:04:05.000Z',
    });
    expect(await service.credentialsFor(account, cardId)).toEqual(secret);
    // Sealed again under the gift cards key at the start: the legacy key is needed no more.
    expect(new GiftCardVault(storage.db, { key }).reveal(account, cardId)).toEqual(secret);
    // The same key and body: the answer of the earlier release, without a gift card service to ask.
    const replay = await service.giftCards.issue({
      merchant_account_id: account,
      body: issueBody,
      idempotency_key: 'issue-1',
    } as never);
    expect(replay).toMatchObject(issued);
  } finally {
    await service.stop();
    await storage.close();
  }
  // Read from transactions.db no more: a later start copies nothing, even of a stream added there since.
  const old = new SqliteEventStore(path.join(dataDir, 'transactions.db'));
  await old.append(`gift-card-${randomUUID()}`, [{ type: 'GiftCardStored', data: {} }], {
    expectedRevision: 'no_stream',
  });
  await old.close();
  const again = await openGiftCardsStorage({ dataDir });
  try {
    expect(again.migration).toEqual({ ran: false, copied: 0, alreadyPresent: 0 });
    const db = new Database(path.join(dataDir, 'gift-cards.db'), { readonly: true });
    expect(db.prepare('SELECT name FROM event_store_stream_migrations').all()).toEqual([
      { name: GIFT_CARDS_MIGRATION },
    ]);
    expect(db.prepare('SELECT count(*) AS n FROM events').get()).toEqual({ n: 1 });
    db.close();
  } finally {
    await again.close();
  }
});

it('in EventStoreDB mode, moves the streams from the transactions store and the tables from transactions-read.db', async () => {
  const transactionEvents = new SqliteEventStore(path.join(dataDir, 'standing-in-for-eventstoredb.db'));
  try {
    await writeEarlierRelease(transactionEvents);
    const storage = await openGiftCardsStorage({ dataDir, transactionEvents });
    const service = new GiftCardsService({
      store: storage.store,
      db: storage.db,
      key,
      legacyKeys: giftCardLegacyKeysOf(legacyKey),
      fingerprintKey,
      services: noServices,
    });
    try {
      expect(storage.migration).toEqual({
        ran: true,
        copied: 1,
        alreadyPresent: 0,
        rows: { vault_gift_cards: 1, idempotency_keys: 1 },
      });
      const old = new Database(path.join(dataDir, 'transactions-read.db'), { readonly: true });
      expect(old.prepare('SELECT count(*) AS n FROM vault_gift_cards').get()).toEqual({ n: 0 });
      old.close();
      await service.start();
      expect(await service.giftCards.get({ merchant_account_id: account, gift_card_id: cardId })).toMatchObject({
        id: cardId,
        last4: '4321',
      });
      expect(await service.credentialsFor(account, cardId)).toEqual(secret);
    } finally {
      await service.stop();
      await storage.close();
    }
  } finally {
    await transactionEvents.close();
  }
});

it('starts empty on a new data directory, and records that nothing was there to move', async () => {
  const storage = await openGiftCardsStorage({ dataDir });
  try {
    expect(storage.migration).toEqual({
      ran: true,
      copied: 0,
      alreadyPresent: 0,
      rows: { vault_gift_cards: 0, idempotency_keys: 0 },
    });
    expect(await storage.store.readAll()).toEqual([]);
  } finally {
    await storage.close();
  }
});
