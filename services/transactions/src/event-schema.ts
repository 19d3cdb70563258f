/**
 * The transactions service's one registry of event schema versions (issue 22, item 14; `EventUpcasters` in
 * `@switchyard/eventstore`): the service host reads through it (decider, projections, time travel) and so does its
 * relay. An event type's version is 1 + the number of its upcasters.
 */
import { EventUpcasters } from '@switchyard/eventstore';
import { transactionCreatedV1toV2 } from './transactions/transaction-upcasters';

export const transactionsUpcasters = new EventUpcasters().register('TransactionCreated', 1, transactionCreatedV1toV2);
