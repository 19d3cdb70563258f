import type { Redis } from 'ioredis';
import { checkRateLimitArguments, type RateLimit, type RateLimitDecision, type RateLimiter } from '../rate-limiter';
import { FailFastRedis } from './fail-fast-redis';

export interface RedisRateLimiterOptions {
  /** Default: the REDIS_URL environment variable, else `redis://127.0.0.1:6379`. */
  readonly url?: string;
  /** Prepended to every bucket's key. Default `switchyard:rate-limit:`. */
  readonly keyPrefix?: string;
  /** The longest a call waits: for a connection attempt under way, then for Redis to answer. Default 1000 ms. */
  readonly timeoutMs?: number;
}

/**
 * GCRA in one script, the same step as `gcraStep` in rate-limiter.ts, on Redis' clock (`TIME`), so every gateway
 * process sharing the Redis agrees whatever its own clock says. Microseconds throughout: integers, exact in Lua's
 * doubles. KEYS[1]: the bucket; ARGV: count, periodMs. Returns {allowed 0|1, retryAfterMs, remaining}.
 * A refused request writes nothing; an allowed one stores the new TAT with an expiry at that TAT (a bucket that is
 * full again is no bucket). Needs Redis ≥ 5 (scripts replicated by effects, so TIME before a write is allowed).
 */
export const GCRA_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local period = tonumber(ARGV[2]) * 1000
local interval = period / tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then tat = now end
local next_tat = tat + interval
local allow_at = next_tat - period
if now < allow_at then
  return {0, math.ceil((allow_at - now) / 1000), 0}
end
local remaining = math.floor((period - (next_tat - now)) / interval + 1e-9)
if remaining < 0 then remaining = 0 end
local ttl = math.ceil((next_tat - now) / 1000)
if ttl < 1 then ttl = 1 end
redis.call('SET', KEYS[1], string.format('%.0f', math.floor(next_tat + 0.5)), 'PX', ttl)
return {1, 0, remaining}
`;

interface ScriptedRedis extends Redis {
  rateLimitGcra(key: string, count: number, periodMs: number): Promise<[number, number, number]>;
}

/**
 * The RateLimiter over Redis: ONE round trip per request (EVALSHA of the GCRA script; ioredis' `defineCommand`
 * falls back to EVAL once when Redis answers NOSCRIPT, e.g. after a restart). The client settings are those of
 * `RedisKeyValueStore`: fail fast rather than queue — while Redis is unreachable every call rejects at once (at
 * most `timeoutMs` later) with a retriable `KeyValueUnavailableError`, and ioredis reconnects in the background.
 * What the gateway does then is `FallbackRateLimiter`'s business (docs/rate-limits.md).
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: FailFastRedis<ScriptedRedis>;

  constructor(options: RedisRateLimiterOptions = {}) {
    this.redis = new FailFastRedis<ScriptedRedis>({
      ...options,
      keyPrefix: options.keyPrefix ?? 'switchyard:rate-limit:',
      name: 'the Redis rate limiter',
      scripts: { rateLimitGcra: { numberOfKeys: 1, lua: GCRA_SCRIPT } },
    });
  }

  async consume(key: string, limit: RateLimit): Promise<RateLimitDecision> {
    checkRateLimitArguments(key, limit);
    const [allowed, retryAfterMs, remaining] = await this.redis.run((redis) =>
      redis.rateLimitGcra(key, limit.count, limit.periodMs),
    );
    return { allowed: allowed === 1, retryAfterMs: Number(retryAfterMs), remaining: Number(remaining) };
  }

  close(): Promise<void> {
    return this.redis.close();
  }
}
