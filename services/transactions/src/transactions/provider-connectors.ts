/**
 * From a connection (a payment service row) to the Connector that talks to its provider: the connection's fields,
 * its capability switches, and the service-level provider settings (where the provider lives, the shared webhook
 * secret, where it sends notifications). A new provider adds one entry to `configFor`.
 */
import { ApiError } from '@switchyard/api';
import { connectorRegistry, type Connector, type MockCardConfig } from '@switchyard/connectors';
import type { PaymentServiceConnection } from '../payment-services/payment-services.slice';

export interface ProviderSettings {
  /** The gateway's address as providers reach it; notifications go to `<base>/payment-services/<id>/notifications`. */
  readonly publicBaseUrl: () => string;
  readonly mockCard?: { readonly baseUrl: string; readonly webhookSecret: string; readonly timeoutMs?: number };
}

const fieldOf = (connection: PaymentServiceConnection, key: string): string | undefined => connection.fields.find((field) => field.key === key)?.value;

export class ProviderConnectors {
  private readonly cache = new Map<string, { readonly updatedAt: string; readonly connector: Connector }>();

  constructor(private readonly settings: ProviderSettings) {}

  /** The gateway's address as providers and buyers' browsers reach it, without a trailing slash. */
  publicBaseUrl(): string {
    return this.settings.publicBaseUrl().replace(/\/$/, '');
  }

  notificationUrl(paymentServiceId: string): string {
    return `${this.publicBaseUrl()}/payment-services/${paymentServiceId}/notifications`;
  }

  /** The connector of a connection, rebuilt when the connection changed. */
  connectorFor(connection: PaymentServiceConnection): Connector {
    const cached = this.cache.get(connection.id);
    if (cached && cached.updatedAt === connection.updatedAt) return cached.connector;
    const definition = connectorRegistry.get(connection.paymentServiceDefinitionId);
    if (!definition) throw ApiError.badGateway(new Error(`no connector for payment service definition ${connection.paymentServiceDefinitionId}`));
    const connector = definition.create(this.configFor(connection) as never);
    this.cache.set(connection.id, { updatedAt: connection.updatedAt, connector });
    return connector;
  }

  private configFor(connection: PaymentServiceConnection): unknown {
    switch (connection.paymentServiceDefinitionId) {
      // The card simulator and its PayPal-like wallet are one simulator: the same configuration.
      case 'mock-card':
      case 'mock-paypal': {
        const mockCard = this.settings.mockCard;
        if (!mockCard) throw ApiError.badGateway(new Error('the mock-card simulator is not configured (MOCK_CARD_URL, MOCK_CARD_WEBHOOK_SECRET)'));
        const config: MockCardConfig = {
          baseUrl: mockCard.baseUrl,
          webhookSecret: mockCard.webhookSecret,
          merchantId: fieldOf(connection, 'merchant_id') ?? connection.merchantAccountId,
          notificationUrl: this.notificationUrl(connection.id),
          capabilities: connection.effectiveCapabilities,
          ...(mockCard.timeoutMs !== undefined ? { timeoutMs: mockCard.timeoutMs } : {}),
        };
        return config;
      }
      default:
        throw ApiError.badGateway(new Error(`payment service definition ${connection.paymentServiceDefinitionId} has no configuration`));
    }
  }
}
