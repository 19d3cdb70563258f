/** The idempotency store over a real SQLite database: claims, replays, conflicts, expiry, durability. */
import path from 'node:path';
import Database from 'better-sqlite3';
import { ApiError } from '@switchyard/api';
import { WrongExpectedRevisionError } from '@switchyard/eventstore';
import { toApiError } from '../errors';
import {
  BoundResourceAbsent,
  IdempotencyStore,
  requestFingerprint,
  type IdempotencyScope,
  type IdempotentRequest,
} from './idempotency-store';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';

const hour = 60 * 60 * 1000;
let clock: number;
const now = () => new Date(clock);
let db: Database.Database;
let store: IdempotencyStore;

beforeEach(() => {
  clock = Date.parse('2026-01-01T00:00:00.000Z');
  db = new Database(':memory:');
  store = new IdempotencyStore(db, { now });
});
afterEach(() => {
  db.close();
});

const scope = (overrides: Partial<IdempotencyScope> = {}): IdempotencyScope => ({
  merchantAccountId: 'shop-a',
  operation: 'transactions.create',
  key: 'key-1',
  ...overrides,
});
const body = { amount: 1299, currency: 'USD', metadata: { order: '42' } };
const fingerprint = requestFingerprint(body);

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => expect.unreachable('expected a rejection'),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

const rows = () => (db.prepare('SELECT COUNT(*) AS n FROM idempotency_keys').get() as { n: number }).n;

it('runs once and replays the identical value', async () => {
  const value = {
    id: 'tx-1',
    status: 'authorization_succeeded',
    amount: 1299,
    nested: [{ a: 1 }, null, 'x'],
    flag: false,
  };
  const execute = vi.fn(async () => value);
  expect(await store.run(scope(), fingerprint, execute)).toBe(value);
  expect(await store.run(scope(), fingerprint, execute)).toEqual(value);
  expect(await store.run(scope(), fingerprint, execute)).toEqual(value);
  expect(execute).toHaveBeenCalledTimes(1);
});

it('replays an undefined result (no body)', async () => {
  const execute = vi.fn(async () => undefined);
  expect(await store.run(scope(), fingerprint, execute)).toBeUndefined();
  expect(await store.run(scope(), fingerprint, execute)).toBeUndefined();
  expect(execute).toHaveBeenCalledTimes(1);
});

it('of 50 concurrent calls with one key, runs one; the others get concurrent_request; afterwards it replays', async () => {
  const gate = deferred<{ id: string }>();
  const execute = vi.fn(() => gate.promise);
  const calls = Array.from({ length: 50 }, () => store.run(scope(), fingerprint, execute));
  const settled = Promise.allSettled(calls);
  // The 49 losers are refused while the winner is still waiting.
  const losers = await Promise.allSettled(calls.slice(1));
  expect(execute).toHaveBeenCalledTimes(1);
  for (const loser of losers) {
    expect(loser.status).toBe('rejected');
    const error = (loser as PromiseRejectedResult).reason as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.toBody()).toMatchObject({
      status: 409,
      code: 'concurrent_request',
      message: expect.stringMatching(/still being processed/),
    });
  }

  gate.resolve({ id: 'tx-1' });
  const results = await settled;
  expect(results.filter((result) => result.status === 'fulfilled')).toEqual([
    { status: 'fulfilled', value: { id: 'tx-1' } },
  ]);

  expect(await store.run(scope(), fingerprint, execute)).toEqual({ id: 'tx-1' });
  expect(execute).toHaveBeenCalledTimes(1);
});

it('answers 409 duplicate_record for the same key with a different request, running or done', async () => {
  const gate = deferred<string>();
  const first = store.run(scope(), fingerprint, () => gate.promise);
  const other = requestFingerprint({ ...body, amount: 1300 });
  const whileRunning = await rejection(store.run(scope(), other, async () => 'never'));
  expect(whileRunning.toBody()).toEqual({
    type: 'error',
    code: 'duplicate_record',
    status: 409,
    message: 'This Idempotency-Key was already used with a different request',
    details: [],
  });
  gate.resolve('done');
  await first;
  const afterwards = await rejection(store.run(scope(), other, async () => 'never'));
  expect(afterwards.code).toBe('duplicate_record');
  // The stored outcome is untouched.
  expect(await store.run(scope(), fingerprint, async () => 'again')).toBe('done');
});

it('stores a 4xx ApiError and re-throws an equal one on every replay', async () => {
  const original = new ApiError(
    400,
    'The card was declined',
    [{ location: 'body', pointer: '/payment_method/number', message: 'Invalid number', type: 'invalid_card' }],
    { code: 'card_declined', resourceId: 'tx-9' },
  );
  const execute = vi.fn(async () => {
    throw original;
  });
  expect(await rejection(store.run(scope(), fingerprint, execute))).toBe(original);
  for (let i = 0; i < 2; i++) {
    const replayed = await rejection(store.run(scope(), fingerprint, execute));
    expect(replayed).not.toBe(original);
    expect(replayed.status).toBe(400);
    expect(replayed.code).toBe('card_declined');
    expect(replayed.message).toBe('The card was declined');
    expect(replayed.details).toEqual(original.details);
    expect(replayed.resourceId).toBe('tx-9');
    expect(replayed.toBody()).toEqual(original.toBody());
  }
  expect(execute).toHaveBeenCalledTimes(1);
});

it('replays a 404 and a 409 from the operation too', async () => {
  await rejection(store.run(scope({ key: 'a' }), fingerprint, async () => Promise.reject(ApiError.notFound())));
  expect((await rejection(store.run(scope({ key: 'a' }), fingerprint, async () => 'ran'))).status).toBe(404);
  await rejection(
    store.run(scope({ key: 'b' }), fingerprint, async () => Promise.reject(ApiError.duplicate('Exists', 'tx-1'))),
  );
  expect((await rejection(store.run(scope({ key: 'b' }), fingerprint, async () => 'ran'))).toBody()).toMatchObject({
    status: 409,
    resource_id: 'tx-1',
  });
});

it('does not store a plain Error or a 5xx: the next call with the key runs again', async () => {
  const failing = vi.fn(async () => {
    throw new Error('connector exploded');
  });
  await expect(store.run(scope(), fingerprint, failing)).rejects.toThrow('connector exploded');
  expect(rows()).toBe(0);
  await expect(
    store.run(scope(), fingerprint, async () => Promise.reject(ApiError.badGateway())),
  ).rejects.toMatchObject({ status: 502 });
  await expect(
    store.run(scope(), fingerprint, async () => Promise.reject(ApiError.gatewayTimeout())),
  ).rejects.toMatchObject({ status: 504 });
  expect(rows()).toBe(0);

  const succeeding = vi.fn(async () => ({ id: 'tx-2' }));
  expect(await store.run(scope(), fingerprint, succeeding)).toEqual({ id: 'tx-2' });
  expect(await store.run(scope(), fingerprint, succeeding)).toEqual({ id: 'tx-2' });
  expect(failing).toHaveBeenCalledTimes(1);
  expect(succeeding).toHaveBeenCalledTimes(1);
});

it('also releases the key when execute throws synchronously', async () => {
  const execute = (() => {
    throw new TypeError('bug');
  }) as () => Promise<string>;
  await expect(store.run(scope(), fingerprint, execute)).rejects.toThrow('bug');
  expect(await store.run(scope(), fingerprint, async () => 'ok')).toBe('ok');
});

it('forgets a key after 24 h: it runs again, also with another request', async () => {
  const execute = vi.fn(async () => ({ run: execute.mock.calls.length }));
  expect(await store.run(scope(), fingerprint, execute)).toEqual({ run: 1 });
  clock += 24 * hour - 1;
  expect(await store.run(scope(), fingerprint, execute)).toEqual({ run: 1 });
  expect((await rejection(store.run(scope(), requestFingerprint({}), execute))).code).toBe('duplicate_record');
  clock += 1;
  expect(await store.run(scope(), fingerprint, execute)).toEqual({ run: 2 });
  expect(execute).toHaveBeenCalledTimes(2);

  clock += 24 * hour;
  expect(await store.run(scope(), requestFingerprint({ other: true }), async () => 'new request')).toBe('new request');
});

it('keeps the key of a request that outlived its lease: 409 concurrent_request telling to use a new key', async () => {
  const gate = deferred<string>();
  const first = store.run(scope(), fingerprint, () => gate.promise);
  clock += 119_999;
  expect((await rejection(store.run(scope(), fingerprint, async () => 'x'))).message).toMatch(/still being processed/);
  clock += 1;
  const stale = await rejection(store.run(scope(), fingerprint, async () => 'x'));
  expect(stale.code).toBe('concurrent_request');
  expect(stale.status).toBe(409);
  expect(stale.message).toMatch(/did not complete.*outcome is unknown.*new Idempotency-Key.*2026-01-02T00:00:00\.000Z/);

  // A new key is free; if the first request does finish after all, its outcome is stored and replayed.
  expect(await store.run(scope({ key: 'key-2' }), fingerprint, async () => 'second')).toBe('second');
  gate.resolve('first');
  expect(await first).toBe('first');
  expect(await store.run(scope(), fingerprint, async () => 'x')).toBe('first');
});

it('treats a key abandoned by a dead process as running until it expires, then runs it again', async () => {
  // The first process claimed the key and died: its row stays 'running'.
  void store.run(scope(), fingerprint, () => new Promise<never>(() => {}));
  const restarted = new IdempotencyStore(db, { now });
  clock += 23 * hour;
  expect((await rejection(restarted.run(scope(), fingerprint, async () => 'x'))).code).toBe('concurrent_request');
  clock += hour;
  expect(await restarted.run(scope(), fingerprint, async () => 'after expiry')).toBe('after expiry');
});

it('does not let a request whose key expired and was claimed again overwrite the new outcome', async () => {
  const gate = deferred<string>();
  const slow = store.run(scope(), fingerprint, () => gate.promise);
  clock += 24 * hour;
  const fresh = deferred<string>();
  const second = store.run(scope(), fingerprint, () => fresh.promise);
  gate.resolve('old');
  expect(await slow).toBe('old');
  expect((await rejection(store.run(scope(), fingerprint, async () => 'x'))).code).toBe('concurrent_request');
  fresh.resolve('new');
  expect(await second).toBe('new');
  expect(await store.run(scope(), fingerprint, async () => 'x')).toBe('new');
});

it('survives a restart: a reopened file-backed database still replays', async () => {
  const dir = createTestDataDir('idempotency');
  try {
    const file = path.join(dir, 'transactions.db');
    const first = new Database(file);
    first.pragma('journal_mode = WAL');
    const execute = vi.fn(async () => ({ id: 'tx-1', amount: 1299 }));
    await new IdempotencyStore(first, { now }).run(scope(), fingerprint, execute);
    await rejection(
      new IdempotencyStore(first, { now }).run(scope({ key: 'declined' }), fingerprint, async () =>
        Promise.reject(ApiError.badRequest('Declined')),
      ),
    );
    first.close();

    const reopened = new Database(file);
    try {
      const restarted = new IdempotencyStore(reopened, { now });
      expect(await restarted.run(scope(), fingerprint, execute)).toEqual({ id: 'tx-1', amount: 1299 });
      expect(execute).toHaveBeenCalledTimes(1);
      expect((await rejection(restarted.run(scope({ key: 'declined' }), fingerprint, async () => 'x'))).message).toBe(
        'Declined',
      );
    } finally {
      reopened.close();
    }
  } finally {
    removeTestDataDir(dir);
  }
});

it('keeps scopes apart: merchant accounts, operations and keys (exactly compared) do not collide', async () => {
  const run = (overrides: Partial<IdempotencyScope>, value: string) =>
    store.run(scope(overrides), fingerprint, async () => value);
  expect(await run({}, 'a')).toBe('a');
  expect(await run({ merchantAccountId: 'shop-b' }, 'b')).toBe('b');
  expect(await run({ operation: 'transactions.capture:tx-1' }, 'c')).toBe('c');
  expect(await run({ operation: 'transactions.capture:tx-2' }, 'd')).toBe('d');
  expect(await run({ key: 'KEY-1' }, 'e')).toBe('e');
  expect(await run({ key: 'key-1 ' }, 'f')).toBe('f');
  // Another account's request with the same key is not a "different request" either.
  expect(
    await store.run(scope({ merchantAccountId: 'shop-c' }), requestFingerprint({ other: 1 }), async () => 'g'),
  ).toBe('g');

  expect(await run({}, 'x')).toBe('a');
  expect(await run({ merchantAccountId: 'shop-b' }, 'x')).toBe('b');
  expect(await run({ operation: 'transactions.capture:tx-1' }, 'x')).toBe('c');
  expect(await run({ operation: 'transactions.capture:tx-2' }, 'x')).toBe('d');
  expect(await run({ key: 'KEY-1' }, 'x')).toBe('e');
  expect(await run({ key: 'key-1 ' }, 'x')).toBe('f');
  expect(rows()).toBe(7);
});

it('purges expired keys lazily, up to 100 per claim', async () => {
  for (let i = 0; i < 150; i++) await store.run(scope({ key: `old-${i}` }), fingerprint, async () => i);
  expect(rows()).toBe(150);
  clock += 24 * hour;
  await store.run(scope({ key: 'new-1' }), fingerprint, async () => 'n');
  expect(rows()).toBe(51);
  await store.run(scope({ key: 'new-2' }), fingerprint, async () => 'n');
  expect(rows()).toBe(2);
});

describe('requestFingerprint', () => {
  it('is a sha256 hex independent of object key order, at every depth', () => {
    const a = requestFingerprint({
      amount: 1,
      currency: 'USD',
      buyer: { id: 'b', address: { city: 'X', line1: 'Y' } },
      items: [{ sku: 's', qty: 1 }],
    });
    const b = requestFingerprint({
      items: [{ qty: 1, sku: 's' }],
      buyer: { address: { line1: 'Y', city: 'X' }, id: 'b' },
      currency: 'USD',
      amount: 1,
    });
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).toBe(b);
  });

  it('drops undefined properties and tells different requests apart', () => {
    expect(requestFingerprint({ amount: 1, metadata: undefined })).toBe(requestFingerprint({ amount: 1 }));
    expect(requestFingerprint({ amount: 1 })).not.toBe(requestFingerprint({ amount: 2 }));
    expect(requestFingerprint({ amount: 1 })).not.toBe(requestFingerprint({ amount: '1' }));
    expect(requestFingerprint({ amount: 1, metadata: null })).not.toBe(requestFingerprint({ amount: 1 }));
    expect(requestFingerprint([1, 2])).not.toBe(requestFingerprint([2, 1]));
    expect(requestFingerprint({ a: { b: 1 } })).not.toBe(requestFingerprint({ a: { c: 1 } }));
    expect(requestFingerprint(JSON.parse('{"__proto__": {"x": 1}}'))).not.toBe(requestFingerprint({}));
    expect(requestFingerprint(undefined)).toBe(requestFingerprint(null));
  });
});

describe('retryable refusals (issue 22, item 9)', () => {
  it('does not store a lost race (409 with a retry hint), a 425 or a 429: the key runs again', async () => {
    const refusals = [
      toApiError(new WrongExpectedRevisionError('transaction-1', 3, 4)) as ApiError,
      new ApiError(425, 'Too early'),
      new ApiError(429, 'Slow down'),
    ];
    for (const [index, refusal] of refusals.entries()) {
      const key = `retryable-${index}`;
      await expect(store.run(scope({ key }), fingerprint, async () => Promise.reject(refusal))).rejects.toBe(refusal);
      expect(await store.run(scope({ key }), fingerprint, async () => ({ id: 'tx-1' }))).toEqual({ id: 'tx-1' });
    }
  });

  it('still stores a 409 that is the answer (a duplicate record)', async () => {
    await rejection(store.run(scope(), fingerprint, async () => Promise.reject(ApiError.duplicate('Exists', 'tx-1'))));
    expect((await rejection(store.run(scope(), fingerprint, async () => 'ran'))).status).toBe(409);
  });
});

describe('keys bound to what their request did (issue 22, items 8 and 11)', () => {
  const binding = { transaction_id: 'tx-1' };
  const answerBound = vi.fn(async (bound: Readonly<Record<string, unknown>>) => ({ answered: bound }));
  let bindingStore: IdempotencyStore;
  beforeEach(() => {
    answerBound.mockClear();
    bindingStore = new IdempotencyStore(db, { now, bindsBeforeProviderCalls: true });
  });

  it('keeps a key whose request failed after a provider may have been called: a retry answers the bound resource', async () => {
    const execute = vi.fn(async (request: IdempotentRequest) => {
      request.bind(binding);
      request.beforeProviderCall();
      throw new Error('SQLITE_BUSY: the append after the provider answered failed');
    });
    await expect(bindingStore.run<unknown>(scope(), fingerprint, execute, answerBound)).rejects.toThrow('SQLITE_BUSY');
    expect(await bindingStore.run<unknown>(scope(), fingerprint, execute, answerBound)).toEqual({ answered: binding });
    expect(await bindingStore.run<unknown>(scope(), fingerprint, execute, answerBound)).toEqual({ answered: binding });
    expect(execute).toHaveBeenCalledTimes(1);
  });

  it('keeps a key whose request recorded its resource and then failed, before any provider call', async () => {
    const execute = vi.fn(async (request: IdempotentRequest) => {
      request.bind(binding);
      request.recorded();
      throw ApiError.badGateway(new Error('the vault closed the connection'));
    });
    await rejection(bindingStore.run<unknown>(scope(), fingerprint, execute, answerBound));
    expect(await bindingStore.run<unknown>(scope(), fingerprint, execute, answerBound)).toEqual({ answered: binding });
    expect(execute).toHaveBeenCalledTimes(1);
  });

  it('releases a key whose request recorded nothing it bound and failed before any provider call', async () => {
    const failing = vi.fn(async (request: IdempotentRequest) => {
      request.recorded();
      throw ApiError.serverError();
    });
    await rejection(bindingStore.run<unknown>(scope(), fingerprint, failing, answerBound));
    expect(await bindingStore.run<unknown>(scope(), fingerprint, async () => 'ran again', answerBound)).toBe(
      'ran again',
    );
  });

  it('releases a key whose request failed before any provider call, even when bound', async () => {
    const failing = vi.fn(async (request: IdempotentRequest) => {
      request.bind(binding);
      throw ApiError.serverError();
    });
    await rejection(bindingStore.run<unknown>(scope(), fingerprint, failing, answerBound));
    expect(await bindingStore.run<unknown>(scope(), fingerprint, async () => 'ran again', answerBound)).toBe(
      'ran again',
    );
    expect(answerBound).not.toHaveBeenCalled();
  });

  it('answers a key whose request died after a provider call with the bound resource once the lease has passed', async () => {
    // The process died during or after the provider call: the row stays 'running', bound.
    void bindingStore.run<unknown>(scope(), fingerprint, async (request) => {
      request.bind(binding);
      request.beforeProviderCall();
      return new Promise<never>(() => {});
    });
    const restarted = new IdempotencyStore(db, { now, bindsBeforeProviderCalls: true });
    expect((await rejection(restarted.run<unknown>(scope(), fingerprint, async () => 'x', answerBound))).code).toBe(
      'concurrent_request',
    );
    clock += 120_000;
    expect(await restarted.run<unknown>(scope(), fingerprint, async () => 'x', answerBound)).toEqual({
      answered: binding,
    });
  });

  it('runs again a key whose request died before any provider call once the lease has passed', async () => {
    void bindingStore.run<unknown>(scope(), fingerprint, async (request) => {
      request.bind(binding);
      return new Promise<never>(() => {});
    });
    const restarted = new IdempotencyStore(db, { now, bindsBeforeProviderCalls: true });
    clock += 120_000;
    expect(await restarted.run<unknown>(scope(), fingerprint, async () => 'ran again', answerBound)).toBe('ran again');
    expect(await restarted.run<unknown>(scope(), fingerprint, async () => 'x', answerBound)).toBe('ran again');
  });

  it('runs again, once, a key bound before the append that would have recorded its resource, which never came', async () => {
    // Bound first (`beforeRecording`), then the request died before its resource was recorded.
    void bindingStore.run<unknown>(scope(), fingerprint, async (request) => {
      request.bind(binding);
      request.beforeRecording();
      return new Promise<never>(() => {});
    });
    const restarted = new IdempotencyStore(db, { now, bindsBeforeProviderCalls: true });
    clock += 120_000;
    const absent = vi.fn(async (): Promise<unknown> => {
      throw new BoundResourceAbsent('transaction tx-1');
    });
    const gate = deferred<string>();
    const first = restarted.run<unknown>(scope(), fingerprint, async () => gate.promise, absent);
    // A second retry at the same moment: the first one took the key over; this one is told to wait for it.
    const second = restarted.run<unknown>(scope(), fingerprint, async () => 'ran twice', absent);
    expect((await rejection(second)).code).toBe('concurrent_request');
    gate.resolve('ran again');
    expect(await first).toBe('ran again');
    expect(await restarted.run<unknown>(scope(), fingerprint, async () => 'x', absent)).toBe('ran again');
  });

  it('answers a key bound before its append once the resource is recorded, whatever came after', async () => {
    const execute = vi.fn(async (request: IdempotentRequest) => {
      request.bind(binding);
      request.beforeRecording();
      throw ApiError.badGateway(new Error('the vault closed the connection'));
    });
    await rejection(bindingStore.run<unknown>(scope(), fingerprint, execute, answerBound));
    expect(await bindingStore.run<unknown>(scope(), fingerprint, execute, answerBound)).toEqual({ answered: binding });
    expect(execute).toHaveBeenCalledTimes(1);
  });

  it('stops a request that outlived its lease and lost its key before it reaches a provider', async () => {
    const gate = deferred<void>();
    const slow = bindingStore.run<unknown>(scope(), fingerprint, async (request) => {
      await gate.promise;
      request.bind(binding);
      request.beforeProviderCall();
      return 'slow';
    });
    clock += 120_000;
    expect(await bindingStore.run<unknown>(scope(), fingerprint, async () => 'retry', answerBound)).toBe('retry');
    gate.resolve();
    expect((await rejection(slow)).code).toBe('concurrent_request');
    expect(await bindingStore.run<unknown>(scope(), fingerprint, async () => 'x', answerBound)).toBe('retry');
  });
});
