/**
 * The transactions service's side of its couplings with the gift cards service: the merchant accounts' gift card
 * services (the connections are this service's) in process (`giftCardServiceDirectory`, embedded runtime) or over
 * RPC for the gift cards process (`giftCardDirectoryRpcHandlers`, with the key hand-over), and the gift cards process
 * as a split payment's source of stored cards (`giftCardsOverRpc`).
 */
import type { GiftCardConnector } from '@switchyard/connectors';
import {
  giftCardDirectoryPatterns,
  giftCardPaymentPatterns,
  type ActiveGiftCardServiceWire,
  type GiftCardKeysWire,
  type GiftCardDigitsWire,
  type GiftCardServiceRefWire,
  type GiftCardServiceRequest,
  type GiftCardForgetHandOverRequest,
} from '@switchyard/contracts';
import type { RpcClient, RpcHandlers } from '@switchyard/rpc';
import type { PaymentServiceConnection, PaymentServices } from './payment-services/payment-services.slice';
import type { GiftCardSource } from './transactions/gift-card-payments';

/** A gift card service as a stored gift card names it. */
export interface GiftCardServiceRef {
  readonly id: string;
  readonly definitionId: string;
  readonly displayName: string;
}

/**
 * The gift cards service's view of the merchant accounts' gift card services (these connections are ours), in process
 * (embedded runtime). The gift cards process asks `giftCardDirectoryRpcHandlers` instead and builds the connector itself.
 */
export interface GiftCardServices {
  activeGiftCardService(
    merchantAccountId: string,
  ): Promise<{ readonly service: GiftCardServiceRef; readonly connector: GiftCardConnector } | null>;
  serviceRef(merchantAccountId: string, id: string): Promise<GiftCardServiceRef | null>;
  /** The gift card service `id` (active or not) and its connector: the one a split payment planned with. */
  giftCardService(
    merchantAccountId: string,
    id: string,
  ): Promise<{ readonly service: GiftCardServiceRef; readonly connector: GiftCardConnector } | null>;
}

/**
 * What the gift cards process asks of this one (`giftCardDirectoryPatterns`; rpc-services admits only it): a merchant
 * account's active gift card service with what its connector is built from, a connection's name as it is now, and
 * the key hand-over at its start (base64; the keys stay derived from this service's vault root).
 */
export function giftCardDirectoryRpcHandlers(
  paymentServices: Pick<PaymentServices, 'activeConnections' | 'connection'>,
  keys: {
    readonly legacyKeys: { readonly secret: Buffer; readonly responses: Buffer };
    readonly fingerprintKey: Buffer;
  },
): RpcHandlers {
  const refOf = (connection: PaymentServiceConnection): GiftCardServiceRefWire => ({
    id: connection.id,
    definition_id: connection.paymentServiceDefinitionId,
    display_name: connection.displayName,
  });
  const wireOf = (connection: PaymentServiceConnection): ActiveGiftCardServiceWire => ({
    service: refOf(connection),
    merchant_account_id: connection.merchantAccountId,
    fields: Object.fromEntries(connection.fields.map((field) => [field.key, field.value])),
    updated_at: connection.updatedAt,
  });
  return {
    [giftCardDirectoryPatterns.activeService]: async (payload): Promise<ActiveGiftCardServiceWire | null> => {
      const { merchant_account_id: merchantAccountId } = payload as { merchant_account_id: string };
      const connection = activeGiftCardConnection(paymentServices, merchantAccountId);
      return connection ? wireOf(connection) : null;
    },
    [giftCardDirectoryPatterns.service]: async (payload): Promise<ActiveGiftCardServiceWire | null> => {
      const { merchant_account_id: merchantAccountId, id } = payload as GiftCardServiceRequest;
      const connection = paymentServices.connection(merchantAccountId, id);
      return connection?.method === 'gift-card' ? wireOf(connection) : null;
    },
    [giftCardDirectoryPatterns.serviceRef]: async (payload): Promise<GiftCardServiceRefWire | null> => {
      const { merchant_account_id: merchantAccountId, id } = payload as { merchant_account_id: string; id: string };
      const connection = paymentServices.connection(merchantAccountId, id);
      return connection ? refOf(connection) : null;
    },
    [giftCardDirectoryPatterns.keys]: async (): Promise<GiftCardKeysWire> => ({
      legacy_secret_key: keys.legacyKeys.secret.toString('base64'),
      legacy_response_key: keys.legacyKeys.responses.toString('base64'),
      fingerprint_key: keys.fingerprintKey.toString('base64'),
    }),
  };
}

/**
 * The gift cards process as a split payment's source of stored cards (distributed runtime): what may be shown of one
 * and whether it is the buyer's. Its number and PIN stay there: the redemptions are asked of it with events.
 */
export const giftCardsOverRpc = (rpc: RpcClient): GiftCardSource => ({
  describe: async (merchantAccountId, giftCardId) => {
    const digits = await rpc.call<GiftCardDigitsWire | null>(giftCardPaymentPatterns.describe, {
      merchant_account_id: merchantAccountId,
      gift_card_id: giftCardId,
    });
    return digits ? { bin: digits.bin, subBin: digits.sub_bin, last4: digits.last4 } : null;
  },
  belongsTo: (merchantAccountId, giftCardId, buyer) =>
    rpc.call<boolean>(giftCardPaymentPatterns.belongsTo, {
      merchant_account_id: merchantAccountId,
      gift_card_id: giftCardId,
      buyer,
    }),
  forgetHandedOver: async (merchantAccountId, giftCardIds) => {
    await rpc.call<null>(giftCardPaymentPatterns.forgetHandOver, {
      merchant_account_id: merchantAccountId,
      gift_card_ids: giftCardIds,
    } satisfies GiftCardForgetHandOverRequest);
  },
});

const giftCardServiceRef = (connection: PaymentServiceConnection): GiftCardServiceRef => ({
  id: connection.id,
  definitionId: connection.paymentServiceDefinitionId,
  displayName: connection.displayName,
});

/** A merchant account's gift card service: its active payment service of method `gift-card`. */
export function giftCardServiceDirectory(
  paymentServices: Pick<PaymentServices, 'activeConnections' | 'connection'>,
  connectorFor: (connection: PaymentServiceConnection) => GiftCardConnector,
): GiftCardServices {
  return {
    activeGiftCardService: async (merchantAccountId) => {
      const connection = activeGiftCardConnection(paymentServices, merchantAccountId);
      return connection ? { service: giftCardServiceRef(connection), connector: connectorFor(connection) } : null;
    },
    serviceRef: async (merchantAccountId, id) => {
      const connection = paymentServices.connection(merchantAccountId, id);
      return connection ? giftCardServiceRef(connection) : null;
    },
    giftCardService: async (merchantAccountId, id) => {
      const connection = paymentServices.connection(merchantAccountId, id);
      return connection?.method === 'gift-card'
        ? { service: giftCardServiceRef(connection), connector: connectorFor(connection) }
        : null;
    },
  };
}

const activeGiftCardConnection = (
  paymentServices: Pick<PaymentServices, 'activeConnections'>,
  merchantAccountId: string,
): PaymentServiceConnection | undefined =>
  paymentServices.activeConnections(merchantAccountId).find((candidate) => candidate.method === 'gift-card');
