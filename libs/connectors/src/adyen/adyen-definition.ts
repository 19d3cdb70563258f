import type { ConnectorCapabilities } from '../connector';
import type { ConnectorDefinition } from '../connector-registry';
import { hostOf } from '../provider-fetch';
import { AdyenConnector, adyenCheckoutBaseUrl, type AdyenConfig } from './adyen-connector';

/**
 * What Adyen's card processing does (docs/connectors/adyen.md): several partial captures, pre-authorisations that
 * can be adjusted, network tokens with their cryptogram, external 3-D Secure, manual capture, refunds that settle by
 * notification. Shipment tracking is not forwarded (it is kept with the capture).
 */
export const adyenCardCapabilities: ConnectorCapabilities = {
  multipleCaptures: true,
  incrementalAuthorization: true,
  networkTokens: true,
  trackingForwarding: false,
  asynchronousRefundSettlement: true,
  threeDSecure: true,
  delayedCapture: true,
};

export const adyenCardDefinition: ConnectorDefinition<AdyenConfig> = {
  id: 'adyen-card',
  displayName: 'Adyen (cards)',
  capabilities: adyenCardCapabilities,
  hosts: (config) => [hostOf(adyenCheckoutBaseUrl(config))],
  // Test, and live under the merchant's prefix (adyenCheckoutBaseUrl).
  providerHosts: ['checkout-test.adyen.com', '*-checkout-live.adyenpayments.com'],
  create: (config) => new AdyenConnector(config, adyenCardDefinition),
};
