/**
 * The transaction events whose shape changed, and how their older versions are read (issue 22, item 14): pure
 * functions from one schema version's data to the next, registered in the service's registry (`event-schema.ts`).
 */
import type { TransactionCreatedData, VaultCardUse } from './transaction';
import type { TransactionDetails } from './transaction-wire';

type TransactionCreatedV1 = Omit<TransactionCreatedData, 'vaultCard'>;

/**
 * The vault card a transaction's details name, and what it is kept for: how version 2 is written, and how version 1
 * (which had it only in its opaque details) is read.
 */
export function vaultCardUseOf(details: TransactionDetails | undefined): VaultCardUse | null {
  const id = details?.paymentMethod?.id;
  if (!id) return null;
  switch (details.instrumentType) {
    case 'pan':
      return { id, use: details.checkoutSessionId ? 'checkout_session' : details.store ? 'stored' : 'one_off' };
    case 'card_token':
    case 'network_token':
      return { id, use: 'stored' };
    default:
      return null;
  }
}

/**
 * `TransactionCreated` 1 → 2: the vault card and its use become a field of their own (`vaultCard`), read by the
 * one-off card shredder, instead of a reading of the opaque `details` (whose `store` and `instrumentType` said it).
 */
export function transactionCreatedV1toV2(data: unknown): TransactionCreatedData {
  const v1 = data as TransactionCreatedV1;
  return { ...v1, vaultCard: vaultCardUseOf(v1.details as TransactionDetails | undefined) };
}
