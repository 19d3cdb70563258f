import type { ConnectorCapabilities } from '../connector';
import type { ConnectorDefinition } from '../connector-registry';
import { hostOf } from '../provider-fetch';
import { StripeConnector, stripeApiBaseUrl, type StripeConfig } from './stripe-connector';

/**
 * What Stripe's card PaymentIntents do (docs/connectors/stripe.md): several partial captures and incremental
 * authorization where the account has them (`if_available`; a connection without them turns the capability off),
 * external 3-D Secure, manual capture, refunds that may settle by event. Network tokens with a cryptogram are not
 * in the PaymentIntents parameters; shipment tracking is not forwarded.
 */
export const stripeCardCapabilities: ConnectorCapabilities = {
  multipleCaptures: true,
  incrementalAuthorization: true,
  networkTokens: false,
  trackingForwarding: false,
  asynchronousRefundSettlement: true,
  threeDSecure: true,
  delayedCapture: true,
};

export const stripeCardDefinition: ConnectorDefinition<StripeConfig> = {
  id: 'stripe-card',
  displayName: 'Stripe (cards)',
  capabilities: stripeCardCapabilities,
  hosts: (config) => [hostOf(stripeApiBaseUrl(config))],
  providerHosts: ['api.stripe.com'],
  create: (config) => new StripeConnector(config, stripeCardDefinition),
};
