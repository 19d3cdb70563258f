/**
 * What pays a transaction, resolved from `payment_method` before anything is appended: a card (into the vault first:
 * from here on only its id, scheme, BIN and last four travel, and its security code as the vault's alias; the
 * card-bearing calls get aliases of its number from the vault), a stored method (`id`: usable only once `succeeded`;
 * its network token when the connection takes one), a checkout session's card or stored method (used once), a Paze
 * wallet payload (decrypted with the merchant's key: a network token and its cryptogram), or a redirect method.
 */
import { ApiError } from '@switchyard/api';
import type { NetworkTokenDetails } from '@switchyard/connectors';
import type { CardHandOver, TransactionCreateInput } from '@switchyard/contracts';
import type { PaymentServiceConnection } from '../payment-services/payment-services.slice';
import type { CardBinInfo } from '@switchyard/bin-data';
import type { CardAliasSet, CardSummary, ClaimedSessionCard, StoredCardSummary, VaultPort } from '../vault-port';

/** How many times a claim may name a stored method to vet (the session changing in between) before giving up. */
const MAX_VETTING_ROUNDS = 3;
import type { TransactionDetails } from './transaction-wire';

/**
 * A vaulted card as a payment holds it: its id and the alias of the security code given with it (held by the vault).
 * A card-bearing call is built with the aliases `VaultPort.cardAliases` issues for it, never the number.
 */
export interface InstrumentCard {
  readonly id: string;
  readonly securityCode: string | null;
  /** Aliases of the card and that security code issued with it (the hand-over's), used while they are live. */
  readonly aliases?: CardAliasSet;
  /**
   * A card handed over for this payment: the vault's take of it, under way beside the payment's decision. Rejects
   * (502) when the vault no longer has the card; every card-bearing call waits for it first.
   */
  readonly taken?: Promise<void>;
}

export interface Instrument {
  /** `instrument_type` on the wire. */
  type: 'pan' | 'card_token' | 'redirect' | 'network_token';
  /** The vaulted card for 3-D Secure and the provider; null for a redirect method or a Paze token. */
  readonly card: InstrumentCard | null;
  /** What flow rules and 3-D Secure decide on (the vault's card summary); null exactly when `card` is. */
  readonly cardBin: { readonly prefix: string; readonly info: CardBinInfo } | null;
  /** The network token the provider gets instead of the card (a stored card's, when the connection takes one; Paze's). */
  networkToken: NetworkTokenDetails | null;
  readonly summary: NonNullable<TransactionDetails['paymentMethod']>;
  /** Paze: only connections this accepts may take it. */
  readonly connectionFilter?: (connection: PaymentServiceConnection) => boolean;
  readonly checkoutSessionId?: string;
  /** A stored method's network token, fetched once the route says the connection takes one. */
  readonly storedNetworkToken?: (merchantInitiated: boolean) => Promise<NetworkTokenDetails | null>;
}

export interface InstrumentSources {
  readonly vault: VaultPort;
  /** Refuse a card given by number without the gateway's hand-over (`AuthorizationSettings.cardDataByHandOverOnly`). */
  readonly cardDataByHandOverOnly?: boolean;
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
    context: {
      transactionId: string;
      buyerId: string | null;
      currency: string;
      owner?: StoredMethodOwner;
      /** The card data of the request, handed to the vault by the gateway: the body comes without it. */
      handOver?: CardHandOver | null;
    },
  ): Promise<Instrument> {
    const handOver = context.handOver ?? null;
    switch (method.method) {
      case 'card': {
        const stored: StoredCardSummary & { readonly aliases?: CardAliasSet | null; readonly taken?: Promise<void> } =
          handOver
            ? await this.handedOverCard(merchantAccountId, handOver)
            : await this.store(method, merchantAccountId, context.buyerId);
        return {
          type: 'pan',
          card: {
            id: stored.id,
            securityCode: stored.securityCodeAlias,
            ...(stored.aliases ? { aliases: stored.aliases } : {}),
            ...(stored.taken ? { taken: stored.taken } : {}),
          },
          cardBin: cardBinOf(stored),
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
          handOver
            ? { alias: handOver.security_code_alias }
            : method.security_code
              ? { given: method.security_code }
              : { alias: null },
          context.owner ?? { embed: false, buyerId: context.buyerId },
        );
      case 'checkout-session': {
        const owner = context.owner ?? { embed: false, buyerId: context.buyerId };
        const claimed = await this.claimSession(merchantAccountId, method.id, context.transactionId, owner);
        const { cardId, securityCodeAlias } = claimed;
        // It pays as itself (its network token too), with the code typed there.
        if (claimed.storedPaymentMethod) {
          const stored = await this.stored(merchantAccountId, cardId, { alias: securityCodeAlias }, owner);
          return { ...stored, checkoutSessionId: method.id };
        }
        const stored = await this.sources.vault.findCard(merchantAccountId, cardId);
        if (!stored) throw sessionCardGone();
        return {
          type: 'pan',
          card: { id: stored.id, securityCode: securityCodeAlias },
          cardBin: cardBinOf(stored),
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
        const { credential, connectionIds } = await this.sources.vault.openPaze(merchantAccountId, method.token, {
          currency: context.currency,
          connections: this.sources.activeConnections(merchantAccountId),
        });
        const allowed = new Set(connectionIds);
        return {
          type: 'network_token',
          card: null,
          cardBin: null,
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
          cardBin: null,
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

  /**
   * A stored method: `succeeded` only; its card by id (aliases of its number for the card-bearing calls), and its
   * network token when the route allows. `securityCode`: as given with the payment (handed to the vault for an alias)
   * or the alias of one the vault holds already.
   */
  private async stored(
    merchantAccountId: string,
    id: string,
    securityCode: { readonly given: string } | { readonly alias: string | null },
    owner: StoredMethodOwner,
  ): Promise<Instrument> {
    await this.mayUse(merchantAccountId, id, owner);
    const vault = this.sources.vault;
    const stored = await vault.findCard(merchantAccountId, id);
    if (!stored) {
      throw ApiError.badRequest('The payment method does not exist', [
        {
          location: 'body',
          pointer: '/payment_method/id',
          message: 'no stored payment method with this id',
          type: 'payment_method_not_found',
        },
      ]);
    }
    return {
      type: 'card_token',
      card: {
        id: stored.id,
        securityCode:
          'given' in securityCode
            ? await vault.aliasSecurityCode(merchantAccountId, securityCode.given)
            : securityCode.alias,
      },
      cardBin: cardBinOf(stored),
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
      storedNetworkToken: async (merchantInitiated: boolean) => {
        const token = await vault.networkTokenForTransaction(merchantAccountId, id, { merchantInitiated });
        return token
          ? { token: token.token, expirationDate: token.expirationDate, cryptogram: token.cryptogram }
          : null;
      },
    };
  }

  /**
   * Claims a checkout session: a stored method chosen in the browser is vetted as one named by id (`mayUse`) before
   * the session is used up — the vault names it, this service checks it, and the claim is asked again.
   */
  private async claimSession(
    merchantAccountId: string,
    sessionId: string,
    transactionId: string,
    owner: StoredMethodOwner,
  ): Promise<ClaimedSessionCard> {
    let vettedStoredMethod: string | null = null;
    for (let attempt = 1; ; attempt += 1) {
      const answer = await this.sources.vault.claimCheckoutSession(merchantAccountId, sessionId, transactionId, {
        vettedStoredMethod,
      });
      if (!('vetStoredMethod' in answer)) return answer;
      // The session changed under us more often than a buyer clicks: refused as a session still being edited.
      if (attempt > MAX_VETTING_ROUNDS) throw sessionKeptChanging();
      await this.mayUse(merchantAccountId, answer.vetStoredMethod, owner);
      vettedStoredMethod = answer.vetStoredMethod;
    }
  }

  /**
   * A card given by number with a payment that did not come through the gateway's hand-over (a caller of this
   * service's RPC other than the gateway, in process): into the vault — unless this service takes no card data.
   */
  private store(
    method: Extract<PaymentMethodInput, { method: 'card' }>,
    merchantAccountId: string,
    buyerId: string | null,
  ): Promise<StoredCardSummary> {
    if (this.sources.cardDataByHandOverOnly)
      throw new ApiError(400, 'Card data is taken by the vault only: send the payment through the gateway', [
        {
          location: 'body',
          pointer: '/payment_method/number',
          type: 'card_data_not_handed_over',
          message: 'The transactions service takes no card number: the gateway hands it to the vault',
        },
      ]);
    return this.sources.vault.storeCard(
      merchantAccountId,
      {
        number: method.number,
        expirationDate: method.expiration_date,
        ...(method.security_code ? { securityCode: method.security_code } : {}),
      },
      { buyerId },
    );
  }

  /**
   * The card the gateway handed to the vault for this request (stored just before), with its first aliases. The
   * hand-over answered its summary and aliases, so the vault's take (which keeps the card from the sweep of unclaimed
   * ones) runs beside the payment's decision and its first append, and only a card-bearing call waits for it. From a
   * vault that answered only the card's id, the take answers them, first.
   */
  private async handedOverCard(
    merchantAccountId: string,
    handOver: CardHandOver,
  ): Promise<StoredCardSummary & { readonly aliases?: CardAliasSet | null; readonly taken?: Promise<void> }> {
    const cardId = handOver.card_id;
    const securityCodeAlias = handOver.security_code_alias;
    if (cardId && handOver.card) {
      const taken = this.sources.vault.takeHandedOverCard(merchantAccountId, cardId).then((found) => {
        if (!found) throw handedOverCardGone();
      });
      // Waited for by the card-bearing calls; a payment refused before any (no route) leaves it unobserved.
      taken.catch(() => {});
      return { ...handOver.card, securityCodeAlias, aliases: handOver.aliases ?? null, taken };
    }
    const stored = cardId
      ? await this.sources.vault.takeHandedOverCard(merchantAccountId, cardId, {
          aliases: { securityCode: securityCodeAlias },
        })
      : null;
    if (!stored) throw handedOverCardGone();
    return { ...stored, securityCodeAlias };
  }

  /** Throws unless the stored method is `succeeded` and `owner` may pay with it. */
  private async mayUse(merchantAccountId: string, id: string, owner: StoredMethodOwner): Promise<void> {
    const usable = await this.sources.vault.usablePaymentMethod(merchantAccountId, id);
    assertOwner(usable.buyerId, owner);
  }
}

const cardBinOf = (card: CardSummary) => ({ prefix: card.binPrefix, info: card.binInfo });

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

const sessionKeptChanging = () => {
  const message = 'the checkout session kept changing while this payment used it';
  return ApiError.badRequest('The checkout session kept changing', [
    { location: 'body', pointer: '/payment_method/id', message, type: 'checkout_session_changed' },
  ]);
};

const handedOverCardGone = () =>
  ApiError.badGateway(new Error('the card handed over to the vault for this request is not in the vault'));

const sessionCardGone = () =>
  ApiError.badRequest('The checkout session has no card', [
    {
      location: 'body',
      pointer: '/payment_method/id',
      message: 'the card of this checkout session is no longer in the vault',
      type: 'checkout_session_without_card',
    },
  ]);
