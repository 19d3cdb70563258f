/**
 * Security codes of transactions paused for a challenge, kept in memory only until the authorization (PCI DSS allows
 * sensitive authentication data until authorization completes; it is never written anywhere). A restart loses them:
 * the authorization then goes without, as any card-on-file charge does.
 */
export class SecurityCodeShelf {
  private readonly codes = new Map<string, { readonly code: string; readonly until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => Date,
  ) {}

  keep(id: string, code: string): void {
    const now = this.now().getTime();
    for (const [key, entry] of this.codes) if (entry.until < now) this.codes.delete(key);
    this.codes.set(id, { code, until: now + this.ttlMs });
  }

  take(id: string): string | undefined {
    const entry = this.codes.get(id);
    this.codes.delete(id);
    return entry && entry.until >= this.now().getTime() ? entry.code : undefined;
  }
}
