import type { AvsResponseCode, CvvResponseCode, ProviderTransactionStatus } from '../connector';
import type { WireCapture, WireRefund, WireTransaction } from './simulator-wire';

/** How many times each operation reached the simulator for one reference (our transaction id). */
export interface LedgerCounts {
  authorizations: number;
  captures: number;
  voids: number;
  cancels: number;
  refunds: number;
  increments: number;
  syncs: number;
}

export interface SimulatedTransaction {
  readonly id: string;
  readonly reference: string;
  readonly amount: number;
  readonly currency: string;
  readonly notificationUrl: string | undefined;
  status: ProviderTransactionStatus;
  authorizedAmount: number;
  capturedAmount: number;
  refundedAmount: number;
  errorCode: string | null;
  rawResponseCode: string | null;
  rawResponseDescription: string | null;
  avsResponseCode: AvsResponseCode | null;
  cvvResponseCode: CvvResponseCode | null;
  /** Redirect payments only: where the buyer decides, and how the approval is settled once they have. */
  readonly buyerApproval?: BuyerApproval;
  readonly captures: WireCapture[];
  readonly refunds: WireRefund[];
  /** Last notification sequence number handed out for this transaction. */
  sequence: number;
}

export interface BuyerApproval {
  /** The approval page (`approval_url`). */
  readonly url: string;
  /** Where the buyer's browser goes back to after deciding. */
  readonly returnUrl: string;
  readonly method: string;
  /** Whether an approval captures at once (else it authorizes). */
  readonly capture: boolean;
}

/**
 * A network token the simulator's token service issued (`simulator-network-tokens.ts`). The simulator is the
 * provider here, so it keeps the card the token stands for, in memory only.
 */
export interface SimulatedNetworkToken {
  readonly id: string;
  /** The requester's reference (its network token id): a repeated provision answers this token. */
  readonly reference: string;
  readonly token: string;
  /** MM/YY */
  readonly expirationDate: string;
  readonly paymentAccountReference: string;
  readonly scheme: string;
  /** The requester's token requestor id and app id with the network, as sent (null: none). */
  readonly requestorId: string | null;
  readonly appId: string | null;
  readonly card: { readonly number: string; readonly expirationDate: string };
  status: 'active' | 'suspended' | 'deleted';
  /** Every cryptogram issued for the token: an authorization naming another one is refused. */
  readonly cryptograms: Set<string>;
  /** References of the authorizations made with the token, in order. */
  readonly authorizations: string[];
}

const emptyCounts = (): LedgerCounts => ({
  authorizations: 0,
  captures: 0,
  voids: 0,
  cancels: 0,
  refunds: 0,
  increments: 0,
  syncs: 0,
});

/** The simulator's memory: every transaction it holds and how often each operation was called per reference. */
export class SimulatorLedger {
  private readonly transactions = new Map<string, SimulatedTransaction>();
  private readonly countsByReference = new Map<string, LedgerCounts>();
  /** The token service's tokens by their provider id. */
  readonly networkTokens = new Map<string, SimulatedNetworkToken>();
  private nextId = 1;

  newId(prefix: string): string {
    return `${prefix}_${String(this.nextId++).padStart(6, '0')}`;
  }

  count(reference: string, operation: keyof LedgerCounts): void {
    const counts = this.countsByReference.get(reference) ?? emptyCounts();
    counts[operation] += 1;
    this.countsByReference.set(reference, counts);
  }

  /** Zeroes for a reference the simulator never saw. */
  counts(reference: string): Readonly<LedgerCounts> {
    return { ...(this.countsByReference.get(reference) ?? emptyCounts()) };
  }

  add(transaction: SimulatedTransaction): void {
    this.transactions.set(transaction.id, transaction);
  }

  get(id: string): SimulatedTransaction | undefined {
    return this.transactions.get(id);
  }

  /** The latest authorization for a reference: what a provider's "find by merchant reference" returns. */
  findByReference(reference: string): SimulatedTransaction | undefined {
    let found: SimulatedTransaction | undefined;
    for (const transaction of this.transactions.values()) if (transaction.reference === reference) found = transaction;
    return found;
  }

  all(): readonly SimulatedTransaction[] {
    return [...this.transactions.values()];
  }
}

export function toWireTransaction(t: SimulatedTransaction): WireTransaction {
  return {
    id: t.id,
    reference: t.reference,
    status: t.status,
    amount: t.amount,
    currency: t.currency,
    authorized_amount: t.authorizedAmount,
    captured_amount: t.capturedAmount,
    refunded_amount: t.refundedAmount,
    error_code: t.errorCode,
    raw_response_code: t.rawResponseCode,
    raw_response_description: t.rawResponseDescription,
    avs_response_code: t.avsResponseCode,
    cvv_response_code: t.cvvResponseCode,
    approval_url: t.buyerApproval?.url ?? null,
    captures: t.captures.map((c) => ({ ...c })),
    refunds: t.refunds.map((r) => ({ ...r })),
  };
}
