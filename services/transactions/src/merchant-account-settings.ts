/**
 * A merchant account's settings as the vault's slices need them (network tokens enabled and the schemes' requestor
 * ids, the account updater switch): asked of the identity service, which owns them, over RPC — in process in the
 * embedded runtime, over TCP in the distributed one. Read at the moment of use, so a change applies at once.
 */
import { ApiError } from '@switchyard/api';
import { merchantAccountPatterns, type MerchantAccount } from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';

export interface MerchantAccountSettings {
  /** Null when the account does not exist. */
  get(merchantAccountId: string): Promise<MerchantAccount | null>;
}

export const merchantAccountsOverRpc = (rpc: RpcClient): MerchantAccountSettings => ({
  async get(merchantAccountId) {
    try {
      return await rpc.call<MerchantAccount>(merchantAccountPatterns.get, { id: merchantAccountId });
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    }
  },
});

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
