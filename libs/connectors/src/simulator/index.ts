/**
 * The mock-card simulator (`npm run start:simulator`, or in process in the embedded runtime) and its tables of test
 * card numbers, apart from `@switchyard/connectors`: a service that only calls providers (the simulator among them)
 * imports that index and never loads these numbers.
 */
export { accountUpdaterExamplePans } from './simulator-account-updater-values';
export {
  startSimulator,
  type NotificationDelivery,
  type RunningSimulator,
  type SettlementFile,
  type SimulatorOptions,
} from './simulator-server';
export type { LedgerCounts } from './simulator-ledger';
export * as simulatorValues from './simulator-values';
