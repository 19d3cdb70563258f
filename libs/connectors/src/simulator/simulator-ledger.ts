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

/**
 * Default of `SimulatorOptions.ledgerCapacity`: how many references, and how many network tokens, the ledger keeps.
 * A forgotten authorization can no longer be captured or refunded (404): 10,000 was too few — `npm run bench` captures
 * authorizations made some 15,000 references earlier, and a demo merchant may capture days later.
 */
export const defaultLedgerCapacity = 100_000;

/** What the ledger keeps per reference: the calls counted for it and its transactions (authorizations). */
interface ReferenceEntry {
  readonly counts: LedgerCounts;
  readonly transactionIds: string[];
}

/**
 * The simulator's memory: the transactions it holds and how often each operation was called per reference. Bounded:
 * it keeps the `capacity` references seen most recently for the first time (a Map's insertion order), the oldest
 * forgotten first with its counts and its transactions; a forgotten transaction answers 404 as one never seen. The
 * network tokens are bounded the same way, by the order they were issued in.
 */
export class SimulatorLedger {
  private readonly transactions = new Map<string, SimulatedTransaction>();
  private readonly references = new Map<string, ReferenceEntry>();
  /** The token service's tokens by their provider id; add with `addNetworkToken` (bounded). */
  readonly networkTokens = new Map<string, SimulatedNetworkToken>();
  private nextId = 1;

  constructor(readonly capacity = defaultLedgerCapacity) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('ledger capacity must be a positive integer');
  }

  newId(prefix: string): string {
    return `${prefix}_${String(this.nextId++).padStart(6, '0')}`;
  }

  count(reference: string, operation: keyof LedgerCounts): void {
    this.entry(reference).counts[operation] += 1;
  }

  /** Zeroes for a reference the simulator never saw (or has forgotten). */
  counts(reference: string): Readonly<LedgerCounts> {
    return { ...(this.references.get(reference)?.counts ?? emptyCounts()) };
  }

  add(transaction: SimulatedTransaction): void {
    this.transactions.set(transaction.id, transaction);
    this.entry(transaction.reference).transactionIds.push(transaction.id);
  }

  get(id: string): SimulatedTransaction | undefined {
    return this.transactions.get(id);
  }

  /** The latest authorization for a reference: what a provider's "find by merchant reference" returns. */
  findByReference(reference: string): SimulatedTransaction | undefined {
    const ids = this.references.get(reference)?.transactionIds;
    const latest = ids?.[ids.length - 1];
    return latest === undefined ? undefined : this.transactions.get(latest);
  }

  all(): readonly SimulatedTransaction[] {
    return [...this.transactions.values()];
  }

  /** Keeps a token the token service issued, forgetting the oldest one past the capacity. */
  addNetworkToken(token: SimulatedNetworkToken): void {
    this.networkTokens.set(token.id, token);
    for (const oldest of this.networkTokens.keys()) {
      if (this.networkTokens.size <= this.capacity) break;
      this.networkTokens.delete(oldest);
    }
  }

  private entry(reference: string): ReferenceEntry {
    const known = this.references.get(reference);
    if (known !== undefined) return known;
    const created: ReferenceEntry = { counts: emptyCounts(), transactionIds: [] };
    this.references.set(reference, created);
    for (const [oldest, entry] of this.references) {
      if (this.references.size <= this.capacity) break;
      this.references.delete(oldest);
      for (const id of entry.transactionIds) this.transactions.delete(id);
    }
    return created;
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
