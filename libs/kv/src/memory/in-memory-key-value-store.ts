import { checkIncrement, checkTtl } from '../key-value-arguments';
import {
  KeyValueNotAnIntegerError,
  KeyValueUnavailableError,
  type KeyValueStore,
  type SetOptions,
} from '../key-value-store';

export interface InMemoryKeyValueStoreOptions {
  /**
   * How often expired keys nobody reads again are removed, so they do not hold memory. Reads never see an expired
   * key whatever this is: expiry is also checked on every access. Default 1000 ms.
   */
  readonly sweepIntervalMs?: number;
}

interface Entry {
  readonly value: string;
  /** On the `now()` clock; undefined = no expiry. */
  readonly expiresAt: number | undefined;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/** What Redis accepts as an integer (`string2ll`): no sign on zero, no leading zeros, no spaces, no `+`. */
const REDIS_INTEGER = /^(?:0|-?[1-9][0-9]{0,18})$/;

/** Monotonic, so a wall-clock jump neither expires keys early nor keeps them alive. */
const now = (): number => performance.now();

/**
 * The embedded KeyValue adapter: one process, no durability, the same semantics as the Redis adapter for every
 * operation (the contract suite holds both to it). Each operation runs to completion without yielding, which is
 * what makes `compareAndSet` and `increment` atomic here.
 */
export class InMemoryKeyValueStore implements KeyValueStore {
  private readonly entries = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(options: InMemoryKeyValueStoreOptions = {}) {
    this.sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 1000);
    // A store nobody closed must not keep the process alive.
    this.sweeper.unref();
  }

  async get(key: string): Promise<string | null> {
    this.checkOpen();
    return this.live(key)?.value ?? null;
  }

  async set(key: string, value: string, options: SetOptions = {}): Promise<boolean> {
    checkTtl(options.ttlMs);
    this.checkOpen();
    if (options.ifAbsent && this.live(key) !== undefined) return false;
    this.write(key, value, options.ttlMs);
    return true;
  }

  async compareAndSet(
    key: string,
    expected: string | null,
    next: string,
    options: { ttlMs?: number } = {},
  ): Promise<boolean> {
    checkTtl(options.ttlMs);
    this.checkOpen();
    const current = this.live(key)?.value ?? null;
    if (current !== expected) return false;
    this.write(key, next, options.ttlMs);
    return true;
  }

  async increment(key: string, options: { by?: number; ttlMs?: number } = {}): Promise<number> {
    const by = options.by ?? 1;
    checkIncrement(by);
    checkTtl(options.ttlMs);
    this.checkOpen();
    const existing = this.live(key);
    const current = existing === undefined ? 0n : parseInteger(key, existing.value);
    const next = current + BigInt(by);
    if (next < INT64_MIN || next > INT64_MAX) throw new KeyValueNotAnIntegerError(key);
    // As INCRBY: an existing counter keeps its expiry (or lack of one); ttlMs only opens the window of a new one.
    const expiresAt = existing === undefined ? expiryFrom(options.ttlMs) : existing.expiresAt;
    this.entries.set(key, { value: next.toString(), expiresAt });
    return Number(next);
  }

  async ttl(key: string): Promise<number | null> {
    this.checkOpen();
    const expiresAt = this.live(key)?.expiresAt;
    return expiresAt === undefined ? null : Math.ceil(expiresAt - now());
  }

  async delete(key: string): Promise<boolean> {
    this.checkOpen();
    return this.live(key) !== undefined && this.entries.delete(key);
  }

  async ping(): Promise<void> {
    this.checkOpen();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    this.entries.clear();
  }

  /** The entry, unless it is absent or expired; an expired entry is removed on the way (lazy expiry). */
  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (isExpired(entry, now())) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  /** As SET: the write replaces the value and the expiry; no ttlMs means no expiry. */
  private write(key: string, value: string, ttlMs: number | undefined): void {
    this.entries.set(key, { value, expiresAt: expiryFrom(ttlMs) });
  }

  private sweep(): void {
    const at = now();
    for (const [key, entry] of this.entries) {
      if (isExpired(entry, at)) this.entries.delete(key);
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new KeyValueUnavailableError('the in-memory key-value store is closed', false);
  }
}

function expiryFrom(ttlMs: number | undefined): number | undefined {
  return ttlMs === undefined ? undefined : now() + ttlMs;
}

function isExpired(entry: Entry, at: number): boolean {
  return entry.expiresAt !== undefined && at >= entry.expiresAt;
}

function parseInteger(key: string, value: string): bigint {
  if (!REDIS_INTEGER.test(value)) throw new KeyValueNotAnIntegerError(key);
  const parsed = BigInt(value);
  if (parsed < INT64_MIN || parsed > INT64_MAX) throw new KeyValueNotAnIntegerError(key);
  return parsed;
}
