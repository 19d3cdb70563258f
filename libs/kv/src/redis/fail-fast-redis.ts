/**
 * One ioredis connection built to fail fast rather than queue, shared by the Redis adapters (key-value store, rate
 * limiter): while Redis is unreachable every call rejects at once (at most `timeoutMs` later) with a retriable
 * `KeyValueUnavailableError`, and ioredis keeps reconnecting in the background, so the adapter recovers by itself.
 *
 * Nothing is queued offline or re-sent after a reconnect: a call that failed never runs later behind the caller's
 * back. A call that timed out while its command was already on the wire may still have run (a retriable error does
 * not say it did not).
 */
import type * as IoRedis from 'ioredis';
import type { Redis } from 'ioredis';
import { KeyValueUnavailableError } from '../key-value-store';

/**
 * ioredis, loaded by the first Redis connection: the embedded runtime, whose rate limits and caches are in process,
 * never loads it (39 modules, about 22 MB; docs/performance.md, Start-up and memory). Node caches it after the first call.
 */
function ioredis(): typeof IoRedis {
  return require('ioredis') as typeof IoRedis;
}

export const defaultRedisUrl = (): string => process.env.REDIS_URL || 'redis://127.0.0.1:6379';

/** Redis replies that mean "not now" rather than "never": loading, busy script, failover, memory pressure. */
const TRANSIENT_REPLY = /^(?:LOADING|BUSY|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN|OOM)\b/;

/** ioredis statuses in which a connection attempt is under way. */
const CONNECTING = new Set(['connecting', 'connect']);

export interface FailFastRedisOptions {
  readonly url?: string;
  readonly keyPrefix?: string;
  readonly timeoutMs?: number;
  /** Named in the errors, e.g. `the Redis key-value store`. */
  readonly name: string;
  /** Lua scripts as ioredis commands (EVALSHA, falling back to EVAL once when the script is not cached yet). */
  readonly scripts?: Readonly<Record<string, { readonly numberOfKeys: number; readonly lua: string }>>;
}

export class FailFastRedis<Client extends Redis = Redis> {
  readonly client: Client;
  private readonly timeoutMs: number;
  private readonly name: string;
  private lastConnectionError: Error | undefined;
  private connectionAttempt: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  constructor(options: FailFastRedisOptions) {
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.name = options.name;
    const redis = new (ioredis().Redis)(options.url ?? defaultRedisUrl(), {
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
    for (const [command, script] of Object.entries(options.scripts ?? {})) redis.defineCommand(command, script);
    this.client = redis as Client;
  }

  /**
   * Runs one command, translating what ioredis throws into the port's errors; `reply` may first turn a Redis reply
   * error into the caller's own (e.g. "not an integer").
   */
  async run<T>(
    command: (client: Client) => Promise<T>,
    reply?: (message: string, error: Error) => Error | undefined,
  ): Promise<T> {
    if (this.closing) throw new KeyValueUnavailableError(`${this.name} is closed`, false);
    await this.settleConnectionAttempt();
    try {
      return await command(this.client);
    } catch (error) {
      throw this.translate(error, reply);
    }
  }

  async close(): Promise<void> {
    this.closing ??= this.quit();
    await this.closing;
  }

  private async quit(): Promise<void> {
    if (this.client.status === 'ready') {
      try {
        await this.client.quit(); // after the commands already sent
        return;
      } catch {
        // Redis went away meanwhile: nothing left to close politely.
      }
    }
    this.client.disconnect(); // also stops reconnecting
  }

  /**
   * Waits (at most timeoutMs) for a connection attempt under way, so that the first calls after start-up or
   * during a reconnection are not refused for being a few milliseconds early. Between attempts, no wait.
   */
  private settleConnectionAttempt(): Promise<void> {
    if (!CONNECTING.has(this.client.status)) return Promise.resolve();
    this.connectionAttempt ??= new Promise<void>((resolve) => {
      const settle = (): void => {
        clearTimeout(timer);
        for (const event of ['ready', 'close', 'end']) this.client.off(event, settle);
        this.connectionAttempt = undefined;
        resolve();
      };
      const timer = setTimeout(settle, this.timeoutMs);
      for (const event of ['ready', 'close', 'end']) this.client.on(event, settle);
    });
    return this.connectionAttempt;
  }

  private translate(error: unknown, reply: ((message: string, error: Error) => Error | undefined) | undefined): Error {
    if (error instanceof ioredis().ReplyError) {
      const message = (error as Error).message;
      const own = reply?.(message, error as Error);
      if (own) return own;
      if (TRANSIENT_REPLY.test(message)) {
        return new KeyValueUnavailableError(`Redis cannot serve the request now: ${message}`, true, { cause: error });
      }
      return error as Error;
    }
    // Anything else is the connection: refused, dropped, timed out, or closed by us meanwhile.
    if (this.closing) return new KeyValueUnavailableError(`${this.name} is closed`, false, { cause: error });
    const detail = error instanceof Error ? error.message : String(error);
    const connection = this.lastConnectionError ? ` (last connection error: ${this.lastConnectionError.message})` : '';
    return new KeyValueUnavailableError(`Redis is unavailable: ${detail}${connection}`, true, { cause: error });
  }
}
