import { ApiError } from '@switchyard/api';
import type { Caller } from '../auth/caller';

/**
 * Merchant account endpoints name the account in their path (the header has no effect there), but a key limited to
 * some merchant accounts may act only on those: another account is 403, as the header would be. Resources of another
 * account addressed under one of the key's own accounts are simply not there (404).
 */
export function assertMayReach(caller: Caller, merchantAccountId: string): void {
  if (caller.merchantAccountIds.length > 0 && !caller.merchantAccountIds.includes(merchantAccountId)) {
    throw ApiError.forbidden(`This API key is not allowed to act on merchant account ${merchantAccountId}`);
  }
}
