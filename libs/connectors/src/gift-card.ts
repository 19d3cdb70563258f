/**
 * The gift card provider port: what Switchyard asks of a gift card service (a Qwikcilver-like provider, or the
 * simulator's `mock-gift-card`). Amounts are integers in minor units. Business answers — a card that does not
 * exist, is expired, has too little on it — are VALUES (`GiftCardFailure`); an unreachable provider or a broken
 * protocol throws `ConnectorUnavailableError` / `ConnectorRequestRejectedError` (connector-errors.ts).
 *
 * Redemptions, reversals and refunds carry OUR reference and are idempotent by it: the same reference twice moves
 * money once. That is what lets a crashed payment be finished by reversing every redemption it may have made.
 */
import { timedGiftCardConnector } from './provider-call-timing';

/** The reference's GiftCardErrorCode values. */
export type GiftCardErrorCode =
  | 'invalid_gift_card'
  | 'expired_card'
  | 'inactive_card'
  | 'invalid_service_credentials'
  | 'invalid_amount'
  | 'incorrect_currency'
  | 'insufficient_funds'
  | 'invalid_service_configuration'
  | 'operation_canceled'
  | 'service_error'
  | 'service_network_error'
  | 'unknown_error'
  | 'max_gift_cards_reached';

export interface GiftCardCredentials {
  /** 16 to 19 digits. */
  readonly number: string;
  readonly pin?: string;
}

export interface GiftCardFailure {
  readonly outcome: 'failed';
  readonly errorCode: GiftCardErrorCode;
  /** The provider's own code and message, verbatim. */
  readonly rawErrorCode?: string;
  readonly rawErrorMessage?: string;
}

export interface GiftCardBalance {
  readonly outcome: 'succeeded';
  readonly balance: number;
  readonly currency: string;
  /** ISO-8601; null when the card does not expire. */
  readonly expiresAt: string | null;
}

export interface GiftCardIssued extends GiftCardBalance {
  readonly number: string;
  readonly pin: string;
}

export interface GiftCardRedeemed {
  readonly outcome: 'succeeded';
  /** The provider's id of this redemption. */
  readonly providerRedemptionId: string;
  /** What is left on the card. */
  readonly balance: number;
}

export interface GiftCardReversed {
  readonly outcome: 'succeeded';
  /** false: the provider never made a redemption with this reference, so nothing was put back. */
  readonly reversed: boolean;
}

export interface GiftCardRefunded {
  readonly outcome: 'succeeded';
  readonly providerRefundId: string;
}

export interface GiftCardConnector {
  readonly definitionId: string;
  balance(card: GiftCardCredentials): Promise<GiftCardBalance | GiftCardFailure>;
  /**
   * A new virtual card worth `amount`; idempotent by `reference`: the same reference answers the card it issued
   * first (the gift cards service sends it again when a retry follows a lost answer).
   */
  issue(request: {
    readonly reference: string;
    readonly theme: string;
    readonly amount: number;
    readonly currency: string;
  }): Promise<GiftCardIssued | GiftCardFailure>;
  /** A physical card put into use, loaded with `amount` when given; idempotent by `reference`, as `issue` is. */
  activate(request: {
    readonly reference: string;
    readonly card: GiftCardCredentials;
    readonly amount?: number;
    readonly currency: string;
  }): Promise<GiftCardBalance | GiftCardFailure>;
  /** Charges `amount`; idempotent by `reference` (the redemption id). */
  redeem(request: {
    readonly reference: string;
    readonly card: GiftCardCredentials;
    readonly amount: number;
    readonly currency: string;
  }): Promise<GiftCardRedeemed | GiftCardFailure>;
  /** Puts a whole redemption back, by its reference; idempotent; a reference never redeemed reverses nothing. */
  reverse(request: { readonly reference: string }): Promise<GiftCardReversed | GiftCardFailure>;
  /** Refunds part or all of a redemption; idempotent by `reference` (the refund id). */
  refund(request: {
    readonly reference: string;
    readonly redemptionReference: string;
    readonly amount: number;
    readonly currency: string;
  }): Promise<GiftCardRefunded | GiftCardFailure>;
}

/** What may be shown of a gift card number (the reference's `bin`, `sub_bin`, `last4`); never the whole number. */
export interface GiftCardDigits {
  /** The first 6 digits. */
  readonly bin: string;
  /** The 4 digits after the BIN (the program within the issuer). */
  readonly subBin: string;
  readonly last4: string;
}

export function giftCardDigitsOf(number: string): GiftCardDigits {
  return { bin: number.slice(0, 6), subBin: number.slice(6, 10), last4: number.slice(-4) };
}

/**
 * One gift card service definition (`mock-gift-card`, `qwikcilver-gift-card`): a connection of it makes a connector.
 */
export interface GiftCardServiceDefinition<Config = unknown> {
  readonly id: string;
  readonly displayName: string;
  /** The hosts (`host[:port]`) a connection with this configuration may call. */
  hosts(config: Config): readonly string[];
  create(config: Config): GiftCardConnector;
}

/** The gift card service definitions by id, as `ConnectorRegistry` holds the payment connectors. */
export class GiftCardServiceRegistry {
  private readonly byId = new Map<string, GiftCardServiceDefinition<never>>();

  constructor(definitions: readonly GiftCardServiceDefinition<never>[]) {
    for (const definition of definitions) {
      if (this.byId.has(definition.id)) throw new Error(`duplicate gift card service definition id "${definition.id}"`);
      // Every connector made from the registry has its provider calls timed (provider-call-timing.ts).
      this.byId.set(definition.id, {
        ...definition,
        create: (config: never) => timedGiftCardConnector(definition.create(config), definition.id),
      });
    }
  }

  get(id: string): GiftCardServiceDefinition<never> | undefined {
    return this.byId.get(id);
  }

  list(): readonly GiftCardServiceDefinition<never>[] {
    return [...this.byId.values()];
  }
}
