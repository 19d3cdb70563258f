import { rateLimiterContract } from '../contract/rate-limiter.contract';
import { InMemoryRateLimiter } from './in-memory-rate-limiter';

rateLimiterContract('InMemoryRateLimiter', async () => new InMemoryRateLimiter(), { available: true });
rateLimiterContract(
  'InMemoryRateLimiter, sweeping every 5 ms',
  async () => new InMemoryRateLimiter({ sweepIntervalMs: 5 }),
  { available: true },
);

describe('InMemoryRateLimiter state', () => {
  const limit = { count: 2, periodMs: 1_000 };

  it('keeps a bucket no longer than its TAT: swept once full again', async () => {
    let now = 1_000;
    const limiter = new InMemoryRateLimiter({ clock: () => now, sweepIntervalMs: 3_600_000 });
    await limiter.consume('a', limit);
    await limiter.consume('b', limit);
    await limiter.consume('b', limit);
    expect(limiter.size).toBe(2);
    now += 500; // a's TAT (+500 ms) reached; b's (+1000 ms) not
    (limiter as unknown as { sweep(): void }).sweep();
    expect(limiter.size).toBe(1);
    now += 500;
    (limiter as unknown as { sweep(): void }).sweep();
    expect(limiter.size).toBe(0);
    await limiter.close();
  });

  it('treats an expired bucket as a fresh one even before the sweep', async () => {
    let now = 0;
    const limiter = new InMemoryRateLimiter({ clock: () => now, sweepIntervalMs: 3_600_000 });
    expect((await limiter.consume('k', limit)).remaining).toBe(1);
    expect((await limiter.consume('k', limit)).remaining).toBe(0);
    expect((await limiter.consume('k', limit)).allowed).toBe(false);
    now += 499;
    expect(await limiter.consume('k', limit)).toEqual({ allowed: false, retryAfterMs: 1, remaining: 0 });
    now += 1;
    expect(await limiter.consume('k', limit)).toEqual({ allowed: true, retryAfterMs: 0, remaining: 0 });
    now += 1_000;
    expect(await limiter.consume('k', limit)).toEqual({ allowed: true, retryAfterMs: 0, remaining: 1 });
    await limiter.close();
  });

  it('holds at most maxKeys buckets, dropping the least recently written', async () => {
    const now = 0;
    const limiter = new InMemoryRateLimiter({ clock: () => now, maxKeys: 3, sweepIntervalMs: 3_600_000 });
    for (const bucket of ['a', 'b', 'c']) await limiter.consume(bucket, limit);
    await limiter.consume('a', limit); // a is now the most recently written
    await limiter.consume('d', limit);
    expect(limiter.size).toBe(3);
    // b was dropped (starts full again); a kept its state (exhausted).
    expect((await limiter.consume('b', limit)).remaining).toBe(1);
    expect((await limiter.consume('a', limit)).allowed).toBe(false);
    await limiter.close();
  });
});
