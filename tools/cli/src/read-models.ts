/**
 * `read-models rebuild <service> [<name>]`: rebuilds read models from the service's events while the service runs.
 *
 * 1. The service's slices are made on a scratch SQLite file beside the live one (`<service>.rebuild-<pid>.db`) and
 *    the chosen projections replay the whole log into it (progress on stderr).
 * 2. Swap, in one write transaction on the live file: if the live projections have got ahead of the scratch
 *    (events appended meanwhile), the lock is given back, the scratch catches up, and the swap is tried again;
 *    otherwise each table of the chosen read models is replaced by the scratch's rows and each checkpoint
 *    `projection:<name>` is set to the scratch's. A running server's projector re-reads its checkpoints before every
 *    batch, so it goes on from there (libs/readmodel/src/projection.ts); its requests wait for the lock at most as
 *    long as the copy takes (they give up after 5 s: docs/operations.md gives the measured time per row).
 * 3. The scratch file is deleted.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { InProcessMessageBus } from '@switchyard/bus';
import type { Settings } from '@switchyard/config';
import type { EventStore, ReadAllOptions, RecordedEvent } from '@switchyard/eventstore';
import { IdentityService } from '@switchyard/identity';
import { openServiceStorage, Projector, SqliteCheckpointStore, type Projection } from '@switchyard/readmodel';
import { InProcessRpc } from '@switchyard/rpc';
import { TransactionsService } from '@switchyard/transactions';
import { GiftCardsService } from '@switchyard/gift-cards';
import { VaultService } from '@switchyard/vault';
import { randomBytes } from 'node:crypto';
import { WebhooksService } from '@switchyard/webhooks';

/** Every read model of each service and the tables it owns (what a rebuild replaces). */
export const readModelTables: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  identity: {
    users: ['users', 'user_passwords'],
    'api-key-pairs': ['api_key_pairs'],
    'merchant-accounts-v4': ['merchant_accounts_v4'],
    'three-ds-configurations': ['three_ds_configurations'],
  },
  transactions: {
    'payment-services': ['payment_services'],
    'flow-rules': ['flow_rules'],
    transactions: [
      'transactions',
      'transaction_history',
      'transaction_refunds',
      'transaction_create_holds',
      'transaction_gift_card_processes',
      'transaction_open_operations',
    ],
    'authorization-stats': ['authorization_attempts'],
  },
  // A stored method's usage (`payment_method_usage`) is folded from the transactions store, not from this one: not here.
  vault: {
    'payment-methods': ['payment_methods'],
    'checkout-sessions': ['checkout_sessions'],
    buyers: ['buyers', 'buyer_shipping_details'],
    'account-updater': ['account_updater_jobs', 'account_updater_inquiries'],
    'digital-wallets': ['digital_wallets'],
    'network-tokens': ['network_tokens'],
  },
  webhooks: {
    'webhook-subscriptions': ['webhook_subscriptions', 'webhook_secrets'],
  },
  // The stored cards' usage (`gift_card_usage`) is folded from the transactions store, not from this one: not here.
  'gift-cards': {
    'gift-cards': ['gift_cards'],
  },
};

/** The projections of a service made on `db` (its slices' `projection`s), by name. */
export function projectionsOf(service: string, store: EventStore, db: Database.Database): Map<string, Projection> {
  let instance: object;
  if (service === 'identity') instance = new IdentityService({ store, db });
  // Keys are not needed to fold events: a vault of a random key beside the transactions service (nothing is sealed).
  else if (service === 'transactions')
    instance = new TransactionsService({ store, db, vault: new VaultService({ store, db: new Database(':memory:') }) });
  else if (service === 'vault') instance = new VaultService({ store, db }).slices;
  // Keys and gift card services are not needed to fold events: random keys, no services (nothing is sealed or asked).
  else if (service === 'gift-cards')
    instance = {
      giftCards: new GiftCardsService({
        store,
        db,
        key: randomBytes(32),
        fingerprintKey: randomBytes(32),
        services: {
          activeGiftCardService: async () => null,
          serviceRef: async () => null,
          giftCardService: async () => null,
        },
      }).giftCards,
    };
  else if (service === 'webhooks')
    instance = new WebhooksService({
      store,
      db,
      bus: new InProcessMessageBus(),
      rpc: new InProcessRpc(() => undefined),
    });
  else throw new Error(`unknown service ${service}: identity, transactions, vault, gift-cards or webhooks`);
  const projections = new Map<string, Projection>();
  for (const slice of Object.values(instance)) {
    const projection = (slice as { projection?: Projection } | null)?.projection;
    if (projection && typeof projection.apply === 'function') projections.set(projection.name, projection);
  }
  return projections;
}

export interface RebuildOutcome {
  readonly service: string;
  readonly read_models: string[];
  readonly tables: Record<string, number>;
  readonly events_replayed: number;
  readonly checkpoint: string | null;
  readonly swap_attempts: number;
  readonly swap_ms: number;
  readonly total_ms: number;
}

/** Counts what the projector reads, for the progress line. */
function countingStore(store: EventStore, onRead: (events: number) => void): EventStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'readAll') {
        return async (options?: ReadAllOptions): Promise<RecordedEvent[]> => {
          const events = await target.readAll(options);
          onRead(events.length);
          return events;
        };
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

export async function rebuildReadModels(
  settings: Settings,
  service: string,
  name: string | undefined,
  progress: (line: string) => void,
): Promise<RebuildOutcome> {
  const known = readModelTables[service];
  if (!known) throw new Error(`unknown service ${service}: ${Object.keys(readModelTables).join(', ')}`);
  if (name !== undefined && !known[name])
    throw new Error(`${service} has no read model ${name}: ${Object.keys(known).join(', ')}`);
  const names = name !== undefined ? [name] : Object.keys(known);
  const started = performance.now();
  // The gift cards and vault services keep their events in SQLite also in EventStoreDB mode (their storages).
  const storage = openServiceStorage(service, {
    dataDir: settings.dataDir,
    ...(service === 'gift-cards' || service === 'vault' ? {} : { eventStoreUrl: settings.EVENTSTORE_URL }),
  });
  const scratchFile = path.join(settings.dataDir, `${service}.rebuild-${process.pid}.db`);
  const scratch = new Database(scratchFile);
  // A scratch file, deleted afterwards: nothing in it needs to survive a crash.
  scratch.pragma('journal_mode = OFF');
  scratch.pragma('synchronous = OFF');
  let replayed = 0;
  let lastReport = 0;
  try {
    const store = countingStore(storage.store, (count) => {
      replayed += count;
      if (performance.now() - lastReport > 1_000) {
        lastReport = performance.now();
        progress(`${service}: ${replayed} events replayed into ${names.join(', ')}`);
      }
    });
    const all = projectionsOf(service, store, scratch);
    const missing = names.filter((candidate) => !all.has(candidate));
    if (missing.length > 0)
      throw new Error(
        `${service} does not make the read model(s) ${missing.join(', ')} (readModelTables is out of date)`,
      );
    const projector = new Projector(
      scratch,
      store,
      names.map((candidate) => all.get(candidate)!),
    );
    await projector.catchUp();
    progress(`${service}: ${replayed} events replayed; swapping`);

    const swap = await swapIn(storage.db, scratch, scratchFile, names, known, async () => {
      await projector.catchUp();
    });
    progress(
      `${service}: swapped in ${swap.ms.toFixed(0)} ms (${Object.entries(swap.rows)
        .map(([table, rows]) => `${table} ${rows}`)
        .join(', ')})`,
    );
    return {
      service,
      read_models: names,
      tables: swap.rows,
      events_replayed: replayed,
      checkpoint: swap.checkpoint,
      swap_attempts: swap.attempts,
      swap_ms: Math.round(swap.ms),
      total_ms: Math.round(performance.now() - started),
    };
  } finally {
    scratch.close();
    fs.rmSync(scratchFile, { force: true });
    await storage.close();
  }
}

const MAX_SWAP_ATTEMPTS = 20;

/**
 * Replaces the live tables with the scratch's once the scratch is at least as far as every live projection it
 * replaces; until then the scratch catches up (`catchUp`) and the swap is tried again.
 */
async function swapIn(
  live: Database.Database,
  scratch: Database.Database,
  scratchFile: string,
  names: readonly string[],
  known: Readonly<Record<string, readonly string[]>>,
  catchUp: () => Promise<void>,
): Promise<{ rows: Record<string, number>; checkpoint: string | null; attempts: number; ms: number }> {
  const scratchCheckpoints = new SqliteCheckpointStore(scratch);
  const liveCheckpoints = new SqliteCheckpointStore(live);
  live.prepare('ATTACH DATABASE ? AS rebuild').run(scratchFile);
  try {
    for (let attempt = 1; attempt <= MAX_SWAP_ATTEMPTS; attempt += 1) {
      const at = scratchCheckpoints.load(`projection:${names[0]!}`);
      const swapStarted = performance.now();
      const outcome = live
        .transaction(() => {
          for (const projectionName of names) {
            if (isBehind(at, liveCheckpoints.load(`projection:${projectionName}`))) return null;
          }
          const rows: Record<string, number> = {};
          for (const projectionName of names) {
            for (const table of known[projectionName]!) rows[table] = replaceTable(live, table);
            if (at !== undefined) liveCheckpoints.save(`projection:${projectionName}`, at);
            else live.prepare('DELETE FROM checkpoints WHERE name = ?').run(`projection:${projectionName}`);
          }
          return rows;
        })
        .immediate();
      if (outcome)
        return { rows: outcome, checkpoint: at ?? null, attempts: attempt, ms: performance.now() - swapStarted };
      await catchUp();
    }
  } finally {
    live.exec('DETACH DATABASE rebuild');
  }
  throw new Error(`the live read models kept getting ahead of the rebuild (${MAX_SWAP_ATTEMPTS} tries); try again`);
}

/**
 * Whether the scratch (at `scratch`) is behind a live checkpoint. Positions are the store's: numbers in SQLite mode,
 * `commit/prepare` pairs of numbers with EventStoreDB; both compare as numbers, part by part.
 */
export function isBehind(scratch: string | undefined, live: string | undefined): boolean {
  if (live === undefined) return false;
  if (scratch === undefined) return true;
  const [a, b] = [scratch, live].map((position) => position.split('/').map((part) => BigInt(part)));
  for (let index = 0; index < Math.max(a!.length, b!.length); index += 1) {
    const [x, y] = [a![index] ?? 0n, b![index] ?? 0n];
    if (x !== y) return x < y;
  }
  return false;
}

/** The live table's rows replaced by the scratch's (the live table created first when it does not exist yet). */
function replaceTable(live: Database.Database, table: string): number {
  const exists = live.prepare("SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?").get(table);
  if (!exists) {
    const schema = live
      .prepare('SELECT sql FROM rebuild.sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL ORDER BY type DESC')
      .all(table) as Array<{ sql: string }>;
    for (const { sql } of schema) live.exec(sql);
  }
  const columns = (
    live.prepare(`SELECT name FROM pragma_table_info(?, 'rebuild')`).all(table) as Array<{ name: string }>
  )
    .map((column) => `"${column.name}"`)
    .join(', ');
  if (columns === '') throw new Error(`the rebuild made no table ${table}`);
  live.exec(`DELETE FROM main."${table}"`);
  return live.prepare(`INSERT INTO main."${table}" (${columns}) SELECT ${columns} FROM rebuild."${table}"`).run()
    .changes;
}
