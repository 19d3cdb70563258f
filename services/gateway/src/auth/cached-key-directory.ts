/**
 * The gateway's view of API key pairs: asked of the identity service by `kid` and kept until an `identity.events`
 * message says the key changed (or, for changes made through this gateway, at once). The time limit only bounds
 * staleness should the topic stop flowing. Unknown kids are not remembered, so a key created a moment ago (by the
 * API or the operator CLI) works on its first request.
 */
import type { KeyDirectory, KeyRecord } from '@switchyard/auth';
import { identityPatterns } from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';

export class CachedKeyDirectory implements KeyDirectory {
  private readonly entries = new Map<string, { record: KeyRecord; fetchedAt: number }>();

  constructor(
    private readonly rpc: RpcClient,
    private readonly ttlMs = 5 * 60_000,
  ) {}

  async findByKid(kid: string): Promise<KeyRecord | null> {
    const entry = this.entries.get(kid);
    if (entry && Date.now() - entry.fetchedAt < this.ttlMs) return entry.record;
    const record = await this.rpc.call<KeyRecord | null>(identityPatterns.findKeyByKid, { kid });
    if (record) this.entries.set(kid, { record, fetchedAt: Date.now() });
    else this.entries.delete(kid);
    return record;
  }

  /** Drops one key (by kid or API key pair id), or all when the event does not say which. */
  invalidate(match?: { kid?: string; id?: string }): void {
    if (!match?.kid && !match?.id) {
      this.entries.clear();
      return;
    }
    for (const [kid, entry] of this.entries) {
      if (kid === match.kid || entry.record.id === match.id) this.entries.delete(kid);
    }
  }
}
