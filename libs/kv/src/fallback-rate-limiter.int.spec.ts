/**
 * Redis unreachable: the limiter fails open to a per-process in-memory limiter with the same limit (payments go
 * on; abuse stays bounded at limit × gateway processes), warns at most once per period, and goes back to Redis by
 * itself. With a RedisRateLimiter at a closed loopback port, and with a scripted primary for the timing rules.
 */
import { FallbackRateLimiter } from './fallback-rate-limiter';
import { KeyValueUnavailableError } from './key-value-store';
import { InMemoryRateLimiter } from './memory/in-memory-rate-limiter';
import type { RateLimit, RateLimitDecision, RateLimiter } from './rate-limiter';
import { RedisRateLimiter } from './redis/redis-rate-limiter';

const limit: RateLimit = { count: 5, periodMs: 600_000 };

describe('FallbackRateLimiter over a Redis nobody listens to', () => {
  let redis: RedisRateLimiter;
  let local: InMemoryRateLimiter;
  beforeAll(() => {
    redis = new RedisRateLimiter({ url: 'redis://127.0.0.1:1' });
    local = new InMemoryRateLimiter();
  });
  afterAll(async () => {
    await redis.close();
    await local.close();
  });

  it('is what it falls back from: the Redis limiter alone rejects fast with a retriable error', async () => {
    const error = await redis.consume('k', limit).catch((rejection: unknown) => rejection);
    expect(error).toBeInstanceOf(KeyValueUnavailableError);
    expect(error).toMatchObject({ retriable: true });
    expect((error as Error).message).toMatch(/ECONNREFUSED/);
  });

  it('still limits, per process, with the same limit, and reports the fallback once', async () => {
    const reports: { error: unknown; decidedLocally: number }[] = [];
    const limiter = new FallbackRateLimiter({
      primary: redis,
      fallback: local,
      onFallback: (report) => reports.push(report),
    });
    const decisions: RateLimitDecision[] = [];
    for (let call = 0; call <= limit.count; call += 1) decisions.push(await limiter.consume('token-a', limit));
    expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, true, true, false]);
    expect(decisions[limit.count]!.retryAfterMs).toBeGreaterThan(0);
    expect((await limiter.consume('token-b', limit)).allowed).toBe(true);
    expect(limiter.fallingBack).toBe(true);
    expect(reports).toHaveLength(1);
    expect(reports[0]!.error).toBeInstanceOf(KeyValueUnavailableError);
    expect(reports[0]!.decidedLocally).toBe(1);
  });

  it('passes a bad argument through as the caller’s error, not as an outage', async () => {
    const limiter = new FallbackRateLimiter({ primary: redis, fallback: local });
    await expect(limiter.consume('', limit)).rejects.toBeInstanceOf(RangeError);
    await expect(limiter.consume('k', { count: 0, periodMs: 1 })).rejects.toBeInstanceOf(RangeError);
  });
});

/** A primary whose answers the test sets, counting its calls. */
class ScriptedPrimary implements RateLimiter {
  calls = 0;
  failing: Error | undefined;
  async consume(): Promise<RateLimitDecision> {
    this.calls += 1;
    if (this.failing) throw this.failing;
    return { allowed: true, retryAfterMs: 0, remaining: 42 };
  }
}

describe('FallbackRateLimiter timing rules', () => {
  let now: number;
  let primary: ScriptedPrimary;
  let limiter: FallbackRateLimiter;
  let reports: number[];
  let recoveries: number[];

  beforeEach(() => {
    now = 0;
    primary = new ScriptedPrimary();
    reports = [];
    recoveries = [];
    limiter = new FallbackRateLimiter({
      primary,
      fallback: new InMemoryRateLimiter({ clock: () => now }),
      retryPrimaryAfterMs: 1_000,
      reportEveryMs: 60_000,
      clock: () => now,
      onFallback: (report) => reports.push(report.decidedLocally),
      onRecovered: (report) => recoveries.push(report.decidedLocally),
    });
  });

  it('uses the primary while it answers', async () => {
    expect(await limiter.consume('k', limit)).toEqual({ allowed: true, retryAfterMs: 0, remaining: 42 });
    expect(primary.calls).toBe(1);
    expect(limiter.fallingBack).toBe(false);
  });

  it('leaves a failed primary alone for retryPrimaryAfterMs, then tries it again', async () => {
    primary.failing = new KeyValueUnavailableError('down', true);
    await limiter.consume('k', limit);
    expect(primary.calls).toBe(1);
    for (let call = 0; call < 10; call += 1) {
      now += 50;
      await limiter.consume('k', limit);
    }
    expect(primary.calls).toBe(1); // 500 ms later: still left alone
    now += 500;
    await limiter.consume('k', limit);
    expect(primary.calls).toBe(2);
  });

  it('falls back on any failure of the primary, not only a reported outage', async () => {
    primary.failing = new Error('ERR something Redis did not like');
    expect((await limiter.consume('k', limit)).remaining).toBe(limit.count - 1);
    expect(limiter.fallingBack).toBe(true);
  });

  it('reports at most once per reportEveryMs, with how many calls it decided meanwhile', async () => {
    primary.failing = new KeyValueUnavailableError('down', true);
    for (let call = 0; call < 30; call += 1) {
      await limiter.consume(`k${call}`, limit);
      now += 1_000;
    }
    expect(reports).toEqual([1]);
    now += 30_000; // 60 s after the first report
    await limiter.consume('k', limit);
    expect(reports).toEqual([1, 30]);
  });

  it('goes back to the primary by itself, says so once, and reports a new outage at once', async () => {
    primary.failing = new KeyValueUnavailableError('down', true);
    await limiter.consume('k', limit);
    await limiter.consume('k', limit);
    primary.failing = undefined;
    now += 1_000;
    expect((await limiter.consume('k', limit)).remaining).toBe(42);
    expect(limiter.fallingBack).toBe(false);
    expect(recoveries).toEqual([2]);
    await limiter.consume('k', limit);
    expect(recoveries).toEqual([2]);

    primary.failing = new KeyValueUnavailableError('down again', true);
    now += 1_000;
    await limiter.consume('k', limit);
    expect(reports).toEqual([1, 1]);
  });
});
