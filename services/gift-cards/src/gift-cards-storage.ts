/**
 * The gift cards service's storage (`gift-cards` in `DATA_DIR`: `gift-cards.db`, or `gift-cards-read.db` beside
 * EventStoreDB), and the move of what release 0.1.0 kept of gift cards in the transactions service's file.
 *
 * Until this service existed, stored gift cards were streams (`gift-card-<uuid>`) of the transactions store, their
 * number/PIN ciphertexts rows of its `vault_gift_cards` table, and the Idempotency-Keys of issue and activate rows of
 * its `idempotency_keys`. The first start copies all three into this service's file
 * (`migrateStreams`: one transaction, recorded as `gift-cards-from-transactions`, so a crash leaves nothing half
 * done and later starts copy nothing); the transactions service then reads its store without those streams
 * (`withoutStreams`, `GIFT_CARD_STREAM_PREFIXES`). With EventStoreDB the streams stay where they are (one server
 * for all services) and only the table moves, from `transactions-read.db`.
 */
import path from 'node:path';
import { migrateStreams, type StreamMigrationResult } from '@switchyard/eventstore';
import { GIFT_CARD_STREAM_PREFIXES } from '@switchyard/contracts';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { idempotencyOperations } from './gift-cards/gift-cards.slice';

export const GIFT_CARDS_MIGRATION = 'gift-cards-from-transactions';

export interface GiftCardsStorage extends ServiceStorage {
  /** What the first start moved; `ran: false` on every later start. */
  readonly migration: StreamMigrationResult;
}

export function openGiftCardsStorage(options: { dataDir: string; eventStoreUrl?: string | undefined }): GiftCardsStorage {
  const storage = openServiceStorage('gift-cards', options);
  try {
    const migration = migrateStreams({
      name: GIFT_CARDS_MIGRATION,
      sourcePath: path.join(options.dataDir, options.eventStoreUrl ? 'transactions-read.db' : 'transactions.db'),
      target: storage.db,
      streamPrefixes: GIFT_CARD_STREAM_PREFIXES,
      // The stored cards' ciphertexts, and the Idempotency-Keys of issue and activate (an issued card's answer sealed).
      tables: ['vault_gift_cards', { name: 'idempotency_keys', where: `operation IN ('${idempotencyOperations.issue}', '${idempotencyOperations.activate}')` }],
    });
    return { ...storage, migration };
  } catch (error) {
    void storage.close();
    throw error;
  }
}
