import type { MerchantAccountSettings } from '@switchyard/rpc';

export { merchantAccountsOverRpc, type MerchantAccountSettings } from '@switchyard/rpc';

/**
 * Whether a merchant account exists, for the transaction hot path (issue 22, item 12): asked of identity, which owns
 * the accounts, and remembered once it does. Accounts are never deleted, so a remembered one never goes stale; an
 * account not found is asked again each time (it may be created in a moment). Cost: one RPC per account and process.
 */
export class KnownMerchantAccounts {
  private readonly known = new Set<string>();

  constructor(
    private readonly settings: MerchantAccountSettings,
    /** The most ids remembered; past it the memory starts over (each is then asked once more). */
    private readonly limit = 100_000,
  ) {}

  async exists(merchantAccountId: string): Promise<boolean> {
    if (this.known.has(merchantAccountId)) return true;
    if ((await this.settings.get(merchantAccountId)) === null) return false;
    if (this.known.size >= this.limit) this.known.clear();
    this.known.add(merchantAccountId);
    return true;
  }
}
