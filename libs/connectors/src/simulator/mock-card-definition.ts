import { hostOf } from '../provider-fetch';
import type { ConnectorCapabilities } from '../connector';
import type { ConnectorDefinition } from '../connector-registry';
import { MockCardConnector, type MockCardConfig } from './mock-card-connector';

export const mockCardCapabilities: ConnectorCapabilities = {
  multipleCaptures: true,
  incrementalAuthorization: true,
  networkTokens: true,
  trackingForwarding: true,
  asynchronousRefundSettlement: true,
  threeDSecure: true,
  delayedCapture: true,
};

/** The sandbox card simulator as a payment service definition (Gr4vy's `mock-card`). */
export const mockCardDefinition: ConnectorDefinition<MockCardConfig> = {
  id: 'mock-card',
  displayName: 'Card simulator',
  capabilities: mockCardCapabilities,
  hosts: (config) => [hostOf(config.baseUrl)],
  create: (config) => new MockCardConnector(config, mockCardDefinition),
};
