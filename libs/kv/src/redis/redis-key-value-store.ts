import { Redis, ReplyError } from 'ioredis';
import { checkIncrement, checkTtl } from '../key-value-arguments';
import {
  KeyValueNotAnIntegerError,
  KeyValueUnavailableError,
  type KeyValueStore,
  type SetOptions,
} from '../key-value-store';

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

export const defaultRedisUrl = (): string => process.env.REDIS_URL || 'redis://127.0.0.1:6379';

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
  kvCompareAndSet(key: string, expectsAbsent: '1' | '0', expected: string, next: string, ttlMs: string): Promise<number>;
  kvIncrementOpeningWindow(key: string, by: number, ttlMs: number): Promise<number>;
}

/** Redis replies that mean "not now" rather than "never": loading, busy script, failover, memory pressure. */
const TRANSIENT_REPLY = /^(?:LOADING|BUSY|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN|OOM)\b/;
const INTEGER_REPLY = /value is not an integer|would overflow/;

/** ioredis statuses in which a connection attempt is under way. */
const CONNECTING = new Set(['connecting', 'connect']);

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
  private readonly redis: ScriptedRedis;
  private readonly timeoutMs: number;
  private lastConnectionError: Error | undefined;
  private connectionAttempt: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  constructor(options: RedisKeyValueStoreOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 1000;
    const redis = new Redis(options.url ?? defaultRedisUrl(), {
      keyPrefix: options.keyPrefix ?? '',
      connectTimeout: this.timeoutMs,
      commandTimeout: this.timeoutMs,
      // Fail fast while disconnected instead of holding calls until Redis returns.
      enableOfflineQueue: false,
      // Reject commands in flight when the connection drops, rather than re-sending them on the next one.
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
    });
    // Without a listener ioredis prints every failed reconnection; the error is reported by the calls instead.
    redis.on('error', (error: Error) => {
      this.lastConnectionError = error;
    });
    redis.on('ready', () => {
      this.lastConnectionError = undefined;
    });
    // defineCommand sends EVALSHA and falls back to EVAL once when the script is not cached yet.
    redis.defineCommand('kvCompareAndSet', { numberOfKeys: 1, lua: COMPARE_AND_SET });
    redis.defineCommand('kvIncrementOpeningWindow', { numberOfKeys: 1, lua: INCREMENT_OPENING_WINDOW });
    this.redis = redis as ScriptedRedis;
  }

  async get(key: string): Promise<string | null> {
    return this.run(() => this.redis.get(key));
  }

  async set(key: string, value: string, options: SetOptions = {}): Promise<boolean> {
    const { ttlMs, ifAbsent = false } = options;
    checkTtl(ttlMs);
    const reply = await this.run(() => {
      if (ttlMs !== undefined) {
        return ifAbsent ? this.redis.set(key, value, 'PX', ttlMs, 'NX') : this.redis.set(key, value, 'PX', ttlMs);
      }
      return ifAbsent ? this.redis.set(key, value, 'NX') : this.redis.set(key, value);
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
    const written = await this.run(() =>
      this.redis.kvCompareAndSet(key, expected === null ? '1' : '0', expected ?? '', next, ttlArgument),
    );
    return written === 1;
  }

  async increment(key: string, options: { by?: number; ttlMs?: number } = {}): Promise<number> {
    const { by = 1, ttlMs } = options;
    checkIncrement(by);
    checkTtl(ttlMs);
    return this.run(
      () => (ttlMs === undefined ? this.redis.incrby(key, by) : this.redis.kvIncrementOpeningWindow(key, by, ttlMs)),
      key,
    );
  }

  async ttl(key: string): Promise<number | null> {
    // PTTL: -2 absent, -1 no expiry.
    const remaining = await this.run(() => this.redis.pttl(key));
    return remaining < 0 ? null : remaining;
  }

  async delete(key: string): Promise<boolean> {
    return (await this.run(() => this.redis.del(key))) > 0;
  }

  async ping(): Promise<void> {
    await this.run(() => this.redis.ping());
  }

  async close(): Promise<void> {
    this.closing ??= this.quit();
    await this.closing;
  }

  private async quit(): Promise<void> {
    if (this.redis.status === 'ready') {
      try {
        await this.redis.quit(); // after the commands already sent
        return;
      } catch {
        // Redis went away meanwhile: nothing left to close politely.
      }
    }
    this.redis.disconnect(); // also stops reconnecting
  }

  /** Runs one command, translating what ioredis throws into the port's errors. */
  private async run<T>(command: () => Promise<T>, integerKey?: string): Promise<T> {
    if (this.closing) throw new KeyValueUnavailableError('the Redis key-value store is closed', false);
    await this.settleConnectionAttempt();
    try {
      return await command();
    } catch (error) {
      throw this.translate(error, integerKey);
    }
  }

  /**
   * Waits (at most timeoutMs) for a connection attempt under way, so that the first calls after start-up or
   * during a reconnection are not refused for being a few milliseconds early. Between attempts, no wait.
   */
  private settleConnectionAttempt(): Promise<void> {
    if (!CONNECTING.has(this.redis.status)) return Promise.resolve();
    this.connectionAttempt ??= new Promise<void>((resolve) => {
      const settle = (): void => {
        clearTimeout(timer);
        for (const event of ['ready', 'close', 'end']) this.redis.off(event, settle);
        this.connectionAttempt = undefined;
        resolve();
      };
      const timer = setTimeout(settle, this.timeoutMs);
      for (const event of ['ready', 'close', 'end']) this.redis.on(event, settle);
    });
    return this.connectionAttempt;
  }

  private translate(error: unknown, integerKey: string | undefined): Error {
    if (error instanceof ReplyError) {
      const reply = (error as Error).message;
      if (integerKey !== undefined && INTEGER_REPLY.test(reply)) {
        return new KeyValueNotAnIntegerError(integerKey, { cause: error });
      }
      if (TRANSIENT_REPLY.test(reply)) {
        return new KeyValueUnavailableError(`Redis cannot serve the request now: ${reply}`, true, { cause: error });
      }
      return error as Error;
    }
    // Anything else is the connection: refused, dropped, timed out, or closed by us meanwhile.
    if (this.closing) return new KeyValueUnavailableError('the Redis key-value store is closed', false, { cause: error });
    const detail = error instanceof Error ? error.message : String(error);
    const connection = this.lastConnectionError ? ` (last connection error: ${this.lastConnectionError.message})` : '';
    return new KeyValueUnavailableError(`Redis is unavailable: ${detail}${connection}`, true, { cause: error });
  }
}
