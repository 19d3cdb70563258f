/**
 * What a refused request must not change: every service's event store (identity, transactions, vault, gift cards, webhooks), the
 * tables the services write directly rather than from events (the card and gift card vaults, applied provider
 * notifications), compared by content, and the simulator's ledgers: the card provider's, and the gift card provider's
 * for every gift card number the fixtures and the fuzz use. Read through separate read-only SQLite connections.
 *
 * Left out on purpose: `ApiKeyPairUsed` (the gateway records that a key was used, refused request or not: spec,
 * `last_used_at`), read models and checkpoints (derived from the events), and `idempotency_keys`, which keeps a 4xx
 * answer for replay by design; it is counted apart.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { RunningSimulator } from '@switchyard/connectors/src/simulator';

const SERVICES = ['identity', 'transactions', 'vault', 'gift-cards', 'webhooks'] as const;
const DIRECT_TABLES: Readonly<Record<string, readonly string[]>> = {
  transactions: ['provider_notifications'],
  vault: ['vault_cards', 'vault_data_keys', 'checkout_session_secrets'],
  'gift-cards': ['vault_gift_cards'],
};
const IGNORED_EVENT_TYPES = ['ApiKeyPairUsed'];
/**
 * What the transactions service's timer and hooks append later as the continuation of an ACCEPTED request (an
 * account updater job answered 201, a method stored with 201): it can land while a later batch of refusals runs, and
 * no refused request ever appends it. Automatic network token provisioning likewise (an API provisioning stays counted).
 */
const FOLLOW_UPS = `NOT (type IN ('AccountUpdaterJobSubmitted', 'AccountUpdaterInquiryCompleted', 'AccountUpdaterJobCompleted', 'PaymentMethodAccountUpdated', 'PaymentMethodVaultTokenTimedOut')
  OR (type IN ('NetworkTokenProvisioned', 'NetworkTokenProvisionFailed') AND json_extract(data, '$.trigger') = 'automatic'))`;

export interface StateSnapshot {
  /** Last event position per service. */
  readonly positions: Readonly<Record<string, number>>;
  /** Row count and a digest of every row of the directly written tables, `service.table`: `n rows, sha256`. */
  readonly rows: Readonly<Record<string, string>>;
  /** The simulator's ledger: transactions, captures, refunds and their statuses. */
  readonly provider: string;
  /** Idempotency records (not a refusal's state change; reported). */
  readonly idempotencyRecords: number;
}

export interface StateChange {
  readonly what: string;
  readonly detail: string;
}

export class StateProbe {
  private readonly dbs = new Map<string, Database.Database>();

  constructor(
    dataDir: string,
    private readonly simulator: RunningSimulator,
    /** The gift card numbers whose provider ledger counts (the provider keeps no list of its own to read). */
    private readonly giftCardNumbers: () => readonly string[] = () => [],
  ) {
    for (const service of SERVICES) {
      const db = new Database(path.join(dataDir, `${service}.db`), { readonly: true, fileMustExist: true });
      db.pragma('busy_timeout = 5000');
      this.dbs.set(service, db);
    }
  }

  snapshot(): StateSnapshot {
    const positions: Record<string, number> = {};
    const rows: Record<string, string> = {};
    let idempotencyRecords = 0;
    for (const [service, db] of this.dbs) {
      positions[service] = (db.prepare('SELECT coalesce(max(position), 0) AS p FROM events').get() as { p: number }).p;
      for (const table of DIRECT_TABLES[service] ?? []) rows[`${service}.${table}`] = tableContent(db, table);
      if (service === 'transactions' || service === 'gift-cards')
        idempotencyRecords += (db.prepare('SELECT count(*) AS n FROM idempotency_keys').get() as { n: number }).n;
    }
    return { positions, rows, provider: this.providerFingerprint(), idempotencyRecords };
  }

  /** Every change from `before` to `after` that counts (events other than key usage, direct rows, the provider). */
  changes(before: StateSnapshot, after: StateSnapshot): StateChange[] {
    const changes: StateChange[] = [];
    for (const [service, db] of this.dbs) {
      const from = before.positions[service] ?? 0;
      const to = after.positions[service] ?? 0;
      if (to === from) continue;
      const events = db
        .prepare(
          `SELECT stream_id AS stream, type FROM events WHERE position > ? AND position <= ? AND type NOT IN (${IGNORED_EVENT_TYPES.map(() => '?').join(', ')}) AND ${FOLLOW_UPS} ORDER BY position`,
        )
        .all(from, to, ...IGNORED_EVENT_TYPES) as { stream: string; type: string }[];
      for (const event of events)
        changes.push({ what: `${service} event`, detail: `${event.type} on ${event.stream}` });
    }
    for (const [table, content] of Object.entries(after.rows)) {
      const previous = before.rows[table] ?? 'absent';
      if (content !== previous) changes.push({ what: `${table} rows`, detail: `${previous} → ${content}` });
    }
    if (after.provider !== before.provider)
      changes.push({ what: 'provider ledger', detail: `${before.provider} → ${after.provider}` });
    return changes;
  }

  close(): void {
    for (const db of this.dbs.values()) db.close();
  }

  private providerFingerprint(): string {
    let captures = 0;
    let refunds = 0;
    const statuses = new Map<string, number>();
    const all = this.simulator.ledger.all();
    for (const t of all) {
      captures += t.captures.length;
      refunds += t.refunds.length;
      statuses.set(t.status, (statuses.get(t.status) ?? 0) + 1);
    }
    const giftCards = createHash('sha256');
    for (const number of [...new Set(this.giftCardNumbers())].sort())
      giftCards.update(`${number}:${JSON.stringify(this.simulator.giftCard(number) ?? null)}\n`);
    const cards = createHash('sha256').update(JSON.stringify(all)).digest('hex').slice(0, 16);
    return (
      `${all.length} transactions, ${captures} captures, ${refunds} refunds, ${[...statuses]
        .sort()
        .map(([s, n]) => `${s}:${n}`)
        .join(' ')}, ` + `card ledger ${cards}, gift card ledger ${giftCards.digest('hex').slice(0, 16)}`
    );
  }
}

/** `n rows, <digest>` of every row of a table in rowid order: an update in place changes it, not only an insert. */
function tableContent(db: Database.Database, table: string): string {
  const digest = createHash('sha256');
  let count = 0;
  for (const row of db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).iterate()) {
    count += 1;
    digest.update(
      JSON.stringify(row, (_key, value: unknown) => (Buffer.isBuffer(value) ? value.toString('base64') : value)),
    );
    digest.update('\n');
  }
  return `${count} rows, ${digest.digest('hex').slice(0, 16)}`;
}
