/**
 * The KeyValue port: small atomic operations with expiry, enough for rate limits, idempotency records and
 * caches. Adapters: in-memory (embedded) and Redis. Every adapter passes `contract/key-value.contract.ts`.
 * Values are strings; callers serialise. Expiry is in milliseconds: a positive integer, else the call rejects with a
 * RangeError before touching the store. An unreachable store rejects with `KeyValueUnavailableError`.
 */

export interface SetOptions {
  /** Expire the key this long after the write. Absent: no expiry (an existing expiry is cleared). */
  readonly ttlMs?: number;
  /** Write only when the key is absent (SET NX). */
  readonly ifAbsent?: boolean;
}

export interface KeyValueStore {
  get(key: string): Promise<string | null>;
  /** Returns false when `ifAbsent` was set and the key existed (nothing written), true otherwise. */
  set(key: string, value: string, options?: SetOptions): Promise<boolean>;
  /**
   * Writes `next` only when the current value equals `expected` (`null` = the key is absent).
   * Returns whether it wrote. A write sets the expiry as `set` does (no `ttlMs`: an existing expiry is cleared).
   */
  compareAndSet(key: string, expected: string | null, next: string, options?: { ttlMs?: number }): Promise<boolean>;
  /**
   * Adds `by` (default 1) to an integer counter, creating it at 0 first. `ttlMs` sets the expiry only when the
   * counter is created by this call (a fixed window); an existing counter keeps its expiry, or lack of one.
   * Returns the new value. Rejects with `KeyValueNotAnIntegerError` when the value is not a 64-bit integer.
   */
  increment(key: string, options?: { by?: number; ttlMs?: number }): Promise<number>;
  /** Remaining time to live in ms; null when the key has no expiry or does not exist. */
  ttl(key: string): Promise<number | null>;
  /** Returns whether a key was deleted. */
  delete(key: string): Promise<boolean>;
  /** Resolves when the store is reachable; used by readiness checks. */
  ping(): Promise<void>;
  /** Idempotent. Afterwards every call rejects with a non-retriable `KeyValueUnavailableError`. */
  close(): Promise<void>;
}

export class KeyValueUnavailableError extends Error {
  readonly type = 'key_value_unavailable' as const;
  constructor(
    message: string,
    readonly retriable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'KeyValueUnavailableError';
  }
}

/**
 * `increment` met a value that is not a 64-bit signed integer, or the result would leave that range (Redis:
 * `ERR value is not an integer or out of range`, `ERR increment or decrement would overflow`). The value is left
 * as it was. Not retriable: the same call fails the same way.
 */
export class KeyValueNotAnIntegerError extends Error {
  readonly type = 'key_value_not_an_integer' as const;
  readonly retriable = false;
  constructor(
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(`the value at key "${key}" is not an integer or the increment would overflow`, options);
    this.name = 'KeyValueNotAnIntegerError';
  }
}
