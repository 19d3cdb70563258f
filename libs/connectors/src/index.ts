export * from './connector';
export * from './connector-errors';
export { ConnectorRegistry, effectiveCapabilities, type ConnectorDefinition } from './connector-registry';
export { MockCardConnector, mockCardCapabilities, type MockCardConfig } from './simulator/mock-card-connector';
export { mockCardDefinition } from './simulator/mock-card-definition';
export { signNotification, signatureHeader, eventIdHeader } from './simulator/notification-signature';
export {
  startSimulator,
  type NotificationDelivery,
  type RunningSimulator,
  type SettlementFile,
  type SimulatorOptions,
} from './simulator/simulator-server';
export type { LedgerCounts } from './simulator/simulator-ledger';
export * as simulatorValues from './simulator/simulator-values';

import { ConnectorRegistry } from './connector-registry';
import { mockCardDefinition } from './simulator/mock-card-definition';

/** Every provider Switchyard knows. A new provider: one folder exporting one definition, added here. */
export const connectorDefinitions = [mockCardDefinition] as const;

export const connectorRegistry = new ConnectorRegistry(connectorDefinitions);
