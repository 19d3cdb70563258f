/**
 * From a connection (a payment service row) to the Connector that talks to its provider: the connection's fields,
 * its capability switches, and the service-level provider settings (where the provider lives, the shared webhook
 * secret, where it sends notifications). A new provider adds one entry to `configFor`; a gift card service
 * (`giftCardConnectorFor`) one to `giftCardConfigFor`.
 */
import { ApiError } from '@switchyard/api';
import {
  connectorRegistry,
  giftCardServiceRegistry,
  tracedConnector,
  type AdyenConfig,
  type Connector,
  type GiftCardConnector,
  type MockCardConfig,
  type MockGiftCardConfig,
  type ProviderFetch,
  type StripeConfig,
} from '@switchyard/connectors';
import type { PaymentServiceConnection } from '../payment-services/payment-services.slice';

export interface ProviderSettings {
  /** The gateway's address as providers reach it; notifications go to `<base>/payment-services/<id>/notifications`. */
  readonly publicBaseUrl: () => string;
  /** The simulator; it serves `mock-card`, `mock-paypal` and `mock-gift-card` alike. */
  readonly mockCard?: { readonly baseUrl: string; readonly webhookSecret: string; readonly timeoutMs?: number };
  /** Per-request timeout of the real providers' connectors (PROVIDER_TIMEOUT_MS). */
  readonly providerTimeoutMs?: number;
}

/**
 * The vault's outbound forwarder as this service sees it (issue 19 item 4): a card goes to a connector (and to the
 * 3-D Secure directory) as the aliases `VaultPort.cardAliases` issues, and the call goes through `fetchFor`, which
 * swaps them back and calls only declared hosts.
 */
export interface CardForwarding {
  /** The fetch a connector of this merchant account's connection calls its provider with; `hosts` from its definition. */
  fetchFor(merchantAccountId: string, hosts: readonly string[]): ProviderFetch;
}

const fieldOf = (connection: PaymentServiceConnection, key: string): string | undefined =>
  connection.fields.find((field) => field.key === key)?.value;

/** Connectors by connection id, each rebuilt when its connection changed. */
type ConnectorCache<T> = Map<string, { readonly updatedAt: string; readonly connector: T }>;

function cachedFor<T>(cache: ConnectorCache<T>, connection: PaymentServiceConnection, create: () => T): T {
  const cached = cache.get(connection.id);
  if (cached && cached.updatedAt === connection.updatedAt) return cached.connector;
  const connector = create();
  cache.set(connection.id, { updatedAt: connection.updatedAt, connector });
  return connector;
}

const noConnector = (connection: PaymentServiceConnection, kind: string): ApiError =>
  ApiError.badGateway(new Error(`no ${kind} for payment service definition ${connection.paymentServiceDefinitionId}`));

export class ProviderConnectors {
  private readonly cache: ConnectorCache<Connector> = new Map();
  private readonly giftCardCache: ConnectorCache<GiftCardConnector> = new Map();

  /** @param forwarding every card connector calls its provider through it (a card reaches connectors as aliases). */
  constructor(
    private readonly settings: ProviderSettings,
    private readonly forwarding: CardForwarding,
  ) {}

  /** The gateway's address as providers and buyers' browsers reach it, without a trailing slash. */
  publicBaseUrl(): string {
    return this.settings.publicBaseUrl().replace(/\/$/, '');
  }

  notificationUrl(paymentServiceId: string): string {
    return `${this.publicBaseUrl()}/payment-services/${paymentServiceId}/notifications`;
  }

  /** The connector of a connection, rebuilt when the connection changed. */
  connectorFor(connection: PaymentServiceConnection): Connector {
    return cachedFor(this.cache, connection, () => {
      const definition = connectorRegistry.get(connection.paymentServiceDefinitionId);
      if (!definition) throw noConnector(connection, 'connector');
      const config = this.configFor(connection) as { fetch?: ProviderFetch };
      // Every call of the connector goes through the forwarder: only the definition's hosts can be reached.
      const forwarded = {
        ...config,
        fetch: this.forwarding.fetchFor(connection.merchantAccountId, definition.hosts(config as never)),
      };
      return tracedConnector(definition.create(forwarded as never), connection.id);
    });
  }

  /** The gift card connector of a gift card service connection, rebuilt when the connection changed. */
  giftCardConnectorFor(connection: PaymentServiceConnection): GiftCardConnector {
    return cachedFor(this.giftCardCache, connection, () => {
      const definition = giftCardServiceRegistry.get(connection.paymentServiceDefinitionId);
      if (!definition) throw noConnector(connection, 'gift card service');
      return definition.create(this.giftCardConfigFor(connection) as never);
    });
  }

  private configFor(connection: PaymentServiceConnection): unknown {
    switch (connection.paymentServiceDefinitionId) {
      // The card simulator and its PayPal-like wallet are one simulator: the same configuration.
      case 'mock-card':
      case 'mock-paypal': {
        const config: MockCardConfig = {
          ...this.simulatorConfig(connection),
          webhookSecret: this.simulator().webhookSecret,
          notificationUrl: this.notificationUrl(connection.id),
          capabilities: connection.effectiveCapabilities,
        };
        return config;
      }
      // Real providers: everything comes from the connection's own fields (docs/connectors/).
      case 'adyen-card': {
        const config: AdyenConfig = {
          apiKey: requiredField(connection, 'api_key'),
          merchantAccount: requiredField(connection, 'merchant_account'),
          hmacKey: requiredField(connection, 'hmac_key'),
          ...optionalField(connection, 'live_endpoint_url_prefix', 'liveEndpointUrlPrefix'),
          ...optionalField(connection, 'api_base_url', 'apiBaseUrl'),
          returnUrl: this.publicBaseUrl(),
          capabilities: connection.effectiveCapabilities,
          ...(this.settings.providerTimeoutMs !== undefined ? { timeoutMs: this.settings.providerTimeoutMs } : {}),
        };
        return config;
      }
      case 'stripe-card': {
        const config: StripeConfig = {
          secretKey: requiredField(connection, 'secret_key'),
          webhookSecret: requiredField(connection, 'webhook_secret'),
          ...optionalField(connection, 'api_base_url', 'apiBaseUrl'),
          capabilities: connection.effectiveCapabilities,
          ...(this.settings.providerTimeoutMs !== undefined ? { timeoutMs: this.settings.providerTimeoutMs } : {}),
        };
        return config;
      }
      default:
        throw unconfigured(connection);
    }
  }

  private giftCardConfigFor(connection: PaymentServiceConnection): unknown {
    switch (connection.paymentServiceDefinitionId) {
      // The gift card routes live in the same simulator process as the card ones.
      case 'mock-gift-card':
        return this.simulatorConfig(connection) satisfies MockGiftCardConfig;
      default:
        throw unconfigured(connection);
    }
  }

  /** Where the simulator is and who the connection is to it: merchant id = field `merchant_id`, else the account. */
  private simulatorConfig(connection: PaymentServiceConnection): MockGiftCardConfig {
    const simulator = this.simulator();
    return {
      baseUrl: simulator.baseUrl,
      merchantId: fieldOf(connection, 'merchant_id') ?? connection.merchantAccountId,
      ...(simulator.timeoutMs !== undefined ? { timeoutMs: simulator.timeoutMs } : {}),
    };
  }

  private simulator(): NonNullable<ProviderSettings['mockCard']> {
    const mockCard = this.settings.mockCard;
    if (!mockCard)
      throw ApiError.badGateway(
        new Error('the mock-card simulator is not configured (MOCK_CARD_URL, MOCK_CARD_WEBHOOK_SECRET)'),
      );
    return mockCard;
  }
}

/** A required field the decider made sure of at creation; its absence means the connection cannot be used. */
function requiredField(connection: PaymentServiceConnection, key: string): string {
  const value = fieldOf(connection, key);
  if (!value) throw ApiError.badGateway(new Error(`payment service ${connection.id} has no ${key}`));
  return value;
}

/** An optional field as a config property, absent when the connection leaves it empty. */
const optionalField = <K extends string>(
  connection: PaymentServiceConnection,
  key: string,
  property: K,
): Partial<Record<K, string>> => {
  const value = fieldOf(connection, key);
  return value ? ({ [property]: value } as Partial<Record<K, string>>) : {};
};

const unconfigured = (connection: PaymentServiceConnection): ApiError =>
  ApiError.badGateway(
    new Error(`payment service definition ${connection.paymentServiceDefinitionId} has no configuration`),
  );
