import type { RateLimit, RateLimitDecision, RateLimiter } from './rate-limiter';

export interface FallbackRateLimiterOptions {
  /** What normally decides: the Redis limiter shared by every gateway process. */
  readonly primary: RateLimiter;
  /** What decides while the primary fails: an in-memory limiter of this process, given the same limits. */
  readonly fallback: RateLimiter;
  /**
   * After the primary failed, calls go straight to the fallback for this long before the primary is tried again,
   * so a Redis that stopped answering costs one timeout per period, not one per request. Default 1000 ms.
   */
  readonly retryPrimaryAfterMs?: number;
  /** The least time between two `onFallback` reports. Default 60 s. */
  readonly reportEveryMs?: number;
  /**
   * Told when the fallback starts deciding, then at most once per `reportEveryMs` while it still does: the
   * primary's last error and how many calls the fallback decided since the previous report.
   */
  readonly onFallback?: (report: { error: unknown; decidedLocally: number }) => void;
  /** Told when the primary decides again after a fallback period. */
  readonly onRecovered?: (report: { decidedLocally: number }) => void;
  /** Milliseconds, monotonic; for tests. Default `performance.now`. */
  readonly clock?: () => number;
}

/**
 * Fails open to a bounded limit: while the primary (Redis) cannot answer, each process limits on its own with the
 * same limit, so payments go on and a token still gets at most `count` per period from each gateway process
 * (limit × processes in all). A bad argument (RangeError) is never retried on the fallback: it is the caller's bug.
 */
export class FallbackRateLimiter implements RateLimiter {
  private readonly retryPrimaryAfterMs: number;
  private readonly reportEveryMs: number;
  private readonly clock: () => number;
  /** Set while the fallback decides: until when the primary is left alone. */
  private primaryDownUntil: number | undefined;
  private lastReportAt = Number.NEGATIVE_INFINITY;
  private decidedLocally = 0;
  private decidedLocallyInPeriod = 0;
  private lastError: unknown;

  constructor(private readonly options: FallbackRateLimiterOptions) {
    this.retryPrimaryAfterMs = options.retryPrimaryAfterMs ?? 1000;
    this.reportEveryMs = options.reportEveryMs ?? 60_000;
    this.clock = options.clock ?? (() => performance.now());
  }

  /** Whether the fallback is deciding now (the primary failed and has not answered since). */
  get fallingBack(): boolean {
    return this.primaryDownUntil !== undefined;
  }

  async consume(key: string, limit: RateLimit): Promise<RateLimitDecision> {
    if (this.primaryDownUntil === undefined || this.clock() >= this.primaryDownUntil) {
      try {
        const decision = await this.options.primary.consume(key, limit);
        if (this.primaryDownUntil !== undefined) this.recovered();
        return decision;
      } catch (error) {
        if (error instanceof RangeError) throw error;
        this.primaryFailed(error);
      }
    }
    const decision = await this.options.fallback.consume(key, limit);
    this.decidedLocally += 1;
    this.decidedLocallyInPeriod += 1;
    this.maybeReport();
    return decision;
  }

  private primaryFailed(error: unknown): void {
    const firstFailure = this.primaryDownUntil === undefined;
    this.lastError = error;
    this.primaryDownUntil = this.clock() + this.retryPrimaryAfterMs;
    if (firstFailure) {
      this.decidedLocallyInPeriod = 0;
      this.lastReportAt = Number.NEGATIVE_INFINITY; // a new outage is always reported at once
    }
  }

  private maybeReport(): void {
    const now = this.clock();
    if (now - this.lastReportAt < this.reportEveryMs) return;
    this.lastReportAt = now;
    const decidedLocally = this.decidedLocally;
    this.decidedLocally = 0;
    this.options.onFallback?.({ error: this.lastError, decidedLocally });
  }

  private recovered(): void {
    this.primaryDownUntil = undefined;
    this.lastError = undefined;
    const decidedLocally = this.decidedLocallyInPeriod;
    this.decidedLocally = 0;
    this.decidedLocallyInPeriod = 0;
    this.options.onRecovered?.({ decidedLocally });
  }
}
