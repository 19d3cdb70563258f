export { eventStoreContract } from './event-store.contract';
export type { EventStoreContractOptions } from './contract-support';
