/**
 * An existing data directory keeps working: this release starts on a copy of the data directory that release 0.1.0
 * wrote (`tests/fixtures/release-0.1.0/`: every kind of resource, made by its `make-fixture.ts`) and answers every
 * read exactly as release 0.1.0 did.
 */
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { loadSettings } from '@switchyard/config';
import { startEmbedded, type EmbeddedService } from '@switchyard/standalone/src/embedded';
import { createTestDataDir, removeTestDataDir, signToken } from '@switchyard/testing';
import Database from 'better-sqlite3';
import { InProcessMessageBus } from '@switchyard/bus';
import { transactionsTopic, VAULT_STREAM_PREFIXES, type EventMessage } from '@switchyard/contracts';
import { SqliteEventStore } from '@switchyard/eventstore';
import { transactionsRelay } from '@switchyard/transactions';
import { loadGiftCardsKey } from '@switchyard/gift-cards';
import { GiftCardVault } from '@switchyard/gift-cards/src/vault/gift-card-vault';
import pino from 'pino';
import { answers, credentials, fixture, publicBaseUrl, withoutLastUse } from './release-0.1.0.fixture';

let service: EmbeddedService;
let dataDir: string;
let base: string;
let token: string;

beforeAll(async () => {
  dataDir = createTestDataDir('upgrade-0.1.0');
  fs.cpSync(path.join(fixture, 'data-dir'), dataDir, { recursive: true });
  const settings = loadSettings({
    DATA_DIR: dataDir,
    PUBLIC_BASE_URL: publicBaseUrl,
    LOG_LEVEL: 'silent',
    DEMO_CHECKOUT: 'false',
    JWT_VERIFY_WORKERS: '0',
  });
  service = await startEmbedded(settings, pino({ level: 'silent' }));
  await service.gateway.app.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${(service.gateway.app.getHttpServer().address() as AddressInfo).port}`;
  token = await signToken({
    kid: credentials.administrator.kid,
    privateKeyPem: credentials.administrator.private_key,
    expiresIn: 600,
  });
});

afterAll(async () => {
  await service?.stop();
  if (dataDir) removeTestDataDir(dataDir);
});

it('holds answers for every kind of resource', () => {
  const kinds = new Set(answers.map((answer) => answer.path.split(/[/?]/)[1]));
  for (const kind of [
    'merchant-accounts',
    'api-key-pairs',
    'payment-services',
    'flows',
    'buyers',
    'payment-methods',
    'gift-cards',
    'checkout',
    'digital-wallets',
    'transactions',
    'refunds',
    'webhook-subscriptions',
  ]) {
    expect(kinds).toContain(kind);
  }
});

it.each(answers.map((answer) => [`${answer.account ?? '-'} ${answer.path}`, answer] as const))(
  'answers %s as release 0.1.0 did',
  async (_, answer) => {
    const response = await fetch(`${base}${answer.path}`, {
      headers: {
        authorization: `Bearer ${token}`,
        ...(answer.account ? { 'x-service-merchant-account-id': answer.account } : {}),
      },
    });
    expect(response.status).toBe(answer.status);
    const body = (await response.json()) as unknown;
    if (!answer.path.startsWith('/api-key-pairs')) return expect(body).toEqual(answer.body);
    expectLaterUse(body, answer.body);
    expect(withoutLastUse(body)).toEqual(withoutLastUse(answer.body));
  },
);

/** A key's `last_used_at` moves with every use (the fixture's own reads included): only never earlier. */
const keysOf = (body: unknown): { id: string; last_used_at: string | null }[] => {
  const value = body as {
    items?: { id: string; last_used_at: string | null }[];
    id?: string;
    last_used_at?: string | null;
  };
  return value.items ?? (value.id ? [{ id: value.id, last_used_at: value.last_used_at ?? null }] : []);
};
function expectLaterUse(now: unknown, then: unknown): void {
  const before = new Map(keysOf(then).map((key) => [key.id, key.last_used_at]));
  for (const key of keysOf(now)) {
    const was = before.get(key.id);
    if (was) expect(key.last_used_at! >= was).toBe(true);
  }
}

/**
 * Event schema versions (issue 22, item 14). Release 0.1.0 wrote every event without a version (version 1); this
 * release writes `TransactionCreated` version 2, which names the vault card and its use (`vaultCard`), and reads
 * version 1 through its upcaster. Exercised on the fixture: the one-off card shredder, the relay and new payments.
 * These run after the answers above, which this release gave on the same upcast data.
 */
describe('event schema versions on the release 0.1.0 data directory', () => {
  interface RawEvent {
    stream_id: string;
    type: string;
    data: string;
    metadata: string;
  }
  const rawEvents = (file: string, type: string): RawEvent[] => {
    const db = new Database(file, { readonly: true });
    try {
      return db
        .prepare('SELECT stream_id, type, data, metadata FROM events WHERE type = ? ORDER BY position')
        .all(type) as RawEvent[];
    } finally {
      db.close();
    }
  };
  const vaultCardIds = (file: string): string[] => {
    const db = new Database(file, { readonly: true });
    try {
      return (db.prepare('SELECT id FROM vault_cards').all() as { id: string }[]).map((row) => row.id);
    } finally {
      db.close();
    }
  };
  /** What 0.1.0 kept each card for, read from the version 1 details directly (not through this release's upcaster). */
  const createdIn0_1_0 = () => {
    const copy = path.join(createTestDataDir('upgrade-0.1.0-raw'), 'transactions.db');
    fs.copyFileSync(path.join(fixture, 'data-dir', 'transactions.db'), copy);
    const events = rawEvents(copy, 'TransactionCreated');
    const cards = vaultCardIds(copy);
    removeTestDataDir(path.dirname(copy));
    return {
      cards,
      created: events.map((event) => {
        const details = (
          JSON.parse(event.data) as {
            details: {
              instrumentType?: string;
              store?: boolean;
              checkoutSessionId?: string;
              paymentMethod?: { id: string | null };
            };
          }
        ).details;
        const oneOff = details.instrumentType === 'pan' && !details.store && !details.checkoutSessionId;
        return {
          streamId: event.stream_id,
          metadata: JSON.parse(event.metadata) as Record<string, unknown>,
          cardId: details.paymentMethod?.id ?? null,
          oneOff,
        };
      }),
    };
  };

  it('finds version 1 events in the fixture, and one-off cards 0.1.0 kept in its vault', () => {
    const { cards, created } = createdIn0_1_0();
    expect(created.length).toBeGreaterThan(10);
    for (const event of created) expect(event.metadata.schemaVersion).toBeUndefined();
    const oneOff = created.filter((event) => event.oneOff).map((event) => event.cardId);
    expect(oneOff.length).toBeGreaterThan(5);
    expect(cards).toEqual(expect.arrayContaining(oneOff));
  });

  it('upcasts them: every one-off card of a completed payment is shredded, every other card is kept', async () => {
    await service.transactions.catchUp();
    const { created } = createdIn0_1_0();
    const left = new Set(vaultCardIds(path.join(dataDir, 'vault.db')));
    for (const event of created.filter((e) => e.cardId))
      expect(left.has(event.cardId!), `${event.streamId}: card ${event.cardId}`).toBe(!event.oneOff);
  });

  it('relays version 1 events in their current shape: version 2 with the vault card named', async () => {
    const store = new SqliteEventStore(path.join(dataDir, 'transactions.db'));
    const bus = new InProcessMessageBus({ publishWaitsForConsumers: true });
    const checkpoints = new Database(':memory:');
    const messages: EventMessage[] = [];
    await bus.subscribe({
      groupId: 'upgrade-check',
      topics: [transactionsTopic],
      handler: async (message) => {
        messages.push(JSON.parse(message.value) as EventMessage);
      },
    });
    const relay = transactionsRelay({ store, db: checkpoints, close: async () => undefined }, bus, {
      pollIntervalMs: 20,
      onError: () => undefined,
    });
    try {
      await relay.flush();
    } finally {
      await relay.stop();
      await bus.close();
      await store.close();
      checkpoints.close();
    }
    const created = messages.filter((message) => message.type === 'TransactionCreated');
    const { created: raw } = createdIn0_1_0();
    expect(created.length).toBeGreaterThanOrEqual(raw.length);
    for (const event of raw) {
      const relayed = created.find((message) => message.stream_id === event.streamId);
      expect(relayed?.metadata).toMatchObject({ schemaVersion: 2 });
      expect((relayed!.data as { vaultCard: unknown }).vaultCard).toEqual(
        event.cardId ? { id: event.cardId, use: expect.any(String) } : null,
      );
      if (event.oneOff) expect(relayed?.data).toMatchObject({ vaultCard: { use: 'one_off' } });
    }
  });

  it('writes version 2 for new payments beside the old ones, and shreds their one-off cards too', async () => {
    const paid = await fetch(`${base}/transactions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        amount: 1_500,
        currency: 'USD',
        payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30', security_code: '123' },
      }),
    });
    expect(paid.status).toBe(201);
    const { id, payment_method: method } = (await paid.json()) as { id: string; payment_method: { id: string } };
    await service.transactions.catchUp();
    const written = rawEvents(path.join(dataDir, 'transactions.db'), 'TransactionCreated').find(
      (event) => event.stream_id === `transaction-${id}`,
    );
    expect(JSON.parse(written!.metadata)).toMatchObject({ schemaVersion: 2 });
    expect(JSON.parse(written!.data)).toMatchObject({ vaultCard: { id: method.id, use: 'one_off' } });
    const completed = rawEvents(path.join(dataDir, 'transactions.db'), 'CreateRequestCompleted').find(
      (event) => event.stream_id === `transaction-${id}`,
    );
    expect(JSON.parse(completed!.metadata)).toMatchObject({ schemaVersion: 1 });
    expect(vaultCardIds(path.join(dataDir, 'vault.db'))).not.toContain(method.id);
  });
});

/**
 * The vault has its own store (services/vault, issue 19): the first start moved release 0.1.0's buyers, payment
 * methods, network tokens, checkout sessions and digital wallets — their streams, card rows and keys — from
 * transactions.db into vault.db. The answers above (every card, buyer and payment method reads back as 0.1.0 gave
 * it) ran on the moved data.
 */
describe('the vault moved to its own store', () => {
  const read = <T>(file: string, sql: string): T[] => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare(sql).all() as T[];
    } finally {
      db.close();
    }
  };
  const vaultEvents = (file: string) =>
    read<Record<string, unknown>>(
      file,
      `SELECT id, stream_id, revision, type, data, metadata, recorded_at FROM events ORDER BY position`,
    ).filter((event) => VAULT_STREAM_PREFIXES.some((prefix) => (event.stream_id as string).startsWith(prefix)));
  const cardRows = (file: string) =>
    read<{ id: string; merchant_account_id: string; pan_ciphertext: Buffer }>(
      file,
      'SELECT id, merchant_account_id, pan_ciphertext FROM vault_cards ORDER BY id',
    );

  it('holds every vault event of 0.1.0 in vault.db, ids, revisions and times kept', () => {
    const old = vaultEvents(path.join(fixture, 'data-dir', 'transactions.db'));
    expect(old.length).toBeGreaterThan(10);
    expect(vaultEvents(path.join(dataDir, 'vault.db')).slice(0, old.length)).toEqual(old);
  });

  it('leaves no card ciphertext, key or vault event in transactions.db', () => {
    const old = cardRows(path.join(fixture, 'data-dir', 'transactions.db'));
    expect(old.length).toBeGreaterThan(5);
    const file = path.join(dataDir, 'transactions.db');
    expect(cardRows(file)).toEqual([]);
    expect(read(file, 'SELECT id FROM vault_data_keys')).toEqual([]);
    // The cards kept (all but the one-off cards of completed payments) are in vault.db: the schema versions above.
    // The moved streams are read and relayed by the vault only (the transactions store reads past them).
    expect(vaultEvents(file).length).toBeGreaterThan(0); // still in the old log, which is append-only
  });

  it('pays with a stored card of 0.1.0, its number opened by the moved keys', async () => {
    const stored = answers.find((answer) => answer.path === '/payment-methods/a64e291c-cad4-40cc-af21-4c381c401f8f');
    const method = stored!.body as { id: string; label: string; buyer: { id: string } | null };
    const paid = await fetch(`${base}/transactions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'x-service-merchant-account-id': 'shop',
      },
      body: JSON.stringify({
        amount: 1_200,
        currency: 'USD',
        ...(method.buyer ? { buyer_id: method.buyer.id } : {}),
        payment_method: { method: 'id', id: method.id, security_code: '123' },
      }),
    });
    const body = (await paid.json()) as { status: string; payment_method: { id: string; label: string } };
    expect(paid.status, JSON.stringify(body)).toBe(201);
    expect(body.status).toBe('authorization_succeeded');
    expect(body.payment_method).toMatchObject({ id: method.id, label: method.label });
  });
});

/**
 * Gift cards have their own service and store (services/gift-cards): the first start moved release 0.1.0's stored
 * gift cards — their streams and their number/PIN ciphertexts — from transactions.db into gift-cards.db, as they were.
 */
describe('stored gift cards moved to the gift cards service', () => {
  const read = <T>(file: string, sql: string): T[] => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare(sql).all() as T[];
    } finally {
      db.close();
    }
  };
  const giftCardEvents = (file: string) =>
    read<Record<string, unknown>>(
      file,
      `SELECT id, stream_id, revision, type, data, metadata, recorded_at FROM events WHERE stream_id LIKE 'gift-card-%' ORDER BY position`,
    );
  const vaultRows = (file: string) => read<Record<string, unknown>>(file, 'SELECT * FROM vault_gift_cards ORDER BY id');

  it('holds every gift card event and ciphertext of 0.1.0 in gift-cards.db, ids, revisions and times kept', () => {
    const old = giftCardEvents(path.join(fixture, 'data-dir', 'transactions.db'));
    expect(old.length).toBeGreaterThan(0);
    expect(giftCardEvents(path.join(dataDir, 'gift-cards.db')).slice(0, old.length)).toEqual(old);
    const rows = vaultRows(path.join(fixture, 'data-dir', 'transactions.db'));
    expect(rows.length).toBeGreaterThan(0);
    const moved = vaultRows(path.join(dataDir, 'gift-cards.db'));
    const owners = (list: Record<string, unknown>[]) =>
      list.map(({ id, merchant_account_id, created_at }) => ({ id, merchant_account_id, created_at }));
    expect(owners(moved)).toEqual(expect.arrayContaining(owners(rows)));
    expect(vaultRows(path.join(dataDir, 'transactions.db'))).toEqual([]); // erased from the old file
    // Sealed again under the gift cards key (DATA_DIR/gift-cards.key), which opens every one of them on its own.
    const db = new Database(path.join(dataDir, 'gift-cards.db'), { readonly: true });
    try {
      const vault = new GiftCardVault(db, { key: loadGiftCardsKey({ dataDir }) });
      for (const row of rows) {
        expect(moved.find((candidate) => candidate.id === row.id)).toMatchObject({ key_version: 'gift-cards-key' });
        expect(vault.reveal(row.merchant_account_id as string, row.id as string)?.number).toMatch(/^\d{16,19}$/);
      }
    } finally {
      db.close();
    }
  });

  it('no longer relays them on transactions.events', async () => {
    const store = new SqliteEventStore(path.join(dataDir, 'transactions.db'));
    const bus = new InProcessMessageBus({ publishWaitsForConsumers: true });
    const checkpoints = new Database(':memory:');
    const streams: string[] = [];
    await bus.subscribe({
      groupId: 'upgrade-gift-cards',
      topics: [transactionsTopic],
      handler: async (message) => void streams.push((JSON.parse(message.value) as EventMessage).stream_id),
    });
    const relay = transactionsRelay({ store, db: checkpoints, close: async () => undefined }, bus, {
      pollIntervalMs: 20,
      onError: () => undefined,
    });
    try {
      await relay.flush();
    } finally {
      await relay.stop();
      await bus.close();
      await store.close();
      checkpoints.close();
    }
    expect(streams.length).toBeGreaterThan(10);
    expect(streams.filter((stream) => stream.startsWith('gift-card-'))).toEqual([]);
    // Nor the vault's (they are on vault.events).
    expect(streams.filter((stream) => VAULT_STREAM_PREFIXES.some((prefix) => stream.startsWith(prefix)))).toEqual([]);
  });
});
