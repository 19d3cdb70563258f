import { hostOf } from '../provider-fetch';
import type { ConnectorCapabilities } from '../connector';
import type { ConnectorDefinition } from '../connector-registry';
import { MockCardConnector, type MockCardConfig } from './mock-card-connector';

/** A redirect wallet authorizes once and captures later, nothing more. */
export const mockPaypalCapabilities: ConnectorCapabilities = {
  multipleCaptures: false,
  incrementalAuthorization: false,
  networkTokens: false,
  trackingForwarding: false,
  asynchronousRefundSettlement: false,
  threeDSecure: false,
  delayedCapture: true,
};

/**
 * The simulator's redirect wallet (method `paypal`): the buyer approves on the simulator's page, and the final
 * status arrives by notification. Same simulator and connector class as `mock-card` (docs/simulator.md).
 */
export const mockPaypalDefinition: ConnectorDefinition<MockCardConfig> = {
  id: 'mock-paypal',
  displayName: 'PayPal simulator',
  capabilities: mockPaypalCapabilities,
  hosts: (config) => [hostOf(config.baseUrl)],
  create: (config) => new MockCardConnector(config, mockPaypalDefinition),
};
