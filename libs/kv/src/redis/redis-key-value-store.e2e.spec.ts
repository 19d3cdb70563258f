import { randomUUID } from 'node:crypto';
import { describeWithInfra } from '@switchyard/testing';
import { Redis } from 'ioredis';
import { keyValueContract } from '../contract';
import { probeRedis } from './probe-redis';
import { RedisKeyValueStore, defaultRedisUrl } from './redis-key-value-store';

const url = defaultRedisUrl();
const keyPrefix = 'switchyard-test:';

// An async describe rather than a top-level await, which the repository's CommonJS tsconfig refuses.
describe('Redis adapter', async () => {
  const availability = await probeRedis(url);
  keyValueContract('RedisKeyValueStore', async () => new RedisKeyValueStore({ url, keyPrefix }), availability);
  describeWithInfra('RedisKeyValueStore on a real Redis', availability, redisSpecifics);
});

function redisSpecifics(): void {
  let store: RedisKeyValueStore;
  let raw: Redis;
  const key = `kv-redis:${randomUUID()}`;

  beforeAll(() => {
    store = new RedisKeyValueStore({ url, keyPrefix });
    raw = new Redis(url, { maxRetriesPerRequest: 0 });
  });
  afterEach(async () => {
    await raw.del(`${keyPrefix}${key}`);
  });
  afterAll(async () => {
    await store?.close();
    await raw?.quit();
  });

  it('writes under keyPrefix, scripts included', async () => {
    await store.compareAndSet(key, null, '1');
    expect(await raw.get(`${keyPrefix}${key}`)).toBe('1');
    await store.increment(key, { by: 2, ttlMs: 60_000 });
    expect(await raw.get(`${keyPrefix}${key}`)).toBe('3');
    expect(await raw.exists(key)).toBe(0);
  });

  it('runs its scripts by digest (EVALSHA), and reloads them when Redis has forgotten them', async () => {
    const evalshaCalls = async (): Promise<number> =>
      Number(/cmdstat_evalsha:calls=(\d+)/.exec(await raw.info('commandstats'))?.[1] ?? 0);
    await store.compareAndSet(key, null, 'loaded'); // the first call may load the script
    const before = await evalshaCalls();
    expect(await store.compareAndSet(key, 'loaded', 'by-digest')).toBe(true);
    expect(await evalshaCalls()).toBeGreaterThan(before);

    await raw.script('FLUSH'); // as after a Redis restart
    expect(await store.compareAndSet(key, 'by-digest', 'reloaded')).toBe(true);
    expect(await store.increment(`${key}:n`, { ttlMs: 60_000 })).toBe(1);
    await raw.del(`${keyPrefix}${key}:n`);
  });

  it('reports the expiry Redis holds', async () => {
    await raw.set(`${keyPrefix}${key}`, 'v', 'PX', 60_000);
    expect(await store.ttl(key)).toBeGreaterThan(50_000);
  });
}
