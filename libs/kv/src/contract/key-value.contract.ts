import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Availability, describeWithInfra } from '@switchyard/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { KeyValueNotAnIntegerError, KeyValueUnavailableError, type KeyValueStore } from '../key-value-store';

/** A ttl short enough to wait for. */
const SHORT_TTL_MS = 50;
/** By when a SHORT_TTL_MS key must be gone. Expiry is exact in every adapter; the slack is for a loaded machine. */
const EXPIRED_BY_MS = 400;
/** A ttl that cannot run out during a test, and the least of it that must remain when a test reads it back. */
const LONG_TTL_MS = 60_000;
const LONG_TTL_FLOOR_MS = 50_000;

async function eventually(check: () => Promise<boolean>, withinMs: number): Promise<boolean> {
  const deadline = performance.now() + withinMs;
  for (;;) {
    if (await check()) return true;
    if (performance.now() > deadline) return false;
    await sleep(10);
  }
}

/**
 * The behaviour every KeyValueStore adapter must have, Redis semantics throughout. `makeStore` is called once for
 * the suite (and once more for the close test); every test works on keys under its own random prefix and deletes
 * them afterwards, so the suite can share a store, or a Redis, with anything else.
 */
export function keyValueContract(
  name: string,
  makeStore: () => Promise<KeyValueStore>,
  availability: Availability,
): void {
  describeWithInfra(`${name} (KeyValueStore contract)`, availability, () => {
    let store: KeyValueStore;
    let prefix = '';
    const written = new Set<string>();
    const key = (name: string): string => {
      const full = `kv-contract:${prefix}:${name}`;
      written.add(full);
      return full;
    };

    /**
     * Waits until everything written with SHORT_TTL_MS so far has expired, without reading those keys (a read
     * would expire them lazily and hide whether the operation under test honours expiry): a witness written
     * after them with the same ttl expires no earlier than they do.
     */
    const shortTtlsElapsed = async (): Promise<void> => {
      const witness = key(`witness-${randomUUID()}`);
      await store.set(witness, 'w', { ttlMs: SHORT_TTL_MS });
      expect(await eventually(async () => (await store.get(witness)) === null, EXPIRED_BY_MS)).toBe(true);
    };

    beforeAll(async () => {
      store = await makeStore();
    });
    beforeEach(() => {
      prefix = randomUUID();
    });
    afterEach(async () => {
      await Promise.all([...written].map((each) => store.delete(each)));
      written.clear();
    });
    afterAll(async () => {
      await store?.close();
    });

    describe('get, set and delete', () => {
      it('reads an absent key as null', async () => {
        expect(await store.get(key('absent'))).toBeNull();
      });

      it('reads back what was set, and a second set overwrites it', async () => {
        expect(await store.set(key('k'), 'first')).toBe(true);
        expect(await store.get(key('k'))).toBe('first');
        expect(await store.set(key('k'), 'second')).toBe(true);
        expect(await store.get(key('k'))).toBe('second');
      });

      it('keeps values exactly, the empty string included', async () => {
        const values = ['', ' spaced \r\n lines ', 'ünïcødé ✓ 🚂', '{"json":[1,2]}', '0'];
        await Promise.all(values.map((value, index) => store.set(key(`v${index}`), value)));
        expect(await Promise.all(values.map((_, index) => store.get(key(`v${index}`))))).toEqual(values);
      });

      it('keeps keys apart', async () => {
        await store.set(key('a'), 'A');
        await store.set(key('b'), 'B');
        expect([await store.get(key('a')), await store.get(key('b'))]).toEqual(['A', 'B']);
      });

      it('deletes a key and says whether there was one', async () => {
        await store.set(key('k'), 'v');
        expect(await store.delete(key('k'))).toBe(true);
        expect(await store.get(key('k'))).toBeNull();
        expect(await store.delete(key('k'))).toBe(false);
      });
    });

    describe('expiry', () => {
      it('reports a null ttl for a key without expiry and for an absent key', async () => {
        await store.set(key('k'), 'v');
        expect(await store.ttl(key('k'))).toBeNull();
        expect(await store.ttl(key('absent'))).toBeNull();
      });

      it('reports the remaining milliseconds of a key with expiry', async () => {
        await store.set(key('k'), 'v', { ttlMs: LONG_TTL_MS });
        const remaining = await store.ttl(key('k'));
        expect(remaining).toBeGreaterThan(LONG_TTL_FLOOR_MS);
        expect(remaining).toBeLessThanOrEqual(LONG_TTL_MS);
      });

      it('forgets a key once its ttl has run out', async () => {
        await store.set(key('k'), 'v', { ttlMs: SHORT_TTL_MS });
        expect(await eventually(async () => (await store.get(key('k'))) === null, EXPIRED_BY_MS)).toBe(true);
        expect(await store.ttl(key('k'))).toBeNull();
      });

      it('does not count an expired key as deleted', async () => {
        await store.set(key('k'), 'v', { ttlMs: SHORT_TTL_MS });
        await shortTtlsElapsed();
        expect(await store.delete(key('k'))).toBe(false);
      });

      it('clears an existing expiry on a set without ttl', async () => {
        await store.set(key('k'), 'first', { ttlMs: SHORT_TTL_MS });
        await store.set(key('k'), 'second');
        expect(await store.ttl(key('k'))).toBeNull();
        await shortTtlsElapsed();
        expect(await store.get(key('k'))).toBe('second');
      });

      it('replaces an existing expiry on a set with ttl', async () => {
        await store.set(key('k'), 'first', { ttlMs: LONG_TTL_MS });
        await store.set(key('k'), 'second', { ttlMs: SHORT_TTL_MS });
        await shortTtlsElapsed();
        expect(await store.get(key('k'))).toBeNull();
      });
    });

    describe('set ifAbsent', () => {
      it('writes when the key is absent', async () => {
        expect(await store.set(key('k'), 'v', { ifAbsent: true })).toBe(true);
        expect(await store.get(key('k'))).toBe('v');
        expect(await store.ttl(key('k'))).toBeNull();
      });

      it('sets the expiry it is given when it writes', async () => {
        expect(await store.set(key('k'), 'v', { ifAbsent: true, ttlMs: LONG_TTL_MS })).toBe(true);
        expect(await store.ttl(key('k'))).toBeGreaterThan(LONG_TTL_FLOOR_MS);
      });

      it('leaves a present key, value and expiry, as it was and returns false', async () => {
        await store.set(key('k'), 'first', { ttlMs: LONG_TTL_MS });
        expect(await store.set(key('k'), 'second', { ifAbsent: true })).toBe(false);
        expect(await store.set(key('k'), 'third', { ifAbsent: true, ttlMs: SHORT_TTL_MS })).toBe(false);
        expect(await store.get(key('k'))).toBe('first');
        expect(await store.ttl(key('k'))).toBeGreaterThan(LONG_TTL_FLOOR_MS);
      });

      it('counts an expired key as absent', async () => {
        await store.set(key('k'), 'old', { ttlMs: SHORT_TTL_MS });
        await shortTtlsElapsed();
        expect(await store.set(key('k'), 'new', { ifAbsent: true })).toBe(true);
        expect(await store.get(key('k'))).toBe('new');
      });

      it('lets exactly one of 50 concurrent writers win', async () => {
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, writer) => store.set(key('k'), `writer-${writer}`, { ifAbsent: true })),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await store.get(key('k'))).toBe(`writer-${results.indexOf(true)}`);
      });
    });

    describe('compareAndSet', () => {
      it('creates an absent key when null is expected', async () => {
        expect(await store.compareAndSet(key('k'), null, 'v')).toBe(true);
        expect(await store.get(key('k'))).toBe('v');
      });

      it('refuses when null is expected and the key exists', async () => {
        await store.set(key('k'), 'v');
        expect(await store.compareAndSet(key('k'), null, 'other')).toBe(false);
        expect(await store.get(key('k'))).toBe('v');
      });

      it('writes when the current value is the expected one', async () => {
        await store.set(key('k'), 'v1');
        expect(await store.compareAndSet(key('k'), 'v1', 'v2')).toBe(true);
        expect(await store.get(key('k'))).toBe('v2');
      });

      it('refuses when the current value is another, and leaves it', async () => {
        await store.set(key('k'), 'v1');
        expect(await store.compareAndSet(key('k'), 'v0', 'v2')).toBe(false);
        expect(await store.get(key('k'))).toBe('v1');
      });

      it('tells the empty string apart from absent', async () => {
        expect(await store.compareAndSet(key('k'), '', 'v')).toBe(false);
        await store.set(key('k'), '');
        expect(await store.compareAndSet(key('k'), null, 'v')).toBe(false);
        expect(await store.compareAndSet(key('k'), '', 'v')).toBe(true);
      });

      it('refuses a value expected of an absent key', async () => {
        expect(await store.compareAndSet(key('k'), 'v1', 'v2')).toBe(false);
        expect(await store.get(key('k'))).toBeNull();
      });

      it('counts an expired key as absent', async () => {
        await store.set(key('k'), 'v1', { ttlMs: SHORT_TTL_MS });
        await shortTtlsElapsed();
        expect(await store.compareAndSet(key('k'), 'v1', 'v2')).toBe(false);
        expect(await store.compareAndSet(key('k'), null, 'v3')).toBe(true);
        expect(await store.get(key('k'))).toBe('v3');
      });

      it('sets the expiry it is given, and like set clears an existing one when given none', async () => {
        expect(await store.compareAndSet(key('k'), null, 'v1', { ttlMs: LONG_TTL_MS })).toBe(true);
        expect(await store.ttl(key('k'))).toBeGreaterThan(LONG_TTL_FLOOR_MS);
        expect(await store.compareAndSet(key('k'), 'v1', 'v2')).toBe(true);
        expect(await store.ttl(key('k'))).toBeNull();
      });

      it('leaves the expiry alone when it refuses', async () => {
        await store.set(key('k'), 'v1', { ttlMs: LONG_TTL_MS });
        expect(await store.compareAndSet(key('k'), 'v0', 'v2')).toBe(false);
        expect(await store.ttl(key('k'))).toBeGreaterThan(LONG_TTL_FLOOR_MS);
      });

      it('lets exactly one of 50 concurrent swaps from the same value win', async () => {
        await store.set(key('k'), 'v0');
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, swapper) => store.compareAndSet(key('k'), 'v0', `swapper-${swapper}`)),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await store.get(key('k'))).toBe(`swapper-${results.indexOf(true)}`);
      });

      it('lets exactly one of 50 concurrent creations win', async () => {
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, creator) => store.compareAndSet(key('k'), null, `creator-${creator}`)),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await store.get(key('k'))).toBe(`creator-${results.indexOf(true)}`);
      });
    });

    describe('increment', () => {
      it('creates an absent counter at 0 and adds 1', async () => {
        expect(await store.increment(key('n'))).toBe(1);
        expect(await store.increment(key('n'))).toBe(2);
        expect(await store.get(key('n'))).toBe('2');
        expect(await store.ttl(key('n'))).toBeNull();
      });

      it('adds by, which may be zero or negative', async () => {
        expect(await store.increment(key('n'), { by: 5 })).toBe(5);
        expect(await store.increment(key('n'), { by: 0 })).toBe(5);
        expect(await store.increment(key('n'), { by: -8 })).toBe(-3);
        expect(await store.get(key('n'))).toBe('-3');
      });

      it('counts on from an integer written by set', async () => {
        await store.set(key('n'), '41');
        expect(await store.increment(key('n'))).toBe(42);
        await store.set(key('m'), '-7');
        expect(await store.increment(key('m'), { by: 7 })).toBe(0);
      });

      it('sets the expiry only when it creates the counter (a fixed window)', async () => {
        expect(await store.increment(key('n'), { ttlMs: LONG_TTL_MS })).toBe(1);
        expect(await store.ttl(key('n'))).toBeGreaterThan(LONG_TTL_FLOOR_MS);
        expect(await store.increment(key('n'), { ttlMs: SHORT_TTL_MS })).toBe(2);
        await shortTtlsElapsed();
        expect(await store.get(key('n'))).toBe('2');
        expect(await store.ttl(key('n'))).toBeGreaterThan(LONG_TTL_FLOOR_MS);
      });

      it('adds no expiry to an existing counter that has none', async () => {
        await store.set(key('n'), '5');
        expect(await store.increment(key('n'), { ttlMs: LONG_TTL_MS })).toBe(6);
        expect(await store.ttl(key('n'))).toBeNull();
      });

      it('keeps the expiry of a counter when incremented without ttlMs', async () => {
        await store.increment(key('n'), { ttlMs: LONG_TTL_MS });
        await store.increment(key('n'));
        expect(await store.ttl(key('n'))).toBeGreaterThan(LONG_TTL_FLOOR_MS);
      });

      it('starts a new window once the counter has expired', async () => {
        await store.increment(key('n'), { by: 3, ttlMs: SHORT_TTL_MS });
        await shortTtlsElapsed();
        expect(await store.increment(key('n'), { ttlMs: LONG_TTL_MS })).toBe(1);
        expect(await store.ttl(key('n'))).toBeGreaterThan(LONG_TTL_FLOOR_MS);
      });

      it('sums 200 concurrent increments exactly, each seeing its own value', async () => {
        const results = await Promise.all(
          Array.from({ length: 200 }, () => store.increment(key('n'), { ttlMs: LONG_TTL_MS })),
        );
        expect([...results].sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, index) => index + 1));
        expect(await store.get(key('n'))).toBe('200');
        expect(await store.ttl(key('n'))).toBeGreaterThan(LONG_TTL_FLOOR_MS);
      });

      it.each(['abc', '1.5', '', ' 1', '+1', '007', '-0', '1e3', '9223372036854775808'])(
        'rejects the value %j as not an integer and leaves it',
        async (value) => {
          await store.set(key('n'), value);
          const failure = store.increment(key('n'), { ttlMs: LONG_TTL_MS });
          await expect(failure).rejects.toBeInstanceOf(KeyValueNotAnIntegerError);
          await expect(failure).rejects.toMatchObject({ type: 'key_value_not_an_integer', retriable: false });
          expect(await store.get(key('n'))).toBe(value);
          expect(await store.ttl(key('n'))).toBeNull();
        },
      );

      it('rejects an increment beyond the 64-bit signed range and leaves the counter', async () => {
        await store.set(key('max'), '9223372036854775807');
        await expect(store.increment(key('max'))).rejects.toBeInstanceOf(KeyValueNotAnIntegerError);
        expect(await store.get(key('max'))).toBe('9223372036854775807');
        await store.set(key('min'), '-9223372036854775808');
        await expect(store.increment(key('min'), { by: -1 })).rejects.toBeInstanceOf(KeyValueNotAnIntegerError);
        expect(await store.get(key('min'))).toBe('-9223372036854775808');
      });
    });

    describe('arguments', () => {
      it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses ttlMs %s before writing', async (ttlMs) => {
        await expect(store.set(key('k'), 'v', { ttlMs })).rejects.toBeInstanceOf(RangeError);
        await expect(store.compareAndSet(key('k'), null, 'v', { ttlMs })).rejects.toBeInstanceOf(RangeError);
        await expect(store.increment(key('k'), { ttlMs })).rejects.toBeInstanceOf(RangeError);
        expect(await store.get(key('k'))).toBeNull();
      });

      it.each([1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1])('refuses to increment by %s', async (by) => {
        await expect(store.increment(key('n'), { by })).rejects.toBeInstanceOf(RangeError);
        expect(await store.get(key('n'))).toBeNull();
      });
    });

    describe('lifecycle', () => {
      it('answers ping while open', async () => {
        await expect(store.ping()).resolves.toBeUndefined();
      });

      it('refuses every call once closed, as not retriable, and closes twice without complaint', async () => {
        const closing = await makeStore();
        await closing.close();
        await closing.close();
        const calls = [
          closing.get(key('k')),
          closing.set(key('k'), 'v'),
          closing.compareAndSet(key('k'), null, 'v'),
          closing.increment(key('k')),
          closing.ttl(key('k')),
          closing.delete(key('k')),
          closing.ping(),
        ];
        for (const call of calls) {
          await expect(call).rejects.toBeInstanceOf(KeyValueUnavailableError);
          await expect(call).rejects.toMatchObject({ type: 'key_value_unavailable', retriable: false });
        }
      });
    });
  });
}
