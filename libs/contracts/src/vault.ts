/**
 * The vault service (issue 19): its store's streams, its topic and its readiness pattern. Its slices' RPC patterns
 * are `vault.` too (buyers, payment methods, checkout sessions, network tokens, digital wallets, account updater:
 * their contracts' files); the transactions process serves them until the vault has a process of its own.
 */
import type { CardBinInfo } from '@switchyard/bin-data';

/**
 * The streams of the vault's store: buyers (and their external identifier claims), stored payment methods, network
 * tokens, account updater jobs and claims, digital wallets (and their provider claims), checkout sessions. Until the
 * vault had a store of its own they were in the transactions store, which now reads its store without them.
 */
export const VAULT_STREAM_PREFIXES: readonly string[] = [
  'buyer-',
  'payment-method-',
  'network-token-',
  'account-updater-job-',
  'account-updater-claim-',
  'digital-wallet-',
  'checkout-session-',
];

/** The vault's own events (no public names), relayed from its store. */
export const vaultTopic = 'vault.events';

export const vaultPatterns = {
  /** The vault service's readiness. */
  ping: 'vault.ping',
  /** The gateway hands the card data of a `POST /transactions` to the vault (`CardHandOverRequest`). */
  handOverCard: 'vault.cards.hand-over',
} as const;

/**
 * The card data of a `POST /transactions`, handed to the vault by the gateway (after validation) before the
 * transactions service sees the request (issue 19 item 4): a card given by number is stored (under its buyer's data
 * key when the request names an existing buyer), and a security code (the card's, or a stored method's) is held in
 * the vault's memory only. The transactions service then gets the request without them, and `CardHandOver`.
 */
export interface CardHandOverRequest {
  readonly merchant_account_id: string;
  /** A card given by number (`payment_method.method` `card`). */
  readonly card?: { readonly number: string; readonly expiration_date: string; readonly security_code?: string };
  /** A stored method's security code (`payment_method.method` `id`). */
  readonly security_code?: string;
  /** The request's buyer (top-level `buyer_id` / `buyer_external_identifier`); one that does not exist is ignored. */
  readonly buyer?: { readonly buyer_id?: string | null; readonly buyer_external_identifier?: string | null };
}

/** A card in the vault as the transactions service may see it: its id and summary, never its number. */
export interface VaultCardSummary {
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

/**
 * What a card-bearing request is built with: short-lived aliases of a vaulted card's number and security code,
 * bound to the merchant account (the vault's `CardAliases`), swapped back only by the vault's forwarder.
 */
export interface VaultCardAliases {
  readonly number: string;
  /** Null when no live security code alias was given. */
  readonly securityCode: string | null;
  /** MM/YY */
  readonly expirationDate: string;
  /** When the aliases stop standing for the card (ISO 8601). */
  readonly expiresAt: string;
}

/** What the transactions service gets in place of the card data (`TransactionCreateRequest.card_hand_over`). */
export interface CardHandOver {
  /** The stored card, one-off until the payment stores it; null for a stored method's security code. */
  readonly card_id: string | null;
  /**
   * The stored card's summary and its first aliases (with the security code's), so that the payment decides and is
   * recorded while the vault takes the card (`VaultPort.takeHandedOverCard`, waited for before the first
   * card-bearing call) instead of after a round trip for them. Null with no card; absent from a vault of an earlier
   * release, whose payments take the card first.
   */
  readonly card?: VaultCardSummary | null;
  readonly aliases?: VaultCardAliases | null;
  /** The alias of the security code, held in the vault's memory only; null when none was given. */
  readonly security_code_alias: string | null;
  /**
   * A keyed digest of the card data the client sent (number, security code): what the Idempotency-Key fingerprint
   * takes in their place, so that a replay matches and another card conflicts, whatever card id was minted.
   */
  readonly digest: string;
}

/**
 * What the transactions service asks of the vault's process: its `VaultPort` (one pattern per method, the arguments
 * as a JSON array), card-bearing calls through the vault's outbound forwarder, and the key hand-over at its start.
 * Outside `vault.`, so that no other service may ask them (rpc-services admits the transactions service only).
 */
export const vaultPortPatterns = {
  storeCard: 'vault-port.store-card',
  findCard: 'vault-port.find-card',
  takeHandedOverCard: 'vault-port.take-handed-over-card',
  cardAliases: 'vault-port.card-aliases',
  aliasSecurityCode: 'vault-port.alias-security-code',
  keepSecurityCode: 'vault-port.keep-security-code',
  forgetSecurityCodes: 'vault-port.forget-security-codes',
  removeCards: 'vault-port.remove-cards',
  usablePaymentMethod: 'vault-port.usable-payment-method',
  recordStoreRequested: 'vault-port.record-store-requested',
  receiveVaultToken: 'vault-port.receive-vault-token',
  networkTokenForTransaction: 'vault-port.network-token-for-transaction',
  resolveBuyer: 'vault-port.resolve-buyer',
  buyerWire: 'vault-port.buyer-wire',
  claimCheckoutSession: 'vault-port.claim-checkout-session',
  openPaze: 'vault-port.open-paze',
} as const;

/**
 * `VaultPort.forgetSecurityCode` of a transactions process of an earlier release (one alias per call), still answered
 * by the vault while one may be running (a rolling upgrade): its `vault-port.forget-security-codes` takes many.
 */
export const legacyForgetSecurityCodePattern = 'vault-port.forget-security-code';

/** The forwarder and the key hand-over, beside the port's methods (the transactions service's only, too). */
export const vaultForwardingPatterns = {
  /** A card-bearing provider call (`ForwardedRequest` → `ForwardedAnswer`). */
  forward: 'vault-port.forward',
  /** The keys the transactions service derived from the vault root before the split (`VaultKeyHandOver`). */
  keys: 'vault-port.keys',
} as const;

/** What the vault's process asks of the transactions process: a merchant account's card connections (network tokens). */
export const vaultDirectoryPatterns = {
  connections: 'vault-directory.connections',
} as const;

/** A card-bearing provider call as the transactions process sends it to the vault's forwarder. */
export interface ForwardedRequest {
  readonly merchant_account_id: string;
  /** The hosts the connection's definition declares (`ConnectorDefinition.hosts`). */
  readonly hosts: readonly string[];
  readonly url: string;
  readonly method: string;
  readonly headers: readonly (readonly [string, string])[];
  /** The body's bytes (base64); null when none. A form-encoded body keeps its content type in `headers`. */
  readonly body_base64: string | null;
  readonly redirect: 'follow' | 'manual' | 'error';
}

/** The provider's answer, passed back unchanged; or why no answer came. */
export type ForwardedAnswer =
  | {
      readonly status: number;
      readonly status_text: string;
      readonly headers: readonly (readonly [string, string])[];
      readonly body_base64: string;
    }
  /** The forwarder refused (`ForwarderRefusedError`); `not_sent`: before any call was made. */
  | { readonly refused: { readonly reason: string; readonly message: string; readonly not_sent: boolean } }
  /** The call failed (`code`: a code that says it was never sent, e.g. ECONNREFUSED; else null: outcome unknown). */
  | { readonly failed: { readonly name: string; readonly message: string; readonly code: string | null } };

/**
 * The key hand-over (base64 of 32 bytes each): keys derived from the vault root for one purpose each, never the root.
 */
export interface VaultKeyHandOver {
  readonly fingerprint_key: string;
  readonly return_token_key: string;
  /** The gift card vault's keys before GIFT_CARDS_KEY (passed on to the gift cards process). */
  readonly gift_card_legacy_secret_key: string;
  readonly gift_card_legacy_response_key: string;
}
