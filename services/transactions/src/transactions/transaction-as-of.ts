/**
 * Time travel: the transaction as it stood at a moment (`GET /transactions/{id}?as_of=`), folded from the events of
 * its stream recorded at or before that moment by the read model's own `evolveView` — so a view of the past is
 * built exactly as the current one was, and renders through the same `toTransaction`.
 */
import { asDomainEvent } from '@switchyard/decider';
import type { RecordedEvent } from '@switchyard/eventstore';
import type { TransactionEvent } from './transaction';
import { evolveView, type TransactionView } from './transactions.read-model';

/**
 * The view after every event recorded at or before `at` (ms since the epoch); undefined when the transaction did
 * not exist yet. The stream is read as a prefix: the first event recorded later ends it, so the answer is always a
 * state the transaction really went through.
 */
export function transactionViewAsOf(events: readonly RecordedEvent[], at: number): TransactionView | undefined {
  let view: TransactionView | undefined;
  for (const event of events) {
    if (Date.parse(event.recordedAt) > at) break;
    view = evolveView(view, asDomainEvent<TransactionEvent>(event));
  }
  return view;
}
