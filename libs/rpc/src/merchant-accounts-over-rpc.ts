/**
 * A merchant account's settings as the vault's and the transactions service's slices need them (network tokens
 * enabled and the schemes' requestor ids, the account updater switch, whether the account exists): asked of the
 * identity service, which owns them, over RPC — in process in the embedded runtime, over TCP in the distributed one.
 * Read at the moment of use, so a change applies at once.
 */
import { ApiError } from '@switchyard/api';
import { merchantAccountPatterns, type MerchantAccount } from '@switchyard/contracts';
import type { RpcClient } from './rpc';

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
