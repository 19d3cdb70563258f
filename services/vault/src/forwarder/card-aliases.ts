/**
 * Card aliases (issue 19 item 4): short-lived opaque tokens the vault issues in place of a stored card's number and
 * security code, so that a provider request can be built outside the vault and the real values put in only by the
 * vault's outbound forwarder (`outbound-forwarder.ts`). An alias is `tok` + 32 base62 characters from the crypto
 * random source (~190 bits): alphanumeric, so it survives JSON, form-encoding and XML unescaped, and a plain token
 * scan finds it in any of them.
 *
 * Each alias is bound to one merchant account and expires after a TTL (60 s by default). They live in this process's
 * memory only — short-lived by design, nothing to recover after a restart — in ES private fields (out of
 * `util.inspect`), and nothing here logs or puts a value or an alias in an error message.
 */
import { randomBytes } from '../vault/random-pool';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const CARD_ALIAS_PREFIX = 'tok';
const ALIAS_RANDOM_LENGTH = 32;
/** Anything shaped like an alias, not inside a longer alphanumeric run. */
export const cardAliasPattern = (): RegExp =>
  new RegExp(`(?<![0-9A-Za-z])${CARD_ALIAS_PREFIX}[0-9A-Za-z]{${ALIAS_RANDOM_LENGTH}}(?![0-9A-Za-z])`, 'g');

export const DEFAULT_CARD_ALIAS_TTL_MS = 60_000;

/** Why an alias was not swapped; the forwarder refuses the call without making it. */
export type CardAliasRefusal = 'alias_unknown' | 'alias_expired' | 'alias_other_merchant_account';

export class CardAliasError extends Error {
  constructor(readonly reason: CardAliasRefusal) {
    super(
      reason === 'alias_expired'
        ? 'card alias expired'
        : reason === 'alias_other_merchant_account'
          ? 'card alias belongs to another merchant account'
          : 'card alias unknown (never issued, or expired and forgotten)',
    );
    this.name = 'CardAliasError';
  }
}

export interface IssuedCardAliases {
  /** Stands for the card number. */
  readonly number: string;
  /** Stands for the security code; null when none was given. */
  readonly securityCode: string | null;
  readonly expiresAt: Date;
}

interface Entry {
  readonly merchantAccountId: string;
  readonly value: string;
  readonly expiresAt: number;
}

/** A uniformly random base62 string from the crypto source (rejection sampling: no modulo bias). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte >= 248) continue; // 248 = 62 × 4
      out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export class CardAliases {
  readonly #entries = new Map<string, Entry>();
  /** Aliases kept past the TTL (`keep`: a security code while the buyer is at a 3-D Secure challenge). */
  readonly #kept = new Map<string, Entry>();
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(options: { ttlMs?: number; now?: () => number } = {}) {
    const ttlMs = options.ttlMs ?? DEFAULT_CARD_ALIAS_TTL_MS;
    if (!Number.isInteger(ttlMs) || ttlMs <= 0)
      throw new RangeError('card alias TTL must be a positive whole number of milliseconds');
    this.#ttlMs = ttlMs;
    this.#now = options.now ?? Date.now;
  }

  /** Aliases for a card's number and (when given) security code, bound to the merchant account, expiring after the TTL. */
  issue(
    merchantAccountId: string,
    card: { readonly number: string; readonly securityCode?: string | null },
  ): IssuedCardAliases {
    if (typeof merchantAccountId !== 'string' || merchantAccountId === '')
      throw new RangeError('merchant account id is required');
    if (typeof card.number !== 'string' || card.number === '') throw new RangeError('card number is required');
    this.#forgetExpired();
    const expiresAt = this.#now() + this.#ttlMs;
    const number = this.#add({ merchantAccountId, value: card.number, expiresAt });
    const securityCode = card.securityCode
      ? this.#add({ merchantAccountId, value: card.securityCode, expiresAt })
      : null;
    return { number, securityCode, expiresAt: new Date(expiresAt) };
  }

  /** An alias for a security code alone (given with a payment by a stored method's id), expiring after the TTL. */
  issueSecurityCode(merchantAccountId: string, securityCode: string): string {
    if (typeof merchantAccountId !== 'string' || merchantAccountId === '')
      throw new RangeError('merchant account id is required');
    if (typeof securityCode !== 'string' || securityCode === '') throw new RangeError('security code is required');
    this.#forgetExpired();
    return this.#add({ merchantAccountId, value: securityCode, expiresAt: this.#now() + this.#ttlMs });
  }

  /**
   * Keeps a live alias of this merchant account for `ttlMs` from now instead of the TTL (a security code while the
   * buyer is at a 3-D Secure challenge: PCI DSS allows it until the authorization). False when it is not live.
   */
  keep(merchantAccountId: string, alias: string, ttlMs: number): boolean {
    if (!Number.isInteger(ttlMs) || ttlMs <= 0) throw new RangeError('ttlMs must be a positive whole number');
    let value: string;
    try {
      value = this.resolve(merchantAccountId, alias);
    } catch (error) {
      if (error instanceof CardAliasError) return false;
      throw error;
    }
    this.#entries.delete(alias);
    this.#kept.set(alias, { merchantAccountId, value, expiresAt: this.#now() + ttlMs });
    return true;
  }

  /** Forgets an alias of this merchant account at once (its value is no longer needed); others are ignored. */
  forget(merchantAccountId: string, alias: string): void {
    for (const map of [this.#entries, this.#kept])
      if (map.get(alias)?.merchantAccountId === merchantAccountId) map.delete(alias);
  }

  /** The real value of an alias for this merchant account; throws a `CardAliasError` (no value, no alias in it) otherwise. */
  resolve(merchantAccountId: string, alias: string): string {
    const entry = this.#entries.get(alias) ?? this.#kept.get(alias);
    if (!entry) throw new CardAliasError('alias_unknown');
    if (entry.expiresAt <= this.#now()) {
      this.#entries.delete(alias);
      this.#kept.delete(alias);
      throw new CardAliasError('alias_expired');
    }
    if (entry.merchantAccountId !== merchantAccountId) throw new CardAliasError('alias_other_merchant_account');
    return entry.value;
  }

  /** How many aliases are held (expired ones not yet forgotten included). */
  get size(): number {
    return this.#entries.size + this.#kept.size;
  }

  #add(entry: Entry): string {
    let alias: string;
    do alias = CARD_ALIAS_PREFIX + randomBase62(ALIAS_RANDOM_LENGTH);
    while (this.#entries.has(alias) || this.#kept.has(alias));
    this.#entries.set(alias, entry);
    return alias;
  }

  /** One TTL for all: insertion order is expiry order, so the expired ones are at the front. */
  #forgetExpired(): void {
    const now = this.#now();
    for (const [alias, entry] of this.#kept) if (entry.expiresAt <= now) this.#kept.delete(alias);
    for (const [alias, entry] of this.#entries) {
      if (entry.expiresAt > now) return;
      this.#entries.delete(alias);
    }
  }

  /** Keeps aliases and values out of `util.inspect` / console.log (private fields already are). */
  toJSON(): object {
    return { size: this.size };
  }
}
