/**
 * Everything the transactions service asks of the vault (services/vault), in one port whose every answer is a
 * Promise: today the vault runs in the same process (`InProcessVault` in @switchyard/vault), tomorrow behind RPC,
 * and nothing here changes when it moves.
 *
 * What a payment decides on (scheme, BIN up to 8 digits, last four, expiry, card type, issuer) comes back as a card
 * summary. A card number or security code never comes back: a card-bearing call (the provider's authorization, the
 * 3-D Secure directory's lookup) is built with the aliases `cardAliases` issues for a card id, and sent through the
 * vault's outbound forwarder, which alone swaps them back (docs/architecture.md, The vault). A security code stays in
 * the vault's memory too, this service holding only its alias. Every argument and answer is JSON-safe, so that the
 * port can cross RPC.
 */
import type { VaultCardAliases, VaultCardSummary } from '@switchyard/contracts';
import type { PaymentServiceConnection } from './payment-services/payment-services.slice';

/** A card in the vault as this service may see it: its id and summary, never its number. */
export type CardSummary = VaultCardSummary;

/** A card as given with a payment (by number): what `storeCard` takes, the only way a number goes to the vault. */
export interface GivenCard {
  readonly number: string;
  readonly expirationDate: string;
  readonly securityCode?: string | null;
}

/** A card just stored, and the alias of the security code given with it (held in the vault's memory only). */
export interface StoredCardSummary extends CardSummary {
  readonly securityCodeAlias: string | null;
}

/** What a card-bearing request is built with: short-lived aliases, swapped back only by the vault's forwarder. */
export type CardAliasSet = VaultCardAliases;

export interface TransactionNetworkToken {
  readonly token: string;
  readonly expirationDate: string;
  readonly cryptogram: string;
  readonly eci: string;
}

/** A checkout session's card, claimed once, by id; `storedPaymentMethod`: `cardId` is a stored method. */
export interface ClaimedSessionCard {
  readonly cardId: string;
  readonly storedPaymentMethod: boolean;
  /** The alias of the security code typed in the browser; null when none was. */
  readonly securityCodeAlias: string | null;
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

/** A security code's alias, with the merchant account it is bound to. */
export interface SecurityCodeAlias {
  readonly merchantAccountId: string;
  readonly alias: string;
}

export interface VaultPort {
  // ---- cards ----
  /**
   * Stores a card given with a payment (under its buyer's data key when `buyerId`); its summary comes back, with an
   * alias of its security code.
   */
  storeCard(
    merchantAccountId: string,
    card: GivenCard,
    options: { readonly buyerId: string | null },
  ): Promise<StoredCardSummary>;
  findCard(merchantAccountId: string, id: string): Promise<CardSummary | null>;
  /**
   * The card the gateway handed to the vault for this payment (`TransactionCreateRequest.card_hand_over`), taken by
   * it: the vault no longer removes it as unclaimed. Alone, whether the vault still has the card (the hand-over gave
   * its summary and first aliases; a vault of an earlier release answers the summary, or null). With `aliases` (a
   * hand-over that gave only the card's id), the card's summary and first aliases (as `cardAliases` gives them), null
   * when it is gone: one call less before a provider call.
   */
  takeHandedOverCard(merchantAccountId: string, cardId: string): Promise<boolean | CardSummary | null>;
  takeHandedOverCard(
    merchantAccountId: string,
    cardId: string,
    options: { readonly aliases: { readonly securityCode: string | null } },
  ): Promise<(CardSummary & { readonly aliases?: CardAliasSet | null }) | null>;
  /**
   * Fresh aliases of a card's number and (`securityCode`: the live alias of one, as `storeCard`, `aliasSecurityCode`
   * or a claimed session gave it) security code, bound to the merchant account; null when the card is gone.
   */
  cardAliases(
    merchantAccountId: string,
    cardId: string,
    options: { readonly securityCode?: string | null },
  ): Promise<CardAliasSet | null>;
  /** An alias of a security code given with a payment by a stored method's id, held in the vault's memory only. */
  aliasSecurityCode(merchantAccountId: string, securityCode: string): Promise<string>;
  /** Keeps a security code's alias live for `ttlMs` (while the buyer is at a challenge); false when it was not live. */
  keepSecurityCode(merchantAccountId: string, alias: string, ttlMs: number): Promise<boolean>;
  /**
   * Forgets security codes' aliases (and the codes) once the authorizations they were given for are done: those of a
   * moment's payments in one call (`SecurityCodeForgetting`).
   */
  forgetSecurityCodes(codes: readonly SecurityCodeAlias[]): Promise<void>;
  /** Shreds cards given for one payment each (their rows and their own data keys), in one commit. */
  removeCards(cards: readonly { readonly merchantAccountId: string; readonly id: string }[]): Promise<void>;

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
   * A checkout session's card, used up by this transaction. A session holding a stored method this service has not
   * vetted yet (whose it is) is not used: `{ vetStoredMethod }` names it, and the claim is asked again with
   * `vettedStoredMethod` once this service's check passed (a session changed meanwhile is named again).
   */
  claimCheckoutSession(
    merchantAccountId: string,
    sessionId: string,
    transactionId: string,
    options: { readonly vettedStoredMethod: string | null },
  ): Promise<ClaimedSessionCard | { readonly vetStoredMethod: string }>;
  /** Opens a Paze payload with the merchant's key; rejects with a 400 naming the refusal. */
  openPaze(
    merchantAccountId: string,
    payload: string,
    input: { readonly currency: string; readonly connections: readonly PaymentServiceConnection[] },
  ): Promise<OpenedPaze>;
}
