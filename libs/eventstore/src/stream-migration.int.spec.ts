import BetterSqlite3 from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { RecordedEvent } from './event-store';
import { SqliteEventStore } from './sqlite/sqlite-event-store';
import { migrateStreams, readStreamsWithPrefixes, streamMigrationDone, withoutStreams } from './stream-migration';

const directory = mkdtempSync(join(tmpdir(), 'switchyard-stream-migration-'));
const file = (name: string): string => join(directory, `${name}-${randomUUID()}.db`);
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** An old store with gift card streams interleaved with transaction streams, the way the log really looks. */
async function oldStore(path: string): Promise<void> {
  const store = new SqliteEventStore(path);
  try {
    await store.append(
      'gift-card-1',
      [{ type: 'GiftCardStored', data: { n: 1 }, metadata: { schemaVersion: 1, correlationId: 'c-1' } }],
      {
        expectedRevision: 'no_stream',
      },
    );
    await store.append('transaction-1', [{ type: 'TransactionCreated', data: { t: 1 } }], {
      expectedRevision: 'no_stream',
    });
    await store.append('gift-card-2', [{ type: 'GiftCardStored', data: { n: 2 } }], { expectedRevision: 'no_stream' });
    await new Promise((done) => setTimeout(done, 5)); // a later recorded time for the later events
    await store.append(
      'gift-card-1',
      [
        { type: 'GiftCardBalanceChecked', data: { n: 3 } },
        { type: 'GiftCardDeleted', data: { n: 4 } },
      ],
      {
        expectedRevision: 0,
      },
    );
    await store.append('gift-cards-index', [{ type: 'Other', data: {} }], { expectedRevision: 'no_stream' });
    await store.append('transaction-1', [{ type: 'TransactionUpdated', data: { t: 2 } }], { expectedRevision: 0 });
  } finally {
    await store.close();
  }
}

const comparable = (events: readonly RecordedEvent[]) =>
  events.map(({ id, streamId, type, data, metadata, revision, recordedAt }) => ({
    id,
    streamId,
    type,
    data,
    metadata,
    revision,
    recordedAt,
  }));

async function readAllOf(path: string): Promise<RecordedEvent[]> {
  const store = new SqliteEventStore(path);
  try {
    return await store.readAll();
  } finally {
    await store.close();
  }
}

describe('migrateStreams', () => {
  it('copies the streams of the prefixes as they were, in log order, and nothing else', async () => {
    const source = file('transactions');
    await oldStore(source);
    const expected = (await readAllOf(source)).filter((event) => event.streamId.startsWith('gift-card-'));
    expect(expected).toHaveLength(4);

    const target = new SqliteEventStore(file('gift-cards'));
    try {
      const result = migrateStreams({
        name: 'gift-cards',
        sourcePath: source,
        target: target.database,
        streamPrefixes: ['gift-card-'],
      });
      expect(result).toEqual({ ran: true, copied: 4, alreadyPresent: 0 });
      expect(comparable(await target.readAll())).toEqual(comparable(expected));
      expect(comparable(await target.readStream('gift-card-1'))).toEqual(
        comparable(expected.filter((e) => e.streamId === 'gift-card-1')),
      );
      expect(await target.readStream('transaction-1')).toEqual([]);
      expect(await target.readStream('gift-cards-index')).toEqual([]);
      // The new service goes on where the old one stopped.
      const next = await target.append('gift-card-1', [{ type: 'GiftCardUpdated', data: {} }], { expectedRevision: 2 });
      expect(next.nextExpectedRevision).toBe(3);
      expect(streamMigrationDone(target.database, 'gift-cards')).toBe(true);
    } finally {
      await target.close();
    }
    // The old store is only read.
    expect(await readAllOf(source)).toHaveLength(7);
  });

  it('runs once: a second start copies nothing, even when the old store has moved on', async () => {
    const source = file('transactions');
    await oldStore(source);
    const targetPath = file('gift-cards');
    const target = new SqliteEventStore(targetPath);
    try {
      migrateStreams({
        name: 'gift-cards',
        sourcePath: source,
        target: target.database,
        streamPrefixes: ['gift-card-'],
      });
    } finally {
      await target.close();
    }
    const old = new SqliteEventStore(source);
    await old.append('gift-card-9', [{ type: 'GiftCardStored', data: {} }], { expectedRevision: 'no_stream' });
    await old.close();

    const reopened = new SqliteEventStore(targetPath);
    try {
      expect(
        migrateStreams({
          name: 'gift-cards',
          sourcePath: source,
          target: reopened.database,
          streamPrefixes: ['gift-card-'],
        }),
      ).toEqual({
        ran: false,
        copied: 0,
        alreadyPresent: 0,
      });
      expect(await reopened.readAll()).toHaveLength(4);
      // Another migration name is another migration.
      expect(
        migrateStreams({
          name: 'other',
          sourcePath: source,
          target: reopened.database,
          streamPrefixes: ['transaction-'],
        }).copied,
      ).toBe(2);
    } finally {
      await reopened.close();
    }
  });

  it('moves the rows of the given tables (or those of them a condition selects) in the same transaction, creating the table as the old file declares it', async () => {
    const source = file('transactions');
    await oldStore(source);
    const old = new BetterSqlite3(source);
    old.exec(
      `CREATE TABLE vault_gift_cards (id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL, secret BLOB NOT NULL)`,
    );
    const insert = old.prepare('INSERT INTO vault_gift_cards VALUES (?, ?, ?)');
    insert.run('gc-1', 'shop', Buffer.from([1, 2, 3]));
    insert.run('gc-2', 'shop', Buffer.from([4, 5]));
    old.exec(`CREATE TABLE keys (operation TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (operation, key))`);
    old.prepare('INSERT INTO keys VALUES (?, ?)').run('transactions.capture', 'k-1');
    old.prepare('INSERT INTO keys VALUES (?, ?)').run('gift-cards.issue', 'k-1');
    old.close();

    const target = new SqliteEventStore(file('gift-cards'));
    try {
      target.database.exec(`CREATE TABLE already (id TEXT PRIMARY KEY)`);
      const result = migrateStreams({
        name: 'gift-cards',
        sourcePath: source,
        target: target.database,
        streamPrefixes: ['gift-card-'],
        tables: ['vault_gift_cards', 'absent_in_old', { name: 'keys', where: "operation LIKE 'gift-cards.%'" }],
      });
      expect(result).toEqual({
        ran: true,
        copied: 4,
        alreadyPresent: 0,
        rows: { vault_gift_cards: 2, absent_in_old: 0, keys: 1 },
      });
      expect(target.database.prepare('SELECT * FROM keys').all()).toEqual([
        { operation: 'gift-cards.issue', key: 'k-1' },
      ]);
      expect(
        target.database.prepare('SELECT id, merchant_account_id, secret FROM vault_gift_cards ORDER BY id').all(),
      ).toEqual([
        { id: 'gc-1', merchant_account_id: 'shop', secret: Buffer.from([1, 2, 3]) },
        { id: 'gc-2', merchant_account_id: 'shop', secret: Buffer.from([4, 5]) },
      ]);
    } finally {
      await target.close();
    }
  });

  it('takes the events from any store when they are not in the old file (EventStoreDB), as they were', async () => {
    const source = file('transactions');
    await oldStore(source);
    const old = new SqliteEventStore(source);
    const target = new SqliteEventStore(file('gift-cards'));
    try {
      const events = await readStreamsWithPrefixes(old, ['gift-card-'], 2);
      expect(events.map((event) => event.streamId)).toEqual([
        'gift-card-1',
        'gift-card-2',
        'gift-card-1',
        'gift-card-1',
      ]);
      const result = migrateStreams({
        name: 'gift-cards',
        sourcePath: join(directory, 'absent-read.db'),
        sourceEvents: events,
        target: target.database,
        streamPrefixes: ['gift-card-'],
      });
      expect(result).toEqual({ ran: true, copied: 4, alreadyPresent: 0 });
      expect(comparable(await target.readAll())).toEqual(comparable(events));
    } finally {
      await old.close();
      await target.close();
    }
  });

  it('records a missing old store as nothing to move', async () => {
    const target = new SqliteEventStore(file('gift-cards'));
    try {
      const result = migrateStreams({
        name: 'gift-cards',
        sourcePath: join(directory, 'absent.db'),
        target: target.database,
        streamPrefixes: ['gift-card-'],
      });
      expect(result).toEqual({ ran: true, copied: 0, alreadyPresent: 0 });
      expect(streamMigrationDone(target.database, 'gift-cards')).toBe(true);
    } finally {
      await target.close();
    }
  });

  it('keeps events already copied to the same place, and stops on one found elsewhere', async () => {
    const source = file('transactions');
    await oldStore(source);
    const [first] = (await readAllOf(source)).filter((event) => event.streamId === 'gift-card-1');
    const target = new SqliteEventStore(file('gift-cards'));
    try {
      await target.append(
        'gift-card-1',
        [{ id: first!.id, type: first!.type, data: first!.data, metadata: first!.metadata }],
        {
          expectedRevision: 'no_stream',
        },
      );
      expect(
        migrateStreams({ name: 'a', sourcePath: source, target: target.database, streamPrefixes: ['gift-card-'] }),
      ).toEqual({
        ran: true,
        copied: 3,
        alreadyPresent: 1,
      });
    } finally {
      await target.close();
    }
    const clash = new SqliteEventStore(file('gift-cards'));
    try {
      await clash.append('gift-card-elsewhere', [{ id: first!.id, type: 'X', data: {} }], {
        expectedRevision: 'no_stream',
      });
      expect(() =>
        migrateStreams({ name: 'a', sourcePath: source, target: clash.database, streamPrefixes: ['gift-card-'] }),
      ).toThrow(/already in the new store as gift-card-elsewhere@0/);
      expect(streamMigrationDone(clash.database, 'a')).toBe(false);
      expect(await clash.readAll()).toHaveLength(1);
    } finally {
      await clash.close();
    }
  });

  it('a process killed in the middle leaves nothing, and the next run ends the same as an uninterrupted one', async () => {
    const source = file('transactions');
    await oldStore(source);
    const targetPath = file('gift-cards');
    const child = spawn(
      process.execPath,
      [
        '-r',
        resolve(__dirname, '../../../scripts/register.cjs'),
        resolve(__dirname, 'test-support/crashing-stream-migration.ts'),
        source,
        targetPath,
        'gift-card-',
        '2',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const signal = await new Promise<NodeJS.Signals | null>((done) =>
      child.on('close', (_code, killed) => done(killed)),
    );
    expect(signal, output).toBe('SIGKILL');

    const target = new SqliteEventStore(targetPath);
    try {
      expect(await target.readAll()).toEqual([]);
      expect(streamMigrationDone(target.database, 'crash-test')).toBe(false);
      expect(
        migrateStreams({
          name: 'crash-test',
          sourcePath: source,
          target: target.database,
          streamPrefixes: ['gift-card-'],
        }).copied,
      ).toBe(4);
      const expected = (await readAllOf(source)).filter((event) => event.streamId.startsWith('gift-card-'));
      expect(comparable(await target.readAll())).toEqual(comparable(expected));
    } finally {
      await target.close();
    }
  });
});

describe('withoutStreams', () => {
  it('hides the moved streams from reads, the log and subscriptions, and refuses appends to them', async () => {
    const path = file('transactions');
    await oldStore(path);
    const raw = new SqliteEventStore(path);
    const store = withoutStreams(raw, ['gift-card-']);
    try {
      expect(await store.readStream('gift-card-1')).toEqual([]);
      expect((await store.readStream('transaction-1')).map((event) => event.type)).toEqual([
        'TransactionCreated',
        'TransactionUpdated',
      ]);
      expect((await store.readAll()).map((event) => event.streamId)).toEqual([
        'transaction-1',
        'gift-cards-index',
        'transaction-1',
      ]);
      // Pages are filled up past the hidden events: a reader stopping at a short page still reads everything.
      const first = await store.readAll({ maxCount: 2 });
      expect(first.map((event) => event.streamId)).toEqual(['transaction-1', 'gift-cards-index']);
      const rest = await store.readAll({ after: first.at(-1)!.position, maxCount: 2 });
      expect(rest.map((event) => event.streamId)).toEqual(['transaction-1']);
      await expect(
        store.append('gift-card-1', [{ type: 'GiftCardUpdated', data: {} }], { expectedRevision: 2 }),
      ).rejects.toThrow(/moved/);

      const seen: string[] = [];
      const subscription = store.subscribe({ handler: async (event) => void seen.push(event.streamId) });
      await store.append('transaction-2', [{ type: 'TransactionCreated', data: {} }], {
        expectedRevision: 'no_stream',
      });
      await raw.append('gift-card-3', [{ type: 'GiftCardStored', data: {} }], { expectedRevision: 'no_stream' });
      await store.append('transaction-3', [{ type: 'TransactionCreated', data: {} }], {
        expectedRevision: 'no_stream',
      });
      const deadline = Date.now() + 5000;
      while (!seen.includes('transaction-3') && Date.now() < deadline)
        await new Promise((done) => setTimeout(done, 10));
      await subscription.stop();
      expect(seen).toEqual(['transaction-1', 'gift-cards-index', 'transaction-1', 'transaction-2', 'transaction-3']);
    } finally {
      await store.close();
    }
  });
});

it('leaves a store on the new connection reading the moved streams, even one it had read as absent before', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'stream-migration-ends-'));
  try {
    const old = new SqliteEventStore(join(dir, 'old.db'));
    await old.append('gift-card-1', [{ type: 'GiftCardIssued', data: {} }], { expectedRevision: 'no_stream' });
    await old.close();
    const target = new SqliteEventStore(join(dir, 'new.db'));
    try {
      expect(await target.readStream('gift-card-1')).toEqual([]);
      migrateStreams({
        name: 'gift-cards-from-old',
        sourcePath: join(dir, 'old.db'),
        target: target.database,
        streamPrefixes: ['gift-card-'],
      });
      expect((await target.readStream('gift-card-1')).map((event) => event.type)).toEqual(['GiftCardIssued']);
    } finally {
      await target.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
