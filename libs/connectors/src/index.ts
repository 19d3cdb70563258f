export * from './connector';
export * from './connector-errors';
export * from './provider-fetch';
export * from './three-d-secure';
export * from './gift-card';
export * from './network-tokens';
export * from './account-updater';
export { ConnectorRegistry, effectiveCapabilities, type ConnectorDefinition } from './connector-registry';
export { tracedConnector } from './provider-call-tracing';
export { MockCardConnector, type MockCardConfig } from './simulator/mock-card-connector';
export { mockCardCapabilities, mockCardDefinition } from './simulator/mock-card-definition';
export { mockPaypalCapabilities, mockPaypalDefinition } from './simulator/mock-paypal-definition';
export { MockGiftCardConnector, type MockGiftCardConfig } from './simulator/mock-gift-card-connector';
export { mockGiftCardDefinition } from './simulator/mock-gift-card-definition';
export { SimulatorDirectoryServer, type SimulatorDirectoryServerConfig } from './simulator/simulator-directory-server';
export {
  SimulatorTokenServiceProvider,
  type SimulatorTokenServiceProviderConfig,
} from './simulator/simulator-token-service-provider';
export {
  SimulatorAccountUpdaterService,
  type SimulatorAccountUpdaterConfig,
} from './simulator/simulator-account-updater-service';
export { signNotification, signatureHeader, eventIdHeader } from './simulator/notification-signature';
// The simulator itself (its server and its tables of test card numbers) is `@switchyard/connectors/simulator`: a process
// that only calls providers never loads those numbers (tests/data-protection/card-isolation.e2e.spec.ts scans heaps).
export { AdyenConnector, adyenCheckoutBaseUrl, type AdyenConfig } from './adyen/adyen-connector';
export { adyenCardCapabilities, adyenCardDefinition } from './adyen/adyen-definition';
export { StripeConnector, stripeApiBaseUrl, type StripeConfig } from './stripe/stripe-connector';
export { stripeCardCapabilities, stripeCardDefinition } from './stripe/stripe-definition';

import { adyenCardDefinition } from './adyen/adyen-definition';
import { ConnectorRegistry } from './connector-registry';
import { GiftCardServiceRegistry } from './gift-card';
import { mockCardDefinition } from './simulator/mock-card-definition';
import { mockGiftCardDefinition } from './simulator/mock-gift-card-definition';
import { mockPaypalDefinition } from './simulator/mock-paypal-definition';
import { stripeCardDefinition } from './stripe/stripe-definition';

/** Every provider Switchyard knows. A new provider: one folder exporting one definition, added here. */
export const connectorDefinitions = [
  mockCardDefinition,
  mockPaypalDefinition,
  adyenCardDefinition,
  stripeCardDefinition,
] as const;

export const connectorRegistry = new ConnectorRegistry(connectorDefinitions);

/** Every gift card service Switchyard knows; a connection of one is a payment service of method `gift-card`. */
export const giftCardServiceDefinitions = [mockGiftCardDefinition] as const;

export const giftCardServiceRegistry = new GiftCardServiceRegistry(giftCardServiceDefinitions);
