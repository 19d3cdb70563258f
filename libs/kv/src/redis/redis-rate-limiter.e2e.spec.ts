import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeWithInfra } from '@switchyard/testing';
import { Redis } from 'ioredis';
import { rateLimiterContract } from '../contract/rate-limiter.contract';
import { FallbackRateLimiter } from '../fallback-rate-limiter';
import { InMemoryRateLimiter } from '../memory/in-memory-rate-limiter';
import { probeRedis } from './probe-redis';
import { defaultRedisUrl } from './redis-key-value-store';
import { RedisRateLimiter } from './redis-rate-limiter';

const url = defaultRedisUrl();
const keyPrefix = 'switchyard-test:rate-limit:';

// An async describe rather than a top-level await, which the repository's CommonJS tsconfig refuses.
describe('Redis rate limiter', async () => {
  const availability = await probeRedis(url);
  rateLimiterContract('RedisRateLimiter', async () => new RedisRateLimiter({ url, keyPrefix }), availability);
  describeWithInfra('RedisRateLimiter on a real Redis', availability, redisSpecifics);
  describeWithInfra('FallbackRateLimiter when Redis goes away and comes back', availability, goesAwayAndBack);
});

function redisSpecifics(): void {
  const limiters: RedisRateLimiter[] = [];
  let raw: Redis;
  let key = '';
  const limiter = (): RedisRateLimiter => {
    const made = new RedisRateLimiter({ url, keyPrefix });
    limiters.push(made);
    return made;
  };
  const limit = { count: 5, periodMs: 600_000 };

  beforeAll(() => {
    raw = new Redis(url, { maxRetriesPerRequest: 0 });
  });
  beforeEach(() => {
    key = `rate-redis:${randomUUID()}`;
  });
  afterEach(async () => {
    await raw.del(`${keyPrefix}${key}`);
  });
  afterAll(async () => {
    await Promise.all(limiters.map((each) => each.close()));
    await raw?.quit();
  });

  it('keeps one key per bucket, under keyPrefix, holding the TAT on Redis’ clock and expiring at it', async () => {
    const [seconds, micros] = await raw.time();
    const redisNowUs = Number(seconds) * 1_000_000 + Number(micros);
    await limiter().consume(key, limit);
    expect(await raw.exists(key)).toBe(0);
    const tat = Number(await raw.get(`${keyPrefix}${key}`));
    const intervalUs = (limit.periodMs / limit.count) * 1000;
    // The TAT is one emission interval after the script's `TIME`, which came a little after ours.
    expect(tat).toBeGreaterThanOrEqual(redisNowUs + intervalUs);
    expect(tat).toBeLessThan(redisNowUs + intervalUs + 5_000_000);
    const ttl = await raw.pttl(`${keyPrefix}${key}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(limit.periodMs / limit.count);
  });

  it('never lets a key outlive its period, however many requests', async () => {
    const shared = limiter();
    for (let call = 0; call < 3 * limit.count; call += 1) await shared.consume(key, limit);
    expect(await raw.pttl(`${keyPrefix}${key}`)).toBeLessThanOrEqual(limit.periodMs);
  });

  it('writes nothing for a refused request', async () => {
    const shared = limiter();
    for (let call = 0; call < limit.count; call += 1) await shared.consume(key, limit);
    const before = await raw.get(`${keyPrefix}${key}`);
    expect((await shared.consume(key, limit)).allowed).toBe(false);
    expect(await raw.get(`${keyPrefix}${key}`)).toBe(before);
  });

  it('shares one bucket between limiters on the same Redis, as gateway processes do', async () => {
    const [first, second] = [limiter(), limiter()];
    const decisions = [];
    for (let call = 0; call < limit.count; call += 1)
      decisions.push(await (call % 2 === 0 ? first : second).consume(key, limit));
    expect(decisions.map((decision) => decision.remaining)).toEqual([4, 3, 2, 1, 0]);
    expect((await first.consume(key, limit)).allowed).toBe(false);
    expect((await second.consume(key, limit)).allowed).toBe(false);
  });

  it('runs its script by digest (EVALSHA), one command a request, and reloads it when Redis has forgotten it', async () => {
    const calls = async (command: string): Promise<number> =>
      Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(await raw.info('commandstats'))?.[1] ?? 0);
    const shared = limiter();
    await shared.consume(key, limit); // the first call may load the script
    const before = await calls('evalsha');
    await shared.consume(key, limit);
    expect(await calls('evalsha')).toBeGreaterThan(before);

    await raw.script('FLUSH'); // as after a Redis restart
    expect(await shared.consume(key, limit)).toEqual({ allowed: true, retryAfterMs: 0, remaining: 2 });
  });

  it('reads a garbage value in its key as a full bucket and repairs it', async () => {
    await raw.set(`${keyPrefix}${key}`, 'not a number');
    expect(await limiter().consume(key, limit)).toEqual({ allowed: true, retryAfterMs: 0, remaining: 4 });
    expect(Number.isFinite(Number(await raw.get(`${keyPrefix}${key}`)))).toBe(true);
  });
}

/** A TCP proxy in front of the real Redis that a test can stop (connections dropped, port refused) and start again. */
class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket
          .on('error', () => socket.destroy())
          .on('close', () => {
            this.sockets.delete(socket);
            client.destroy();
            upstream.destroy();
          });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((listening) => server.listen(this.port, '127.0.0.1', listening));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise((closed) => server.close(closed));
  }
}

function goesAwayAndBack(): void {
  const target = new URL(url);
  const proxy = new TcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
  let redis: RedisRateLimiter;
  let local: InMemoryRateLimiter;
  let limiter: FallbackRateLimiter;
  let raw: Redis;
  const fallbacks: unknown[] = [];
  const recoveries: number[] = [];
  const key = `rate-fallback:${randomUUID()}`;
  const limit = { count: 3, periodMs: 600_000 };

  beforeAll(async () => {
    await proxy.start();
    const viaProxy = new URL(url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    redis = new RedisRateLimiter({ url: viaProxy.toString(), keyPrefix });
    local = new InMemoryRateLimiter();
    limiter = new FallbackRateLimiter({
      primary: redis,
      fallback: local,
      retryPrimaryAfterMs: 100,
      onFallback: (report) => fallbacks.push(report.error),
      onRecovered: (report) => recoveries.push(report.decidedLocally),
    });
    raw = new Redis(url, { maxRetriesPerRequest: 0 });
  });
  afterAll(async () => {
    await raw?.del(`${keyPrefix}${key}`);
    await raw?.quit();
    await redis?.close();
    await local?.close();
    await proxy.stop();
  });

  it('decides in Redis, then locally (still limiting) while Redis is away, then in Redis again', async () => {
    expect((await limiter.consume(key, limit)).remaining).toBe(2);
    expect(await raw.exists(`${keyPrefix}${key}`)).toBe(1);

    await proxy.stop();
    // The local limiter starts its own bucket with the same limit: 3 more at most from this process.
    const away = [];
    for (let call = 0; call < 4; call += 1) away.push(await limiter.consume(key, limit));
    expect(away.map((decision) => decision.allowed)).toEqual([true, true, true, false]);
    expect(limiter.fallingBack).toBe(true);
    expect(fallbacks).toHaveLength(1);

    await proxy.start();
    // Back in Redis once the client has reconnected: the Redis bucket (one used) answers again.
    const deadline = performance.now() + 5_000;
    let back: Awaited<ReturnType<FallbackRateLimiter['consume']>> | undefined;
    while (performance.now() < deadline) {
      const decision = await limiter.consume(key, limit);
      if (!limiter.fallingBack) {
        back = decision;
        break;
      }
      await sleep(50);
    }
    expect(back).toEqual({ allowed: true, retryAfterMs: 0, remaining: 1 });
    expect(recoveries).toHaveLength(1);
    expect(recoveries[0]).toBeGreaterThanOrEqual(4);
  });
}
