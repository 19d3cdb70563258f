import type { SecurityCodeAlias, VaultPort } from '../vault-port';

/**
 * How long after its authorization a security code's alias waits to be forgotten, at most: the aliases of the
 * payments done meanwhile go to the vault in one call. Measured in the distributed runtime (docs/performance.md, stop
 * 38): one call per payment was a round trip to the vault's process after every answer, the vault's own work in it
 * 0.1 ms.
 */
export const DEFAULT_FORGET_AFTER_MS = 100;

/**
 * The security codes to forget once their authorizations are done (PCI DSS: sensitive authentication data is kept
 * until the authorization, not after; the vault holds it in memory only), sent to the vault together a moment later.
 * No payment waits for it: an alias the vault never hears about (this process stopped by a crash) expires on its own
 * at its TTL, as it would had the call failed.
 */
export class SecurityCodeForgetting {
  private waiting: SecurityCodeAlias[] = [];
  private soon: NodeJS.Timeout | null = null;
  private sent: Promise<void> = Promise.resolve();

  constructor(
    private readonly vault: Pick<VaultPort, 'forgetSecurityCodes'>,
    private readonly onError: (error: unknown) => void,
    private readonly forgetAfterMs = DEFAULT_FORGET_AFTER_MS,
  ) {}

  forget(merchantAccountId: string, alias: string): void {
    this.waiting.push({ merchantAccountId, alias });
    if (this.soon) return;
    this.soon = setTimeout(() => void this.flush(), this.forgetAfterMs);
    this.soon.unref();
  }

  /** Sends the aliases waiting now; resolves once every call sent so far has been answered (or failed, and was told). */
  flush(): Promise<void> {
    if (this.soon) clearTimeout(this.soon);
    this.soon = null;
    const codes = this.waiting;
    this.waiting = [];
    if (codes.length > 0) {
      const call = this.vault.forgetSecurityCodes(codes).catch(this.onError);
      this.sent = Promise.all([this.sent, call]).then(() => undefined);
    }
    return this.sent;
  }
}
