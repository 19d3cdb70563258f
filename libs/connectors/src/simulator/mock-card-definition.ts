import type { ConnectorDefinition } from '../connector-registry';
import { MockCardConnector, mockCardCapabilities, type MockCardConfig } from './mock-card-connector';

/** The sandbox card simulator as a payment service definition (Gr4vy's `mock-card`). */
export const mockCardDefinition: ConnectorDefinition<MockCardConfig> = {
  id: 'mock-card',
  displayName: 'Card simulator',
  capabilities: mockCardCapabilities,
  create: (config) => new MockCardConnector(config),
};
