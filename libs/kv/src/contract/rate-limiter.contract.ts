import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Availability, describeWithInfra } from '@switchyard/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { KeyValueUnavailableError } from '../key-value-store';
import type { RateLimit, RateLimitDecision, RateLimiter } from '../rate-limiter';

export type ClosableRateLimiter = RateLimiter & { close(): Promise<void> };

/**
 * Limits whose emission interval (period / count) is far longer than any test, so that "refused" cannot turn into
 * "allowed" because a loaded machine was slow: exact assertions hold whatever the timing.
 */
const SLOW: RateLimit = { count: 5, periodMs: 600_000 }; // one request regained every 120 s
const SLOW_INTERVAL_MS = SLOW.periodMs / SLOW.count;
/** A limit that regains a request every second, for the tests that wait for it (bounded polls, no fixed sleeps). */
const QUICK: RateLimit = { count: 2, periodMs: 2_000 };

async function eventually(check: () => Promise<boolean>, withinMs: number): Promise<boolean> {
  const deadline = performance.now() + withinMs;
  for (;;) {
    if (await check()) return true;
    if (performance.now() > deadline) return false;
    await sleep(20);
  }
}

/**
 * What every RateLimiter adapter must do (GCRA: a burst of `count`, then one request per `periodMs / count`).
 * `makeLimiter` is called once for the suite (and again for the close test); every test uses keys under its own
 * random prefix, so the suite can share a Redis with anything else. Keys expire by themselves within their period.
 */
export function rateLimiterContract(
  name: string,
  makeLimiter: () => Promise<ClosableRateLimiter>,
  availability: Availability,
): void {
  describeWithInfra(`${name} (RateLimiter contract)`, availability, () => {
    let limiter: ClosableRateLimiter;
    let prefix = '';
    const key = (name: string): string => `rate-contract:${prefix}:${name}`;
    const consumeTimes = async (times: number, bucket: string, limit: RateLimit): Promise<RateLimitDecision[]> => {
      const decisions: RateLimitDecision[] = [];
      for (let call = 0; call < times; call += 1) decisions.push(await limiter.consume(bucket, limit));
      return decisions;
    };

    beforeAll(async () => {
      limiter = await makeLimiter();
    });
    beforeEach(() => {
      prefix = randomUUID();
    });
    afterAll(async () => {
      await limiter?.close();
    });

    describe('the burst', () => {
      it('allows count requests at once, counting down what remains, and refuses the next', async () => {
        const decisions = await consumeTimes(SLOW.count + 1, key('k'), SLOW);
        expect(decisions.slice(0, SLOW.count)).toEqual(
          [4, 3, 2, 1, 0].map((remaining) => ({ allowed: true, retryAfterMs: 0, remaining })),
        );
        const refused = decisions[SLOW.count]!;
        expect(refused).toMatchObject({ allowed: false, remaining: 0 });
        // One request comes back one emission interval after the first was allowed (less the time the test took).
        expect(refused.retryAfterMs).toBeLessThanOrEqual(SLOW_INTERVAL_MS);
        expect(refused.retryAfterMs).toBeGreaterThan(SLOW_INTERVAL_MS - 60_000);
      });

      it('keeps refusing, and a refusal does not push the reopening further away', async () => {
        await consumeTimes(SLOW.count, key('k'), SLOW);
        const refusals = await consumeTimes(10, key('k'), SLOW);
        expect(refusals.every((decision) => !decision.allowed)).toBe(true);
        for (let index = 1; index < refusals.length; index += 1) {
          expect(refusals[index]!.retryAfterMs).toBeLessThanOrEqual(refusals[index - 1]!.retryAfterMs);
        }
      });

      it('lets exactly count of many concurrent requests through', async () => {
        const limit: RateLimit = { count: 20, periodMs: 3_600_000 };
        const decisions = await Promise.all(Array.from({ length: 60 }, () => limiter.consume(key('k'), limit)));
        expect(decisions.filter((decision) => decision.allowed)).toHaveLength(20);
        expect(
          decisions
            .filter((decision) => decision.allowed)
            .map((decision) => decision.remaining)
            .sort((a, b) => a - b),
        ).toEqual(Array.from({ length: 20 }, (_, index) => index));
      });

      it('counts a period not divisible by the count without losing a request', async () => {
        const limit: RateLimit = { count: 7, periodMs: 1_000_000 };
        const decisions = await consumeTimes(8, key('k'), limit);
        expect(decisions.map((decision) => decision.remaining)).toEqual([6, 5, 4, 3, 2, 1, 0, 0]);
        expect(decisions.map((decision) => decision.allowed)).toEqual([
          true,
          true,
          true,
          true,
          true,
          true,
          true,
          false,
        ]);
      });

      it('allows a limit of one', async () => {
        const decisions = await consumeTimes(2, key('k'), { count: 1, periodMs: 600_000 });
        expect(decisions[0]).toEqual({ allowed: true, retryAfterMs: 0, remaining: 0 });
        expect(decisions[1]!.allowed).toBe(false);
        expect(decisions[1]!.retryAfterMs).toBeGreaterThan(540_000);
      });
    });

    describe('keys', () => {
      it('keeps keys apart', async () => {
        await consumeTimes(SLOW.count + 1, key('a'), SLOW);
        expect(await limiter.consume(key('b'), SLOW)).toEqual({
          allowed: true,
          retryAfterMs: 0,
          remaining: SLOW.count - 1,
        });
        expect((await limiter.consume(key('a'), SLOW)).allowed).toBe(false);
      });

      it('takes any string as a key', async () => {
        for (const odd of ['ünïcødé ✓ 🚂', 'with spaces and\r\nlines', '{"json":[1]}', 'x'.repeat(1000)]) {
          expect(await limiter.consume(key(odd), SLOW)).toEqual({
            allowed: true,
            retryAfterMs: 0,
            remaining: SLOW.count - 1,
          });
        }
      });
    });

    describe('over time', () => {
      it('gives one request back per emission interval, not the whole burst', async () => {
        await consumeTimes(QUICK.count, key('k'), QUICK);
        const refused = await limiter.consume(key('k'), QUICK);
        expect(refused.allowed).toBe(false);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(QUICK.periodMs / QUICK.count);
        let allowedAgain: RateLimitDecision | undefined;
        expect(
          await eventually(async () => {
            const decision = await limiter.consume(key('k'), QUICK);
            if (decision.allowed) allowedAgain = decision;
            return decision.allowed;
          }, 5_000),
        ).toBe(true);
        // One came back: allowed with none left, and the very next is refused again.
        expect(allowedAgain).toEqual({ allowed: true, retryAfterMs: 0, remaining: 0 });
        expect((await limiter.consume(key('k'), QUICK)).allowed).toBe(false);
      });

      it('starts over with the whole burst once a period has passed', async () => {
        const limit: RateLimit = { count: 3, periodMs: 300 };
        await consumeTimes(4, key('k'), limit);
        // A whole period after the last allowed request the bucket is full again, however much later we look.
        await sleep(limit.periodMs + 100);
        expect(await limiter.consume(key('k'), limit)).toEqual({
          allowed: true,
          retryAfterMs: 0,
          remaining: limit.count - 1,
        });
      });
    });

    describe('arguments', () => {
      it.each([
        ['an empty key', '', SLOW],
        ['count 0', 'k', { count: 0, periodMs: 1000 }],
        ['count -1', 'k', { count: -1, periodMs: 1000 }],
        ['count 1.5', 'k', { count: 1.5, periodMs: 1000 }],
        ['count NaN', 'k', { count: Number.NaN, periodMs: 1000 }],
        ['periodMs 0', 'k', { count: 1, periodMs: 0 }],
        ['periodMs Infinity', 'k', { count: 1, periodMs: Number.POSITIVE_INFINITY }],
        ['periodMs 2.5', 'k', { count: 1, periodMs: 2.5 }],
        ['a period too long to count in microseconds', 'k', { count: 1, periodMs: Number.MAX_SAFE_INTEGER }],
        ['more than one request per microsecond', 'k', { count: 1001, periodMs: 1 }],
      ] as const)('refuses %s with a RangeError, counting nothing', async (_, bucket, limit) => {
        const full = bucket === '' ? '' : key(bucket);
        await expect(limiter.consume(full, limit as RateLimit)).rejects.toBeInstanceOf(RangeError);
        if (full !== '')
          expect(await limiter.consume(full, SLOW)).toEqual({
            allowed: true,
            retryAfterMs: 0,
            remaining: SLOW.count - 1,
          });
      });
    });

    describe('lifecycle', () => {
      it('refuses every call once closed, as not retriable, and closes twice without complaint', async () => {
        const closing = await makeLimiter();
        await closing.consume(key('k'), SLOW);
        await closing.close();
        await closing.close();
        const call = closing.consume(key('k'), SLOW);
        await expect(call).rejects.toBeInstanceOf(KeyValueUnavailableError);
        await expect(call).rejects.toMatchObject({ type: 'key_value_unavailable', retriable: false });
      });
    });
  });
}
