/**
 * Everything the transactions service asks of the vault (services/vault), in one port whose every answer is a
 * Promise: today the vault runs in the same process (`InProcessVault` in @switchyard/vault), tomorrow behind RPC,
 * and nothing here changes when it moves.
 *
 * What a payment decides on (scheme, BIN up to 8 digits, last four, expiry, card type, issuer) comes back as a card
 * summary. A full card number comes back only where a card-bearing call is built (`revealCard`, a checkout
 * session's card): the provider's authorization and the 3-D Secure directory's. docs/architecture.md (The vault)
 * lists those places: they are what is left for the card aliases and the outbound forwarder.
 */
import type { CardBinInfo } from '@switchyard/bin-data';
import type { PaymentServiceConnection } from './payment-services/payment-services.slice';

/** A card in the vault as this service may see it: its id and summary, never its number. */
export interface CardSummary {
  readonly id: string;
  readonly merchantAccountId: string;
  readonly scheme: string | null;
  readonly cardType: string | null;
  /** First 6 digits (what the record shows). */
  readonly bin: string;
  /** First 8 digits (fewer for a shorter number): what flow rules match a card number's prefix against. */
  readonly binPrefix: string;
  /** What the BIN data says of the card (scheme, card type, issuer country and name). */
  readonly binInfo: CardBinInfo;
  readonly last4: string;
  /** MM/YY */
  readonly expirationDate: string;
  readonly fingerprint: string;
  readonly createdAt: string;
}

/** A card's number and expiry: for a card-bearing call only (never log, persist or emit it). */
export interface RevealedCard {
  readonly number: string;
  readonly expirationDate: string;
}

export interface TransactionNetworkToken {
  readonly token: string;
  readonly expirationDate: string;
  readonly cryptogram: string;
  readonly eci: string;
}

/** A checkout session's card, claimed once; `storedPaymentMethod`: `cardId` is a stored method. */
export interface ClaimedSessionCard {
  readonly cardId: string;
  readonly storedPaymentMethod: boolean;
  readonly card: RevealedCard & { readonly securityCode?: string };
}

/** The token and cryptogram of a Paze payload, and the connections that may take it. */
export interface OpenedPaze {
  readonly credential: {
    readonly token: string;
    readonly expirationDate: string;
    readonly cryptogram: string;
    readonly eci: string | null;
    readonly scheme: string;
  };
  readonly connectionIds: readonly string[];
}

export interface VaultPort {
  // ---- cards ----
  /** Stores a card given with a payment (under its buyer's data key when `buyerId`); its summary comes back. */
  storeCard(
    merchantAccountId: string,
    card: RevealedCard,
    options: { readonly buyerId: string | null },
  ): Promise<CardSummary>;
  findCard(merchantAccountId: string, id: string): Promise<CardSummary | null>;
  /** The number and expiry, for a card-bearing call only; null when the card is gone. */
  revealCard(merchantAccountId: string, id: string): Promise<RevealedCard | null>;
  /** Shreds a card given for one payment (its row and its own data key). */
  removeCard(merchantAccountId: string, id: string): Promise<void>;

  // ---- stored payment methods ----
  /** The method if it may pay (`succeeded`), with the buyer it was stored for; rejects with a 400 otherwise. */
  usablePaymentMethod(merchantAccountId: string, id: string): Promise<{ readonly buyerId: string | null }>;
  /** `store: true`: the card of this payment becomes a method, `processing` until the provider's vault token. */
  recordStoreRequested(
    merchantAccountId: string,
    request: {
      readonly card: CardSummary;
      readonly transactionId: string;
      readonly paymentServiceId: string;
      readonly buyerId: string | null;
      readonly externalIdentifier: string | null;
    },
  ): Promise<void>;
  /** The provider's vault-token notification for a purchase: its method becomes usable. */
  receiveVaultToken(transactionId: string, paymentServiceId: string): Promise<void>;
  /** The stored method's active network token with a fresh cryptogram; null when it has none. */
  networkTokenForTransaction(
    merchantAccountId: string,
    paymentMethodId: string,
    options: { readonly merchantInitiated: boolean },
  ): Promise<TransactionNetworkToken | null>;

  // ---- buyers ----
  /** Null when neither is given; rejects with a 400 at `pointer` when the given buyer does not exist. */
  resolveBuyer(
    merchantAccountId: string,
    ref: { readonly buyer_id?: string | null; readonly buyer_external_identifier?: string | null },
    pointer: string,
  ): Promise<{ readonly id: string } | null>;
  /** The buyer as the `buyer` field shows it; null once deleted. */
  buyerWire(merchantAccountId: string, buyerId: string): Promise<Record<string, unknown> | null>;

  // ---- checkout sessions, Paze ----
  /**
   * A checkout session's card, used up by this transaction. `vetStoredMethod` is this service's check of a stored
   * method the session holds (whose it is), run before the session is used.
   */
  claimCheckoutSession(
    merchantAccountId: string,
    sessionId: string,
    transactionId: string,
    options: { readonly vetStoredMethod: (paymentMethodId: string) => Promise<void> },
  ): Promise<ClaimedSessionCard>;
  /** Opens a Paze payload with the merchant's key; rejects with a 400 naming the refusal. */
  openPaze(
    merchantAccountId: string,
    payload: string,
    input: { readonly currency: string; readonly connections: readonly PaymentServiceConnection[] },
  ): Promise<OpenedPaze>;
}
