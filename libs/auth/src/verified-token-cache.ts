import type { VerifiedClaims, VerifiedTokenCache } from './token-verifier';

/** Process-local cache of verified tokens, bounded; entries leave when their token expires. */
export class InMemoryVerifiedTokenCache implements VerifiedTokenCache {
  private readonly entries = new Map<string, { claims: VerifiedClaims; expiresAt: number }>();

  constructor(private readonly maxEntries = 100_000) {}

  async get(tokenHash: string): Promise<VerifiedClaims | null> {
    const entry = this.entries.get(tokenHash);
    if (!entry) return null;
    if (entry.expiresAt <= Date.now()) {
      this.entries.delete(tokenHash);
      return null;
    }
    return entry.claims;
  }

  async put(tokenHash: string, claims: VerifiedClaims, ttlMs: number): Promise<void> {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(tokenHash, { claims, expiresAt: Date.now() + ttlMs });
  }
}

/** The minimal key-value surface the shared cache needs (the KeyValue port satisfies it). */
export interface CacheStore {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, options?: { ttlMs?: number }): Promise<boolean>;
}

/**
 * A local cache in front of a shared one (Redis in the distributed runtime), so a token verified by one gateway
 * instance is not verified again by the others. The shared store failing is a cache miss, not an error.
 */
export class LayeredVerifiedTokenCache implements VerifiedTokenCache {
  constructor(
    private readonly local: VerifiedTokenCache,
    private readonly shared: CacheStore,
    private readonly prefix = 'verified-jwt:',
  ) {}

  async get(tokenHash: string): Promise<VerifiedClaims | null> {
    const local = await this.local.get(tokenHash);
    if (local) return local;
    try {
      const value = await this.shared.get(this.prefix + tokenHash);
      if (!value) return null;
      const claims = JSON.parse(value) as VerifiedClaims;
      const ttlMs = claims.exp * 1000 - Date.now();
      if (ttlMs > 0) await this.local.put(tokenHash, claims, ttlMs);
      return claims;
    } catch {
      return null;
    }
  }

  async put(tokenHash: string, claims: VerifiedClaims, ttlMs: number): Promise<void> {
    await this.local.put(tokenHash, claims, ttlMs);
    try {
      await this.shared.set(this.prefix + tokenHash, JSON.stringify(claims), { ttlMs });
    } catch {
      // the shared cache is an optimisation; the local entry already serves this instance
    }
  }
}
