/**
 * The vault as the transactions service asks it (its `VaultPort`), answered by the vault's slices in the same
 * process. Every answer is a Promise, as it will be once the vault answers over RPC from a process of its own.
 *
 * A card comes back as a summary: what a payment decides on (BIN up to 8 digits and what the BIN data says of it,
 * last four, expiry), worked out here from the number so that the number itself leaves the vault only through
 * `revealCard` and a claimed checkout session's card, for the card-bearing calls that still need it.
 */
import type { BinData, CardBinInfo } from '@switchyard/bin-data';
import type { StoredCard } from './vault/card-vault';
import type { PazeConnection } from './digital-wallets/paze-payments';
import type { VaultSlices } from './vault-slices';

/** A stored card's summary with what the BIN data says of it. */
export interface VaultCardSummary extends StoredCard {
  /** First 8 digits (fewer for a shorter number). */
  readonly binPrefix: string;
  readonly binInfo: CardBinInfo;
}

const BIN_PREFIX_DIGITS = 8;

export class InProcessVault {
  constructor(
    private readonly slices: VaultSlices,
    private readonly binData: BinData,
  ) {}

  async storeCard(
    merchantAccountId: string,
    card: { readonly number: string; readonly expirationDate: string },
    options: { readonly buyerId: string | null },
  ): Promise<VaultCardSummary> {
    const stored = this.slices.vault.store(merchantAccountId, card, { buyerId: options.buyerId });
    return this.summary(stored, card.number);
  }

  async findCard(merchantAccountId: string, id: string): Promise<VaultCardSummary | null> {
    const stored = this.slices.vault.find(merchantAccountId, id);
    const card = stored && this.slices.vault.reveal(merchantAccountId, id);
    return stored && card ? this.summary(stored, card.number) : null;
  }

  async revealCard(
    merchantAccountId: string,
    id: string,
  ): Promise<{ readonly number: string; readonly expirationDate: string } | null> {
    return this.slices.vault.reveal(merchantAccountId, id);
  }

  async removeCard(merchantAccountId: string, id: string): Promise<void> {
    this.slices.vault.remove(merchantAccountId, id);
  }

  async usablePaymentMethod(merchantAccountId: string, id: string): Promise<{ readonly buyerId: string | null }> {
    return { buyerId: this.slices.paymentMethods.usable(merchantAccountId, id).buyerId };
  }

  async recordStoreRequested(
    merchantAccountId: string,
    request: {
      readonly card: VaultCardSummary;
      readonly transactionId: string;
      readonly paymentServiceId: string;
      readonly buyerId: string | null;
      readonly externalIdentifier: string | null;
    },
  ): Promise<void> {
    await this.slices.paymentMethods.recordStoreRequested(merchantAccountId, { ...request, bin: request.card.binInfo });
  }

  receiveVaultToken(transactionId: string, paymentServiceId: string): Promise<void> {
    return this.slices.paymentMethods.receiveVaultToken(transactionId, paymentServiceId);
  }

  networkTokenForTransaction(
    merchantAccountId: string,
    paymentMethodId: string,
    options: { readonly merchantInitiated: boolean },
  ) {
    return this.slices.networkTokens.tokenForTransaction(merchantAccountId, paymentMethodId, options);
  }

  async resolveBuyer(
    merchantAccountId: string,
    ref: { readonly buyer_id?: string | null; readonly buyer_external_identifier?: string | null },
    pointer: string,
  ): Promise<{ readonly id: string } | null> {
    const buyer = this.slices.buyerDirectory.resolve(merchantAccountId, ref, pointer);
    return buyer ? { id: buyer.id } : null;
  }

  async buyerWire(merchantAccountId: string, buyerId: string): Promise<Record<string, unknown> | null> {
    return this.slices.buyerDirectory.wire(merchantAccountId, buyerId);
  }

  async claimCheckoutSession(
    merchantAccountId: string,
    sessionId: string,
    transactionId: string,
    options: { readonly vetStoredMethod: (paymentMethodId: string) => Promise<void> },
  ) {
    const { cardId, storedPaymentMethod, card } = await this.slices.checkoutSessions.claim(
      merchantAccountId,
      sessionId,
      transactionId,
      options,
    );
    return { cardId, storedPaymentMethod, card };
  }

  openPaze(
    merchantAccountId: string,
    payload: string,
    input: { readonly currency: string; readonly connections: readonly PazeConnection[] },
  ) {
    return this.slices.paze.open(merchantAccountId, payload, input);
  }

  private summary(stored: StoredCard, number: string): VaultCardSummary {
    const binInfo = this.binData.lookup(number);
    return {
      ...stored,
      cardType: binInfo.cardType ?? stored.cardType,
      binPrefix: number.slice(0, BIN_PREFIX_DIGITS),
      binInfo,
    };
  }
}
