import type { MessageBus } from '@switchyard/bus';
import { transactionsTopic } from '@switchyard/contracts';
import { withoutStreams, withUpcasting, type EventStore, type RecordedEvent } from '@switchyard/eventstore';
import { Relay, SqliteCheckpointStore, type ServiceStorage } from '@switchyard/readmodel';
import { transactionsUpcasters } from './event-schema';
import { transactionEventNames } from './transactions/transaction-names';
import { TRANSACTIONS_MOVED_STREAMS } from './transactions-service';

/**
 * The transactions service's events, from its store to `transactions.events`, checkpointed in its local SQLite; read
 * through the service's schema registry, so the topic carries every event in its current shape.
 */
export const transactionsRelay = (
  storage: ServiceStorage,
  bus: MessageBus,
  options: { pollIntervalMs: number; onError: (error: unknown) => void },
): Relay => {
  // Stored gift cards are the gift cards service's (`gift-cards.events`), the vault's streams the vault's
  // (`vault.events`), also those an older release wrote here.
  const store = withUpcasting(withoutStreams(storage.store, TRANSACTIONS_MOVED_STREAMS), transactionsUpcasters);
  const owners = new TransactionOwners(store);
  return new Relay({
    store,
    bus,
    topic: transactionsTopic,
    checkpoints: new SqliteCheckpointStore(storage.db, { deferSync: true }),
    pollIntervalMs: options.pollIntervalMs,
    onError: options.onError,
    nameOf: transactionEventNames,
    merchantAccountOf: (event) => owners.of(event),
  });
};

const TRANSACTION_STREAM_PREFIX = 'transaction-';

const merchantAccountIn = (data: unknown): string | null => {
  const id = (data as { merchantAccountId?: unknown } | null)?.merchantAccountId;
  return typeof id === 'string' && id !== '' ? id : null;
};

/**
 * Whose transaction each event is, for its message (`EventMessage.merchant_account_id`): learned from the
 * transaction's `TransactionCreated` as it goes by, else (a transaction created before this process started, or
 * forgotten since) read from that first event of its stream. So the webhooks service needs no row of its own, written
 * and synced per transaction, to tell whose a later event is.
 */
export class TransactionOwners {
  private readonly known = new Map<string, string>();

  constructor(
    private readonly store: Pick<EventStore, 'readStream'>,
    /** Transactions remembered at most; the oldest learned is forgotten first (it costs one read if asked again). */
    private readonly limit = 10_000,
  ) {}

  async of(event: RecordedEvent): Promise<string | null> {
    if (!event.streamId.startsWith(TRANSACTION_STREAM_PREFIX)) return null;
    const known = this.known.get(event.streamId);
    if (known) return known;
    const created =
      event.type === 'TransactionCreated' ? event : (await this.store.readStream(event.streamId, { maxCount: 1 }))[0];
    const owner = created?.type === 'TransactionCreated' ? merchantAccountIn(created.data) : null;
    if (owner) this.remember(event.streamId, owner);
    return owner;
  }

  private remember(streamId: string, owner: string): void {
    this.known.set(streamId, owner);
    if (this.known.size <= this.limit) return;
    const oldest = this.known.keys().next();
    if (!oldest.done) this.known.delete(oldest.value);
  }
}
