import { KeyValueUnavailableError } from '../key-value-store';
import {
  checkRateLimitArguments,
  gcraStep,
  type RateLimit,
  type RateLimitDecision,
  type RateLimiter,
} from '../rate-limiter';

export interface InMemoryRateLimiterOptions {
  /** How often buckets that are full again (expired) are dropped. Decisions never depend on it. Default 10 s. */
  readonly sweepIntervalMs?: number;
  /**
   * The most buckets held at once; past it the least recently used one is dropped (it starts full again). Bounds
   * the memory a flood of distinct keys can take (~150 bytes a bucket). Default 100,000.
   */
  readonly maxKeys?: number;
  /** Milliseconds on a monotonic clock; for tests. Default `performance.now`. */
  readonly clock?: () => number;
}

/**
 * The embedded RateLimiter: GCRA (see `rate-limiter.ts`) over a Map in this process. Each call runs to completion
 * without yielding, which makes it atomic here. The Redis adapter runs the same step in Lua on Redis' clock.
 */
export class InMemoryRateLimiter implements RateLimiter {
  /** key → TAT in µs on `clock`; Map order is least recently written first. */
  private readonly buckets = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly maxKeys: number;
  private readonly clock: () => number;
  private closed = false;

  constructor(options: InMemoryRateLimiterOptions = {}) {
    this.maxKeys = options.maxKeys ?? 100_000;
    if (!(Number.isSafeInteger(this.maxKeys) && this.maxKeys > 0))
      throw new RangeError(`maxKeys must be a positive integer, got ${this.maxKeys}`);
    this.clock = options.clock ?? (() => performance.now());
    this.sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 10_000);
    // A limiter nobody closed must not keep the process alive.
    this.sweeper.unref();
  }

  async consume(key: string, limit: RateLimit): Promise<RateLimitDecision> {
    checkRateLimitArguments(key, limit);
    if (this.closed) throw new KeyValueUnavailableError('the in-memory rate limiter is closed', false);
    const nowUs = Math.round(this.clock() * 1000);
    const stored = this.buckets.get(key);
    const { decision, store } = gcraStep(nowUs, stored !== undefined && stored > nowUs ? stored : undefined, limit);
    if (store) {
      this.buckets.delete(key); // re-inserted last: the Map's order stays least recently written first
      this.buckets.set(key, store.tat);
      if (this.buckets.size > this.maxKeys) this.evictLeastRecentlyWritten();
    }
    return decision;
  }

  /** Buckets held now (expired ones not yet swept included). */
  get size(): number {
    return this.buckets.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    this.buckets.clear();
  }

  private sweep(): void {
    const nowUs = this.clock() * 1000;
    for (const [key, tat] of this.buckets) if (tat <= nowUs) this.buckets.delete(key);
  }

  /** The least recently written buckets are the likeliest to have expired already; O(1) a call. */
  private evictLeastRecentlyWritten(): void {
    for (const key of this.buckets.keys()) {
      if (this.buckets.size <= this.maxKeys) break;
      this.buckets.delete(key);
    }
  }
}
