/**
 * The RateLimiter port: one atomic "may this key do one more request?" per call. Adapters: in-memory (embedded,
 * one process) and Redis (one Lua script per call, shared by every gateway process). Both implement the same
 * algorithm, GCRA (below), and pass `contract/rate-limiter.contract.ts`; docs/rate-limits.md says why GCRA.
 *
 * GCRA (the generic cell rate algorithm, a leaky bucket kept as one timestamp): a limit of `count` per `periodMs`
 * lets `count` requests through at once, then one every `periodMs / count` (the emission interval). The stored
 * state of a key is its theoretical arrival time (TAT): when the bucket would be empty again. A request at `now`
 * is allowed when `max(TAT, now) + interval - periodMs <= now`; it then moves the TAT by one interval. A refused
 * request changes nothing (hammering does not push the reopening further away). The key expires when its TAT
 * passes — a bucket that is full again is the same as no bucket — so state never outlives `periodMs`.
 */

export interface RateLimit {
  /** Requests allowed per period: the burst, and the sustained rate `count / periodMs`. A positive safe integer. */
  readonly count: number;
  /** A positive safe integer number of milliseconds. */
  readonly periodMs: number;
}

export interface RateLimitDecision {
  readonly allowed: boolean;
  /** When refused: how long until one request will be allowed again (ms, > 0). When allowed: 0. */
  readonly retryAfterMs: number;
  /** How many more requests would be allowed right now after this one (0 when refused). */
  readonly remaining: number;
}

export interface RateLimiter {
  /**
   * Counts one request of `key` against `limit` and says whether it may go ahead. Atomic per key: of concurrent
   * calls on a fresh key with `count` n, exactly n are allowed (within one emission interval). Rejects with a
   * RangeError before any I/O for an empty key or a limit that is not two positive safe integers, and with a
   * `KeyValueUnavailableError` when the adapter's store cannot be reached.
   */
  consume(key: string, limit: RateLimit): Promise<RateLimitDecision>;
}

/** The argument checks every adapter makes, so that a bad argument fails the same way everywhere. */
export function checkRateLimitArguments(key: string, limit: RateLimit): void {
  if (typeof key !== 'string' || key === '') throw new RangeError('a rate limit key must be a non-empty string');
  for (const [name, value] of [
    ['count', limit?.count],
    ['periodMs', limit?.periodMs],
  ] as const) {
    if (!(Number.isSafeInteger(value) && (value as number) > 0)) {
      throw new RangeError(`rate limit ${name} must be a positive safe integer, got ${value}`);
    }
  }
  // The arithmetic is on whole microseconds: the period must be one, and a request may come back at most every µs.
  if (!Number.isSafeInteger(limit.periodMs * 1000))
    throw new RangeError(`rate limit periodMs is too long: ${limit.periodMs}`);
  if (limit.count > limit.periodMs * 1000) {
    throw new RangeError(
      `rate limit count must be at most one per microsecond of periodMs, got ${limit.count} per ${limit.periodMs} ms`,
    );
  }
}

/**
 * One GCRA step, on microseconds (integers, exact in a double up to 2^53 µs ≈ 285 years since the epoch, so the
 * same arithmetic holds in Redis' Lua and here). `storedTat` is undefined for an absent or expired key. Returns
 * the decision and, when allowed, the TAT to store and for how long (ms).
 */
export function gcraStep(
  nowUs: number,
  storedTat: number | undefined,
  limit: RateLimit,
): { decision: RateLimitDecision; store?: { tat: number; ttlMs: number } } {
  const periodUs = limit.periodMs * 1000;
  const intervalUs = periodUs / limit.count;
  const tat = storedTat === undefined || storedTat < nowUs ? nowUs : storedTat;
  const nextTat = tat + intervalUs;
  const allowAt = nextTat - periodUs;
  if (nowUs < allowAt) {
    return { decision: { allowed: false, retryAfterMs: Math.ceil((allowAt - nowUs) / 1000), remaining: 0 } };
  }
  // The small epsilon keeps 49.999999… (a period not divisible by the count) from reading as 49.
  const remaining = Math.floor((periodUs - (nextTat - nowUs)) / intervalUs + 1e-9);
  return {
    decision: { allowed: true, retryAfterMs: 0, remaining: Math.max(0, remaining) },
    store: { tat: Math.round(nextTat), ttlMs: Math.max(1, Math.ceil((nextTat - nowUs) / 1000)) },
  };
}
