/**
 * What pays a transaction, resolved from `payment_method` before anything is appended: a card (into the vault first:
 * from here on only its id, scheme, BIN and last four travel), a stored method (`id`: usable only once `succeeded`;
 * its network token when the connection takes one), a checkout session's card or stored method (used once), a Paze
 * wallet payload (decrypted with the merchant's key: a network token and its cryptogram), or a redirect method.
 */
import { ApiError } from '@switchyard/api';
import type { CardDetails, NetworkTokenDetails } from '@switchyard/connectors';
import type { TransactionCreateInput } from '@switchyard/contracts';
import type { PaymentServiceConnection } from '../payment-services/payment-services.slice';
import type { CardBinInfo } from '@switchyard/bin-data';
import type { TransactionDetails } from './transaction-wire';

export interface Instrument {
  /** `instrument_type` on the wire. */
  type: 'pan' | 'card_token' | 'redirect' | 'network_token';
  /** The card for flow rules, 3-D Secure and the provider; null for a redirect method or a Paze token. */
  readonly card: CardDetails | null;
  /** The network token the provider gets instead of the card (a stored card's, when the connection takes one; Paze's). */
  networkToken: NetworkTokenDetails | null;
  readonly summary: NonNullable<TransactionDetails['paymentMethod']>;
  /** Paze: only connections this accepts may take it. */
  readonly connectionFilter?: (connection: PaymentServiceConnection) => boolean;
  readonly checkoutSessionId?: string;
  /** A stored method's network token, fetched once the route says the connection takes one. */
  readonly storedNetworkToken?: (merchantInitiated: boolean) => Promise<NetworkTokenDetails | null>;
}

/** A card in the vault as this service may see it (the vault's `StoredCard`): its id and summary, never its number. */
export interface VaultedCard {
  readonly id: string;
  readonly merchantAccountId: string;
  readonly scheme: string | null;
  readonly cardType: string | null;
  readonly bin: string;
  readonly last4: string;
  /** MM/YY */
  readonly expirationDate: string;
  readonly fingerprint: string;
  readonly createdAt: string;
}

/** What this service asks of the card vault (the vault's `CardVault`). */
export interface CardVaultPort {
  /** Stores a card given with a payment; its summary comes back. */
  store(
    merchantAccountId: string,
    card: { readonly number: string; readonly expirationDate: string },
    options?: { buyerId?: string | null },
  ): VaultedCard;
  find(merchantAccountId: string, id: string): VaultedCard | null;
  /** The number and expiry, for the provider call only. */
  reveal(merchantAccountId: string, id: string): { number: string; expirationDate: string } | null;
  /** Shreds a card given for one payment. */
  remove(merchantAccountId: string, id: string): void;
}

/** Stored payment methods (the vault's payment methods slice). */
export interface StoredPaymentMethods {
  /** The method if it may pay (`succeeded`), with the buyer it was stored for; throws a 400 otherwise. */
  usable(merchantAccountId: string, id: string): { readonly buyerId: string | null };
  /** `store: true`: the card of this payment becomes a method, `processing` until the provider's vault token. */
  recordStoreRequested(
    merchantAccountId: string,
    request: {
      card: VaultedCard;
      bin: CardBinInfo | null;
      transactionId: string;
      paymentServiceId: string;
      buyerId: string | null;
      externalIdentifier: string | null;
    },
  ): Promise<void>;
  receiveVaultToken(transactionId: string, paymentServiceId: string): Promise<void>;
}

/** The buyers a payment can name (the vault's buyers). */
export interface BuyerDirectory {
  /** Null when neither is given; throws a 400 at `pointer` when the given buyer does not exist. */
  resolve(
    merchantAccountId: string,
    ref: { buyer_id?: string | null; buyer_external_identifier?: string | null },
    pointer: string,
  ): { readonly id: string } | null;
  /** The buyer as the `buyer` field shows it; null once deleted. */
  wire(merchantAccountId: string, buyerId: string): Record<string, unknown> | null;
}

/** Network tokens of stored methods (the network tokens slice). */
export interface NetworkTokenSource {
  tokenForTransaction(
    merchantAccountId: string,
    paymentMethodId: string,
    options: { merchantInitiated: boolean },
  ): Promise<{ token: string; expirationDate: string; cryptogram: string; eci: string } | null>;
}

/** A checkout session's card, claimed once (checkout sessions slice); `storedPaymentMethod`: `cardId` is a method. */
export interface CheckoutSessionClaims {
  claim(
    merchantAccountId: string,
    sessionId: string,
    transactionId: string,
    options: { readonly vetStoredMethod: (paymentMethodId: string) => void },
  ): Promise<{
    readonly cardId: string;
    readonly storedPaymentMethod: boolean;
    readonly card: { readonly number: string; readonly expirationDate: string; readonly securityCode?: string };
  }>;
}

/** Paze: the merchant's wallet key and the rules of who may take it (the digital wallets slice). */
export interface PazeWallets {
  /** The token and cryptogram of a Paze payload; throws a 400 naming the refusal (not configured, not eligible, undecryptable). */
  open(
    merchantAccountId: string,
    payload: string,
    input: { currency: string; connections: readonly PaymentServiceConnection[] },
  ): Promise<{
    readonly credential: {
      readonly token: string;
      readonly expirationDate: string;
      readonly cryptogram: string;
      readonly eci: string | null;
      readonly scheme: string;
    };
    readonly connectionIds: readonly string[];
  }>;
}

export interface InstrumentSources {
  readonly vault: CardVaultPort;
  readonly paymentMethods: Pick<StoredPaymentMethods, 'usable'> | null;
  readonly networkTokens: NetworkTokenSource | null;
  readonly checkoutSessions: CheckoutSessionClaims | null;
  readonly paze: PazeWallets | null;
  readonly activeConnections: (merchantAccountId: string) => readonly PaymentServiceConnection[];
}

export const takesNetworkTokens = (connection: PaymentServiceConnection): boolean =>
  connection.networkTokensEnabled && connection.effectiveCapabilities.networkTokens;

type PaymentMethodInput = NonNullable<TransactionCreateInput['payment_method']>;

/**
 * Whose stored payment method a payment may use (issue 22, item 2). `embed`: a call through an embed token, limited
 * to the pinned buyer (its id; null: none pinned, or the pinned buyer does not exist) — any other owner, or none, is
 * a 403. Otherwise a server-to-server call: a stored method of another buyer than the one the payment names is a
 * 400; one stored without a buyer goes with any.
 */
export interface StoredMethodOwner {
  readonly embed: boolean;
  readonly buyerId: string | null;
}

export class Instruments {
  constructor(private readonly sources: InstrumentSources) {}

  async resolve(
    merchantAccountId: string,
    method: PaymentMethodInput,
    context: { transactionId: string; buyerId: string | null; currency: string; owner?: StoredMethodOwner },
  ): Promise<Instrument> {
    switch (method.method) {
      case 'card': {
        const stored = this.sources.vault.store(
          merchantAccountId,
          { number: method.number, expirationDate: method.expiration_date },
          { buyerId: context.buyerId },
        );
        return {
          type: 'pan',
          card: {
            number: method.number,
            expirationDate: method.expiration_date,
            ...(method.security_code ? { securityCode: method.security_code } : {}),
          },
          networkToken: null,
          summary: {
            id: stored.id,
            method: 'card',
            scheme: stored.scheme,
            last4: stored.last4,
            bin: stored.bin,
            expirationDate: stored.expirationDate,
            fingerprint: stored.fingerprint,
            externalIdentifier: method.external_identifier ?? null,
          },
        };
      }
      case 'id':
        return this.stored(
          merchantAccountId,
          method.id,
          method.security_code,
          context.owner ?? { embed: false, buyerId: context.buyerId },
        );
      case 'checkout-session': {
        if (!this.sources.checkoutSessions) throw ApiError.badRequest('Checkout sessions are not available');
        const owner = context.owner ?? { embed: false, buyerId: context.buyerId };
        // A stored method chosen in the browser is vetted as one named by id, before the session is used up.
        const vetStoredMethod = (paymentMethodId: string) => this.mayUse(merchantAccountId, paymentMethodId, owner);
        const claims = this.sources.checkoutSessions;
        const claimed = await claims.claim(merchantAccountId, method.id, context.transactionId, { vetStoredMethod });
        const { cardId, card } = claimed;
        // It pays as itself (its network token too), with the code typed there.
        if (claimed.storedPaymentMethod) {
          return { ...this.stored(merchantAccountId, cardId, card.securityCode, owner), checkoutSessionId: method.id };
        }
        const stored = this.sources.vault.find(merchantAccountId, cardId);
        if (!stored) throw sessionCardGone();
        return {
          type: 'pan',
          card: {
            number: card.number,
            expirationDate: card.expirationDate,
            ...(card.securityCode ? { securityCode: card.securityCode } : {}),
          },
          networkToken: null,
          summary: {
            id: stored.id,
            method: 'card',
            scheme: stored.scheme,
            last4: stored.last4,
            bin: stored.bin,
            expirationDate: stored.expirationDate,
            fingerprint: stored.fingerprint,
            externalIdentifier: method.external_identifier ?? null,
          },
          checkoutSessionId: method.id,
        };
      }
      case 'paze': {
        if (!this.sources.paze) throw ApiError.badRequest('Paze is not available');
        const { credential, connectionIds } = await this.sources.paze.open(merchantAccountId, method.token, {
          currency: context.currency,
          connections: this.sources.activeConnections(merchantAccountId),
        });
        const allowed = new Set(connectionIds);
        return {
          type: 'network_token',
          card: null,
          networkToken: {
            token: credential.token,
            expirationDate: credential.expirationDate,
            cryptogram: credential.cryptogram,
          },
          // A network token is not the card number, but it is charged like one: only its last four are shown.
          summary: {
            id: null,
            method: 'paze',
            scheme: credential.scheme,
            last4: credential.token.slice(-4),
            bin: null,
            expirationDate: credential.expirationDate,
            fingerprint: null,
            externalIdentifier: null,
          },
          connectionFilter: (connection) => allowed.has(connection.id),
        };
      }
      default:
        return {
          type: 'redirect',
          card: null,
          networkToken: null,
          summary: {
            id: null,
            method: method.method,
            scheme: null,
            last4: null,
            bin: null,
            expirationDate: null,
            fingerprint: null,
            externalIdentifier: method.external_identifier ?? null,
          },
        };
    }
  }

  /** A stored method: `succeeded` only; its card from the vault, and its network token when the route allows. */
  private stored(
    merchantAccountId: string,
    id: string,
    securityCode: string | undefined,
    owner: StoredMethodOwner,
  ): Instrument {
    this.mayUse(merchantAccountId, id, owner);
    const stored = this.sources.vault.find(merchantAccountId, id);
    const card = stored && this.sources.vault.reveal(merchantAccountId, id);
    if (!stored || !card) {
      throw ApiError.badRequest('The payment method does not exist', [
        {
          location: 'body',
          pointer: '/payment_method/id',
          message: 'no stored payment method with this id',
          type: 'payment_method_not_found',
        },
      ]);
    }
    const tokens = this.sources.networkTokens;
    return {
      type: 'card_token',
      card: { number: card.number, expirationDate: card.expirationDate, ...(securityCode ? { securityCode } : {}) },
      networkToken: null,
      summary: {
        id: stored.id,
        method: 'card',
        scheme: stored.scheme,
        last4: stored.last4,
        bin: stored.bin,
        expirationDate: stored.expirationDate,
        fingerprint: stored.fingerprint,
      },
      ...(tokens
        ? {
            storedNetworkToken: async (merchantInitiated: boolean) => {
              const token = await tokens.tokenForTransaction(merchantAccountId, id, { merchantInitiated });
              return token
                ? { token: token.token, expirationDate: token.expirationDate, cryptogram: token.cryptogram }
                : null;
            },
          }
        : {}),
    };
  }

  /** Throws unless the stored method is `succeeded` and `owner` may pay with it. */
  private mayUse(merchantAccountId: string, id: string, owner: StoredMethodOwner): void {
    const usable = this.sources.paymentMethods?.usable(merchantAccountId, id);
    if (usable) assertOwner(usable.buyerId, owner);
    else if (owner.embed) throw notThePinnedBuyers(); // without the payment methods slice nobody can tell whose it is
  }
}

function assertOwner(storedFor: string | null, owner: StoredMethodOwner): void {
  if (owner.embed) {
    if (owner.buyerId === null || storedFor !== owner.buyerId) throw notThePinnedBuyers();
  } else if (owner.buyerId !== null && storedFor !== null && storedFor !== owner.buyerId) {
    const message = 'the stored payment method belongs to another buyer than the one this payment names';
    throw ApiError.badRequest(message, [
      { location: 'body', pointer: '/payment_method/id', message, type: 'payment_method_buyer_mismatch' },
    ]);
  }
}

/** Said the same whether the method is another buyer's or nobody's, so an embed token learns nothing of either. */
const notThePinnedBuyers = () => {
  const message = 'the stored payment method does not belong to the buyer this embed token is limited to';
  return new ApiError(403, message, [
    { location: 'body', pointer: '/payment_method/id', message, type: 'pinned_by_embed_token' },
  ]);
};

const sessionCardGone = () =>
  ApiError.badRequest('The checkout session has no card', [
    {
      location: 'body',
      pointer: '/payment_method/id',
      message: 'the card of this checkout session is no longer in the vault',
      type: 'checkout_session_without_card',
    },
  ]);
