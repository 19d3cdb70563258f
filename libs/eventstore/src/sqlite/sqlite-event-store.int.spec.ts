import BetterSqlite3 from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { eventStoreContract } from '../contract';
import { EventStoreUnavailableError, WrongExpectedRevisionError, type RecordedEvent } from '../event-store';
import { compareSqlitePositions, SqliteEventStore } from './sqlite-event-store';

const directory = mkdtempSync(join(tmpdir(), 'switchyard-eventstore-'));
const file = (name: string): string => join(directory, `${name}-${randomUUID()}.sqlite`);
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const sqlite = { available: true } as const;
eventStoreContract('SqliteEventStore (group commit)', async () => new SqliteEventStore(file('group')), sqlite, {
  comparePositions: compareSqlitePositions,
});
eventStoreContract(
  'SqliteEventStore (one commit per append)',
  async () => new SqliteEventStore(file('per-append'), { groupCommit: false }),
  sqlite,
  { comparePositions: compareSqlitePositions },
);
eventStoreContract('SqliteEventStore (:memory:)', async () => new SqliteEventStore(':memory:'), sqlite, {
  comparePositions: compareSqlitePositions,
});

const waitUntil = async (condition: () => boolean, what: string, timeoutMs: number): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 10));
  }
};

describe('SqliteEventStore', () => {
  describe('group commit', () => {
    it('commits appends of one event-loop turn together, each checked on its own', async () => {
      const store = new SqliteEventStore(file('batch'));
      try {
        await store.append('payment-1', [{ type: 'PaymentStarted', data: {} }], { expectedRevision: 'no_stream' });
        const takenId = randomUUID();
        await store.append('payment-2', [{ id: takenId, type: 'PaymentStarted', data: {} }], {
          expectedRevision: 'no_stream',
        });

        const [fresh, stale, duplicateId, next] = await Promise.allSettled([
          store.append('payment-3', [{ type: 'PaymentStarted', data: {} }], { expectedRevision: 'no_stream' }),
          store.append('payment-1', [{ type: 'PaymentCaptured', data: {} }], { expectedRevision: 5 }),
          store.append(
            'payment-4',
            [
              { type: 'A', data: {} },
              { id: takenId, type: 'B', data: {} },
            ],
            { expectedRevision: 'no_stream' },
          ),
          store.append('payment-1', [{ type: 'PaymentCaptured', data: {} }], { expectedRevision: 0 }),
        ]);

        expect(fresh.status).toBe('fulfilled');
        expect(stale.status === 'rejected' && stale.reason instanceof WrongExpectedRevisionError).toBe(true);
        expect(duplicateId.status).toBe('rejected');
        expect(await store.readStream('payment-4')).toEqual([]);
        expect(next.status === 'fulfilled' && next.value.nextExpectedRevision).toBe(1);
      } finally {
        await store.close();
      }
    });
  });

  describe('given a file the store created', () => {
    it('keeps the events across close and reopen, and records its schema version', async () => {
      const path = file('reopen');
      const first = new SqliteEventStore(path);
      await first.append(
        'gift-card-1',
        [{ type: 'GiftCardIssued', data: { balance: 500 }, metadata: { by: 'test' } }],
        {
          expectedRevision: 'no_stream',
        },
      );
      await first.close();

      const second = new SqliteEventStore(path);
      try {
        expect(await second.readStream('gift-card-1')).toMatchObject([
          { type: 'GiftCardIssued', data: { balance: 500 }, metadata: { by: 'test' } },
        ]);
        expect(second.database.pragma('journal_mode', { simple: true })).toBe('wal');
        expect(second.database.pragma('synchronous', { simple: true })).toBe(2); // FULL
        expect(second.database.pragma('cache_size', { simple: true })).toBe(-4096); // 4 MB
        expect(second.database.prepare('SELECT version FROM event_store_schema').all()).toEqual([{ version: 1 }]);
      } finally {
        await second.close();
      }
    });

    it('sizes its page cache as asked, in KiB, and refuses a size that is not a positive integer', async () => {
      const store = new SqliteEventStore(file('cache-size'), { cacheSizeKib: 2048 });
      try {
        expect(store.database.pragma('cache_size', { simple: true })).toBe(-2048);
      } finally {
        await store.close();
      }
      expect(() => new SqliteEventStore(file('cache-size-zero'), { cacheSizeKib: 0 })).toThrow(RangeError);
    });

    it('refuses work once closed, with a non-retriable unavailable error', async () => {
      const store = new SqliteEventStore(file('closed'));
      await store.close();

      await expect(store.append('s', [{ type: 'A', data: {} }], { expectedRevision: 'any' })).rejects.toBeInstanceOf(
        EventStoreUnavailableError,
      );
      await expect(store.readAll()).rejects.toMatchObject({ type: 'event_store_unavailable', retriable: false });
    });
  });

  describe('given a connection the service opened', () => {
    it('shares it with read-model tables and leaves it open on close', async () => {
      const database = new BetterSqlite3(file('shared-connection'));
      const store = new SqliteEventStore(database);
      database.exec('CREATE TABLE payments_view (id TEXT PRIMARY KEY, status TEXT NOT NULL)');

      await store.append('payment-1', [{ type: 'PaymentStarted', data: {} }], { expectedRevision: 'no_stream' });
      database.prepare('INSERT INTO payments_view VALUES (?, ?)').run('payment-1', 'started');
      await store.close();

      expect(store.database).toBe(database);
      expect(database.open).toBe(true);
      expect(database.pragma('cache_size', { simple: true })).toBe(-4096);
      expect(database.prepare('SELECT COUNT(*) AS count FROM events').get()).toEqual({ count: 1 });
      database.close();
    });
  });

  describe('subscribe', () => {
    it('wakes at once on an append through the same store, without waiting for the poll', async () => {
      // The poll's sleep runs on a clock that never moves here: only the append's notification can wake it.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const store = new SqliteEventStore(file('notify'), { pollIntervalMs: 60_000 });
      const seen: RecordedEvent[] = [];
      const subscription = store.subscribe({ handler: async (recorded) => void seen.push(recorded) });
      const turns = async (n: number) => {
        for (let turn = 0; turn < n && seen.length === 0; turn++) await new Promise((done) => setImmediate(done));
      };
      try {
        await turns(5); // the first look, which finds nothing and goes to sleep
        expect(seen).toEqual([]);
        await store.append('webhook-1', [{ type: 'WebhookQueued', data: {} }], { expectedRevision: 'no_stream' });
        await turns(100);
        expect(seen).toHaveLength(1);
      } finally {
        await subscription.stop();
        await store.close();
        vi.useRealTimers();
      }
    });

    it('retries a failing handler with a capped back-off, calling onError each time', async () => {
      // A clock the test moves, 1 ms at a time: the back-off is measured exactly, however loaded the machine.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const store = new SqliteEventStore(file('backoff'), { retryBackoff: { initialDelayMs: 10, maxDelayMs: 40 } });
      const failedAt: number[] = [];
      let handled = 0;
      const subscription = store.subscribe({
        handler: async () => {
          if (failedAt.length < 5) throw new Error('downstream unavailable');
          handled += 1;
        },
        onError: () => void failedAt.push(Date.now()),
      });
      try {
        await store.append('webhook-1', [{ type: 'WebhookQueued', data: {} }], { expectedRevision: 'no_stream' });

        for (let ms = 0; handled === 0 && ms < 1_000; ms++) await vi.advanceTimersByTimeAsync(1);

        expect(handled, 'the handler succeeded after five failures').toBe(1);
        expect(failedAt).toHaveLength(5);
        // 10 ms, doubling, capped at 40 ms.
        expect(failedAt.slice(1).map((at, index) => at - failedAt[index]!)).toEqual([10, 20, 40, 40]);
      } finally {
        await subscription.stop();
        await store.close();
        vi.useRealTimers();
      }
    });
  });

  describe('given two stores on the same file (as two processes would have)', () => {
    it('a subscription on one sees the appends made through the other at its next poll', async () => {
      // The poll's sleep runs on a clock the test moves: the append is seen after one poll interval, not before.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const path = file('two-stores');
      const writer = new SqliteEventStore(path);
      const reader = new SqliteEventStore(path, { pollIntervalMs: 100 });
      const seen: RecordedEvent[] = [];
      const subscription = reader.subscribe({ handler: async (recorded) => void seen.push(recorded) });
      try {
        await vi.advanceTimersByTimeAsync(1); // the reader's first look: nothing yet, it sleeps until the next poll
        await writer.append('transaction-1', [{ type: 'TransactionAuthorized', data: { amount: 100 } }], {
          expectedRevision: 'no_stream',
        });
        await vi.advanceTimersByTimeAsync(98);
        expect(seen, 'no other process can wake the reader: only its poll finds the append').toEqual([]);
        await vi.advanceTimersByTimeAsync(1);
        expect(seen).toHaveLength(1);
        expect(seen[0]).toMatchObject({
          streamId: 'transaction-1',
          type: 'TransactionAuthorized',
          data: { amount: 100 },
        });
      } finally {
        await subscription.stop();
        await reader.close();
        await writer.close();
        vi.useRealTimers();
      }
    });

    it('a child process appending to the same streams meets only typed conflicts, and no stream has a gap', async () => {
      const path = file('two-processes');
      const store = new SqliteEventStore(path);
      const seen: RecordedEvent[] = [];
      const subscription = store.subscribe({ handler: async (recorded) => void seen.push(recorded) });
      const [streams, workers, appendsPerWorker] = [4, 8, 40];
      let child: ReturnType<typeof spawn> | undefined;
      try {
        child = spawn(
          process.execPath,
          [
            '-r',
            resolve(__dirname, '../../../../scripts/register.cjs'),
            resolve(__dirname, 'test-support/concurrent-appender.ts'),
            path,
            'shared',
            `${streams}`,
            `${workers}`,
            `${appendsPerWorker}`,
          ],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let stdout = '';
        let stderr = '';
        const exited = new Promise<number | null>((done) => child?.on('close', done));
        child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        await waitUntil(
          () => stdout.includes('ready') || child?.exitCode !== null,
          'the child process to open the store',
          15_000,
        );

        let conflicts = 0;
        await Promise.all(
          Array.from({ length: workers }, async (_, index) => {
            for (let done = 0; done < appendsPerWorker; ) {
              const streamId = `shared-${(index + done) % streams}`;
              const last = (await store.readStream(streamId)).at(-1);
              try {
                await store.append(streamId, [{ type: 'AppendedByParent', data: { index, done } }], {
                  expectedRevision: last ? last.revision : 'no_stream',
                });
                done += 1;
              } catch (error) {
                if (!(error instanceof WrongExpectedRevisionError)) throw error;
                conflicts += 1;
              }
            }
          }),
        );
        expect(await exited, stderr).toBe(0);
        const childResult = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
          appended: number;
          conflicts: number;
        };

        const total = 2 * workers * appendsPerWorker;
        expect(childResult.appended).toBe(workers * appendsPerWorker);
        for (let stream = 0; stream < streams; stream++) {
          const revisions = (await store.readStream(`shared-${stream}`)).map((recorded) => recorded.revision);
          expect(revisions).toEqual(revisions.map((_, index) => index));
        }
        const log = await store.readAll();
        expect(log).toHaveLength(total);
        expect(
          log.every(
            (recorded, index) => index === 0 || compareSqlitePositions(log[index - 1]!.position, recorded.position) < 0,
          ),
        ).toBe(true);
        expect(log.filter((recorded) => recorded.type === 'AppendedByChild')).toHaveLength(workers * appendsPerWorker);
        // A guard, not a measure: the poll finds the child's events whenever the machine gets to it.
        await waitUntil(() => seen.length === total, 'the subscription to see both processes’ events', 30_000);
        expect(seen.map((recorded) => recorded.position)).toEqual(log.map((recorded) => recorded.position));
        process.stdout.write(
          `two processes: ${total} appends, conflicts parent ${conflicts} / child ${childResult.conflicts}\n`,
        );
      } finally {
        if (child && child.exitCode === null) child.kill();
        await subscription.stop();
        await store.close();
      }
    });
  });
});

/** A store over a connection that records the statements it runs that start with `prefix`. */
const recording = (path: string, prefix: string) => {
  const reads: string[] = [];
  const db = new BetterSqlite3(path, {
    verbose: (sql) => {
      if (String(sql).startsWith(prefix)) reads.push(String(sql));
    },
  });
  return { db, store: new SqliteEventStore(db), reads };
};

describe('SqliteEventStore: reads past a stream’s known end', () => {
  /** A store over a connection that records the stream reads it runs. */
  const recorded = (path: string) => recording(path, 'SELECT * FROM events WHERE stream_id');
  const started = { type: 'PaymentStarted', data: {} };

  it('answers a read from after the last revision it appended or read without a query', async () => {
    const { db, store, reads: streamReads } = recorded(file('ends'));
    try {
      expect(await store.readStream('payment-1')).toEqual([]); // read to the end: no such stream
      expect(await store.readStream('payment-1')).toEqual([]);
      expect(streamReads).toHaveLength(1);
      await store.append('payment-1', [started, started], { expectedRevision: 'no_stream' });
      expect(await store.readStream('payment-1', { fromRevision: 2 })).toEqual([]);
      expect(streamReads).toHaveLength(1);
      expect((await store.readStream('payment-1', { fromRevision: 1 })).map((e) => e.revision)).toEqual([1]);
      expect(streamReads).toHaveLength(2);
      // A read cut short by maxCount did not reach the end: it teaches nothing.
      expect(await store.readStream('payment-2', { maxCount: 1 })).toEqual([]);
      await store.append('payment-3', [started, started], { expectedRevision: 'no_stream' });
      expect(await store.readStream('payment-3', { fromRevision: 0, maxCount: 1 })).toHaveLength(1);
    } finally {
      await store.close();
      db.close();
    }
  });

  it('reads again once another connection (another process) has committed to the file', async () => {
    const path = file('ends-other');
    const { db, store, reads: streamReads } = recorded(path);
    const other = new SqliteEventStore(path);
    try {
      await store.append('payment-1', [started], { expectedRevision: 'no_stream' });
      expect(await store.readStream('payment-1', { fromRevision: 1 })).toEqual([]);
      await other.append('payment-1', [{ type: 'PaymentCaptured', data: {} }], { expectedRevision: 0 });
      expect((await store.readStream('payment-1', { fromRevision: 1 })).map((e) => e.type)).toEqual([
        'PaymentCaptured',
      ]);
      // Another stream's append by the other connection: what this one knew of payment-1 is read again too.
      await other.append('payment-9', [started], { expectedRevision: 'no_stream' });
      const before = streamReads.length;
      expect(await store.readStream('payment-1', { fromRevision: 2 })).toEqual([]);
      expect(streamReads).toHaveLength(before + 1);
    } finally {
      await other.close();
      await store.close();
      db.close();
    }
  });

  it('shares what it knows with every store on the same connection', async () => {
    const { db, store, reads: streamReads } = recorded(file('ends-shared'));
    const second = new SqliteEventStore(db);
    try {
      expect(await store.readStream('payment-1')).toEqual([]);
      await second.append('payment-1', [started], { expectedRevision: 'no_stream' });
      expect((await store.readStream('payment-1')).map((e) => e.type)).toEqual(['PaymentStarted']);
      expect(await store.readStream('payment-1', { fromRevision: 1 })).toEqual([]);
      expect(streamReads).toHaveLength(2);
    } finally {
      await second.close();
      await store.close();
      db.close();
    }
  });
});

describe('SqliteEventStore: the log a caught-up follower reads', () => {
  const recorded = (path: string) => recording(path, 'SELECT * FROM events WHERE position');
  const event = (type: string, data: unknown = { n: 1 }) => ({ type, data, metadata: { by: 'test' } });

  it('answers the events committed after one it committed from memory, as the file would', async () => {
    const path = file('recent');
    const { db, store, reads: logReads } = recorded(path);
    const reader = new SqliteEventStore(path);
    try {
      const first = await store.append('payment-1', [event('PaymentStarted')], { expectedRevision: 'no_stream' });
      await Promise.all([
        store.append('payment-1', [event('PaymentCaptured', { amount: 5 })], { expectedRevision: 0 }),
        store.append('payment-2', [event('PaymentStarted'), event('PaymentCaptured')], {
          expectedRevision: 'no_stream',
        }),
      ]);
      const fromMemory = await store.readAll({ after: first.position });
      expect(logReads).toEqual([]);
      expect(fromMemory).toEqual(await reader.readAll({ after: first.position }));
      expect(fromMemory.map((e) => [e.streamId, e.type])).toEqual([
        ['payment-1', 'PaymentCaptured'],
        ['payment-2', 'PaymentStarted'],
        ['payment-2', 'PaymentCaptured'],
      ]);
      expect(await store.readAll({ after: first.position, maxCount: 2 })).toEqual(fromMemory.slice(0, 2));
      expect(await store.readAll({ after: fromMemory[2]!.position })).toEqual([]);
      expect(logReads).toEqual([]);
      // Shared by every follower: frozen.
      expect(() => {
        (fromMemory[0]!.data as { amount: number }).amount = 6;
      }).toThrow(TypeError);
      // From before the first event it kept (the log from the start): the file.
      expect(await store.readAll()).toHaveLength(4);
      expect(logReads).toHaveLength(1);
    } finally {
      await reader.close();
      await store.close();
      db.close();
    }
  });

  it("reads the file once another connection has committed, and includes that connection's events", async () => {
    const path = file('recent-other');
    const { db, store, reads: logReads } = recorded(path);
    const other = new SqliteEventStore(path);
    try {
      const first = await store.append('payment-1', [event('PaymentStarted')], { expectedRevision: 'no_stream' });
      await store.append('payment-1', [event('PaymentCaptured')], { expectedRevision: 0 });
      await other.append('payment-9', [event('PaymentStarted')], { expectedRevision: 'no_stream' });
      expect((await store.readAll({ after: first.position })).map((e) => e.streamId)).toEqual([
        'payment-1',
        'payment-9',
      ]);
      expect(logReads).toHaveLength(1);
      // What it commits after seeing the other connection's commit is a run of its own again.
      const third = await store.append('payment-1', [event('PaymentRefunded')], { expectedRevision: 1 });
      await store.append('payment-1', [event('PaymentClosed')], { expectedRevision: 2 });
      expect((await store.readAll({ after: third.position })).map((e) => e.type)).toEqual(['PaymentClosed']);
      expect(logReads).toHaveLength(1);
    } finally {
      await other.close();
      await store.close();
      db.close();
    }
  });
});
