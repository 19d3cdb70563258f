import type { Redis } from 'ioredis';
import { checkIncrement, checkTtl } from '../key-value-arguments';
import { KeyValueNotAnIntegerError, type KeyValueStore, type SetOptions } from '../key-value-store';
import { FailFastRedis } from './fail-fast-redis';

export { defaultRedisUrl } from './fail-fast-redis';

export interface RedisKeyValueStoreOptions {
  /** Default: the REDIS_URL environment variable, else `redis://127.0.0.1:6379`. */
  readonly url?: string;
  /** Prepended to every key, scripts included. */
  readonly keyPrefix?: string;
  /**
   * The longest a call waits: for a connection attempt already in progress, and then for Redis to answer.
   * Default 1000 ms.
   */
  readonly timeoutMs?: number;
}

// ARGV: expectsAbsent ('1' | '0'), expected, next, ttlMs ('' = no expiry). SET without PX clears an expiry, as `set`.
const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '1' then
  if current then return 0 end
elseif current ~= ARGV[2] then
  return 0
end
if ARGV[4] == '' then
  redis.call('SET', KEYS[1], ARGV[3])
else
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
end
return 1
`;

// ARGV: by, ttlMs. The expiry is set only when this call creates the counter: a fixed window.
const INCREMENT_OPENING_WINDOW = `
local created = redis.call('EXISTS', KEYS[1]) == 0
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if created then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return value
`;

interface ScriptedRedis extends Redis {
  kvCompareAndSet(
    key: string,
    expectsAbsent: '1' | '0',
    expected: string,
    next: string,
    ttlMs: string,
  ): Promise<number>;
  kvIncrementOpeningWindow(key: string, by: number, ttlMs: number): Promise<number>;
}

const INTEGER_REPLY = /value is not an integer|would overflow/;

/**
 * The KeyValue adapter over Redis (ioredis). Built to fail fast rather than queue: while Redis is unreachable,
 * every call rejects at once (at most `timeoutMs` later) with a retriable `KeyValueUnavailableError`, and
 * ioredis keeps reconnecting in the background, so the store recovers by itself when Redis is back.
 *
 * Nothing is queued offline or re-sent after a reconnect: a call that failed never runs later behind the
 * caller's back. A call that timed out while its command was already on the wire may still have run
 * (a retriable error does not say it did not).
 */
export class RedisKeyValueStore implements KeyValueStore {
  private readonly redis: FailFastRedis<ScriptedRedis>;

  constructor(options: RedisKeyValueStoreOptions = {}) {
    this.redis = new FailFastRedis<ScriptedRedis>({
      ...options,
      name: 'the Redis key-value store',
      scripts: {
        kvCompareAndSet: { numberOfKeys: 1, lua: COMPARE_AND_SET },
        kvIncrementOpeningWindow: { numberOfKeys: 1, lua: INCREMENT_OPENING_WINDOW },
      },
    });
  }

  async get(key: string): Promise<string | null> {
    return this.redis.run((redis) => redis.get(key));
  }

  async set(key: string, value: string, options: SetOptions = {}): Promise<boolean> {
    const { ttlMs, ifAbsent = false } = options;
    checkTtl(ttlMs);
    const reply = await this.redis.run((redis) => {
      if (ttlMs !== undefined) {
        return ifAbsent ? redis.set(key, value, 'PX', ttlMs, 'NX') : redis.set(key, value, 'PX', ttlMs);
      }
      return ifAbsent ? redis.set(key, value, 'NX') : redis.set(key, value);
    });
    return reply === 'OK';
  }

  async compareAndSet(
    key: string,
    expected: string | null,
    next: string,
    options: { ttlMs?: number } = {},
  ): Promise<boolean> {
    checkTtl(options.ttlMs);
    const ttlArgument = options.ttlMs === undefined ? '' : String(options.ttlMs);
    const written = await this.redis.run((redis) =>
      redis.kvCompareAndSet(key, expected === null ? '1' : '0', expected ?? '', next, ttlArgument),
    );
    return written === 1;
  }

  async increment(key: string, options: { by?: number; ttlMs?: number } = {}): Promise<number> {
    const { by = 1, ttlMs } = options;
    checkIncrement(by);
    checkTtl(ttlMs);
    return this.redis.run(
      (redis) => (ttlMs === undefined ? redis.incrby(key, by) : redis.kvIncrementOpeningWindow(key, by, ttlMs)),
      (message, error) =>
        INTEGER_REPLY.test(message) ? new KeyValueNotAnIntegerError(key, { cause: error }) : undefined,
    );
  }

  async ttl(key: string): Promise<number | null> {
    // PTTL: -2 absent, -1 no expiry.
    const remaining = await this.redis.run((redis) => redis.pttl(key));
    return remaining < 0 ? null : remaining;
  }

  async delete(key: string): Promise<boolean> {
    return (await this.redis.run((redis) => redis.del(key))) > 0;
  }

  async ping(): Promise<void> {
    await this.redis.run((redis) => redis.ping());
  }

  close(): Promise<void> {
    return this.redis.close();
  }
}
