/**
 * Transactions as the API shows them, projected from `transaction-<uuid>` streams. Each row keeps the aggregate
 * state folded by the same `evolveTransaction` the rules use (so the read side can never compute a status the
 * write side would not), plus what the record shows beyond the money; columns carry what lists filter on.
 * The history of `GET /transactions/{id}/events` (each step with its explanation: who, which connection, which
 * rule, the provider's codes) and the refund index of `GET /refunds/{id}` live beside it. `evolveView` is also
 * the fold of `GET /transactions/{id}?as_of=` (`transaction-as-of.ts`).
 */
import type Database from 'better-sqlite3';
import { keysetPage, type Page, type PageQuery } from '@switchyard/api';
import type { TransactionListFilters } from '@switchyard/contracts';
import type { RecordedEvent } from '@switchyard/eventstore';
import type { Projection } from '@switchyard/readmodel';
import { asDomainEvent } from '@switchyard/decider';
import {
  evolveTransaction,
  type FlowActionRecord,
  type OperationDetails,
  type Transaction,
  type TransactionEvent,
} from './transaction';
import { explainEvent } from './transaction-explanation';
import { transactionListConditions, transactionListStatements } from './transaction-list-query';
import { historyName } from './transaction-names';

export interface OperationView {
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly details: OperationDetails;
  readonly reason: string | null;
  readonly errorCode: string | null;
  readonly rawResponseCode: string | null;
  readonly rawResponseDescription: string | null;
  readonly providerOperationId: string | null;
}

export interface TransactionView {
  readonly state: Transaction;
  readonly details: Readonly<Record<string, unknown>>;
  readonly externalIdentifier: string | null;
  readonly metadata: Readonly<Record<string, string>> | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly authorizedAt: string | null;
  readonly capturedAt: string | null;
  readonly voidedAt: string | null;
  readonly canceledAt: string | null;
  readonly rawResponseCode: string | null;
  readonly rawResponseDescription: string | null;
  readonly schemeTransactionId: string | null;
  /** The flow rules that matched at creation. */
  readonly flowActions: readonly FlowActionRecord[];
  /** Where the buyer is sent while the transaction waits for them (3-D Secure challenge or redirect method). */
  readonly approvalUrl?: string | null;
  readonly approvalExpiresAt?: string | null;
  readonly buyerApprovalTimedOutAt?: string | null;
  readonly captures: Readonly<Record<string, OperationView>>;
  readonly refunds: Readonly<Record<string, OperationView>>;
}

export interface HistoryEntry {
  readonly id: string;
  readonly name: string;
  readonly createdAt: string;
  readonly context: Readonly<Record<string, unknown>>;
}

interface TransactionRecord {
  id: string;
  view: string;
}

type ListedRow = TransactionRecord & { sort_key: string };

interface ListStatements {
  readonly newest: Database.Statement<Record<string, unknown>, ListedRow>;
  readonly older: Database.Statement<Record<string, unknown>, ListedRow>;
  readonly newer: Database.Statement<Record<string, unknown>, ListedRow>;
}

interface HistoryRow {
  revision: number;
  event_id: string;
  name: string;
  created_at: string;
  context: string;
}

/** Distinct list WHERE clauses whose statements stay prepared. */
const MAX_LIST_CLAUSES = 64;

const TRANSACTION_PREFIX = 'transaction-';

const newOperation = (at: string, details: OperationDetails | undefined, reason?: string): OperationView => ({
  createdAt: at,
  updatedAt: at,
  details: details ?? {},
  reason: reason ?? null,
  errorCode: null,
  rawResponseCode: null,
  rawResponseDescription: null,
  providerOperationId: null,
});

type EventData = Record<string, unknown> & { at: string };

const settle = (operation: OperationView | undefined, data: EventData): OperationView | undefined =>
  operation && {
    ...operation,
    updatedAt: data.at,
    errorCode: (data.errorCode as string | undefined) ?? operation.errorCode,
    rawResponseCode: (data.rawResponseCode as string | undefined) ?? operation.rawResponseCode,
    rawResponseDescription: (data.rawResponseDescription as string | undefined) ?? operation.rawResponseDescription,
    providerOperationId: (data.providerOperationId as string | undefined) ?? operation.providerOperationId,
  };

/** How one event changes the view: the aggregate through `evolveTransaction`, the rest here. */
export function evolveView(view: TransactionView | undefined, event: TransactionEvent): TransactionView | undefined {
  const data = event.data as EventData;
  if (event.type === 'TransactionCreated') {
    const state = evolveTransaction({ status: 'absent' }, event) as Transaction;
    return {
      state,
      details: event.data.details ?? {},
      externalIdentifier: event.data.externalIdentifier ?? null,
      metadata: (event.data.details?.metadata as Record<string, string> | undefined) ?? null,
      createdAt: data.at,
      updatedAt: data.at,
      authorizedAt: null,
      capturedAt: null,
      voidedAt: null,
      canceledAt: null,
      rawResponseCode: null,
      rawResponseDescription: null,
      schemeTransactionId: null,
      flowActions: event.data.flowActions ?? [],
      captures: {},
      refunds: {},
    };
  }
  if (!view) return view;
  const state = evolveTransaction(view.state, event) as Transaction;
  const next: TransactionView = { ...view, state, updatedAt: data.at };
  switch (event.type) {
    case 'AuthorizationSucceeded': {
      const d = event.data;
      const captured = state.intent === 'capture' ? data.at : null;
      return {
        ...next,
        authorizedAt: data.at,
        capturedAt: captured ?? next.capturedAt,
        rawResponseCode: d.rawResponseCode ?? null,
        schemeTransactionId: d.schemeTransactionId ?? null,
        // The direct capture of an `intent: capture` transaction has the transaction's id.
        captures: captured ? { ...next.captures, [state.id]: newOperation(data.at, undefined) } : next.captures,
      };
    }
    case 'AuthorizationDeclined':
    case 'AuthorizationFailed':
      return {
        ...next,
        rawResponseCode: event.data.rawResponseCode ?? null,
        rawResponseDescription: event.data.rawResponseDescription ?? null,
      };
    case 'TransactionCanceled':
      return { ...next, canceledAt: data.at };
    case 'BuyerApprovalRequired':
      return { ...next, approvalUrl: event.data.approvalUrl ?? null, approvalExpiresAt: event.data.expiresAt ?? null };
    case 'BuyerApprovalTimedOut':
      return { ...next, buyerApprovalTimedOutAt: data.at };
    case 'VoidSucceeded':
      return { ...next, voidedAt: data.at };
    case 'CaptureRequested':
      return {
        ...next,
        captures: { ...next.captures, [event.data.captureId]: newOperation(data.at, event.data.details) },
      };
    case 'CaptureSubmitted': {
      const capture = settle(next.captures[event.data.captureId], data);
      return capture ? { ...next, captures: { ...next.captures, [event.data.captureId]: capture } } : next;
    }
    case 'CaptureSucceeded':
    case 'CaptureDeclined':
    case 'CaptureFailed': {
      const captureId = event.data.captureId;
      const capture = settle(next.captures[captureId], data);
      return {
        ...next,
        capturedAt: event.type === 'CaptureSucceeded' ? data.at : next.capturedAt,
        captures: capture ? { ...next.captures, [captureId]: capture } : next.captures,
      };
    }
    case 'RefundRequested':
      return {
        ...next,
        refunds: {
          ...next.refunds,
          [event.data.refundId]: newOperation(data.at, event.data.details, event.data.reason),
        },
      };
    case 'RefundSubmitted':
    case 'RefundSucceeded':
    case 'RefundDeclined':
    case 'RefundFailed': {
      const refundId = event.data.refundId;
      const refund = settle(next.refunds[refundId], data);
      return { ...next, refunds: refund ? { ...next.refunds, [refundId]: refund } : next.refunds };
    }
    case 'TransactionUpdated': {
      const d = event.data;
      return {
        ...next,
        ...(d.externalIdentifier !== undefined ? { externalIdentifier: d.externalIdentifier } : {}),
        ...(d.metadata !== undefined ? { metadata: d.metadata } : {}),
      };
    }
    default:
      return next;
  }
}

/** Newest first, unique: `created_at|id`. */
const sortKeyOf = (createdAt: string, id: string): string => `${createdAt}|${id}`;

export class TransactionsReadModel {
  readonly projection: Projection;
  private readonly byId: Database.Statement<[string], TransactionRecord>;
  private readonly refundIndex: Database.Statement<[string], { transaction_id: string; merchant_account_id: string }>;
  private readonly holdsSince: Database.Statement<[string, number], { transaction_id: string }>;
  private readonly processingHoldsSince: Database.Statement<[string, number], { transaction_id: string }>;
  private readonly processingSince: Database.Statement<[string, number], { transaction_id: string }>;
  private readonly giftCardProcessesSince: Database.Statement<[string, number], { transaction_id: string }>;
  private readonly openOperationsSince: Database.Statement<[string, number], { transaction_id: string }>;
  private readonly lateAuthorizationsWaiting: Database.Statement<[number], { transaction_id: string }>;
  private readonly listStatements = new Map<string, ListStatements>();
  private readonly historyAfter: Database.Statement<[string, number, number], HistoryRow>;
  private readonly historyBefore: Database.Statement<[string, number, number], HistoryRow>;

  constructor(private readonly db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS transactions (
        id TEXT PRIMARY KEY, merchant_account_id TEXT NOT NULL, status TEXT NOT NULL, amount INTEGER NOT NULL,
        currency TEXT NOT NULL, buyer_id TEXT, buyer_external_identifier TEXT, payment_service_id TEXT NOT NULL,
        external_identifier TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, sort_key TEXT NOT NULL, view TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS transactions_by_account ON transactions (merchant_account_id, sort_key);
      CREATE INDEX IF NOT EXISTS transactions_by_status ON transactions (status, updated_at);
      CREATE TABLE IF NOT EXISTS transaction_history (
        transaction_id TEXT NOT NULL, revision INTEGER NOT NULL, event_id TEXT NOT NULL, name TEXT NOT NULL,
        created_at TEXT NOT NULL, context TEXT NOT NULL, PRIMARY KEY (transaction_id, revision));
      CREATE TABLE IF NOT EXISTS transaction_refunds (
        id TEXT PRIMARY KEY, transaction_id TEXT NOT NULL, merchant_account_id TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS transaction_create_holds (transaction_id TEXT PRIMARY KEY, since TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS transaction_gift_card_processes (transaction_id TEXT PRIMARY KEY, since TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS transaction_open_operations (transaction_id TEXT PRIMARY KEY, since TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS transaction_late_authorizations (
        transaction_id TEXT PRIMARY KEY, since TEXT NOT NULL);`);
    this.byId = db.prepare('SELECT id, view FROM transactions WHERE id = ?');
    this.refundIndex = db.prepare('SELECT transaction_id, merchant_account_id FROM transaction_refunds WHERE id = ?');
    this.historyAfter = db.prepare(
      'SELECT * FROM transaction_history WHERE transaction_id = ? AND revision > ? ORDER BY revision ASC LIMIT ?',
    );
    this.historyBefore = db.prepare(
      'SELECT * FROM transaction_history WHERE transaction_id = ? AND revision < ? ORDER BY revision DESC LIMIT ?',
    );
    const upsert = db.prepare(
      `INSERT OR REPLACE INTO transactions (id, merchant_account_id, status, amount, currency, buyer_id, buyer_external_identifier,
         payment_service_id, external_identifier, created_at, updated_at, sort_key, view)
       VALUES (@id, @merchant_account_id, @status, @amount, @currency, @buyer_id, @buyer_external_identifier, @payment_service_id,
         @external_identifier, @created_at, @updated_at, @sort_key, @view)`,
    );
    const addHistory = db.prepare(
      'INSERT OR IGNORE INTO transaction_history (transaction_id, revision, event_id, name, created_at, context) VALUES (?, ?, ?, ?, ?, ?)',
    );
    const indexRefund = db.prepare(
      'INSERT OR IGNORE INTO transaction_refunds (id, transaction_id, merchant_account_id) VALUES (?, ?, ?)',
    );
    const openHold = db.prepare('INSERT OR IGNORE INTO transaction_create_holds (transaction_id, since) VALUES (?, ?)');
    const closeHold = db.prepare('DELETE FROM transaction_create_holds WHERE transaction_id = ?');
    this.holdsSince = db.prepare(
      'SELECT transaction_id FROM transaction_create_holds WHERE since <= ? ORDER BY since LIMIT ?',
    );
    this.processingHoldsSince = db.prepare(
      `SELECT h.transaction_id FROM transaction_create_holds h JOIN transactions t ON t.id = h.transaction_id
       WHERE t.status = 'processing' AND h.since <= ? ORDER BY h.since LIMIT ?`,
    );
    this.processingSince = db.prepare(
      `SELECT id AS transaction_id FROM transactions WHERE status = 'processing' AND updated_at <= ?
         AND id NOT IN (SELECT transaction_id FROM transaction_create_holds) ORDER BY updated_at LIMIT ?`,
    );
    const openGiftCardProcess = db.prepare(
      'INSERT OR IGNORE INTO transaction_gift_card_processes (transaction_id, since) VALUES (?, ?)',
    );
    const closeGiftCardProcess = db.prepare('DELETE FROM transaction_gift_card_processes WHERE transaction_id = ?');
    this.giftCardProcessesSince = db.prepare(
      'SELECT transaction_id FROM transaction_gift_card_processes WHERE since <= ? ORDER BY since LIMIT ?',
    );
    const openOperation = db.prepare(
      'INSERT INTO transaction_open_operations (transaction_id, since) VALUES (?, ?) ON CONFLICT (transaction_id) DO UPDATE SET since = excluded.since',
    );
    const closeOperations = db.prepare('DELETE FROM transaction_open_operations WHERE transaction_id = ?');
    this.openOperationsSince = db.prepare(
      'SELECT transaction_id FROM transaction_open_operations WHERE since <= ? ORDER BY since LIMIT ?',
    );
    const openLateAuthorization = db.prepare(
      'INSERT OR IGNORE INTO transaction_late_authorizations (transaction_id, since) VALUES (?, ?)',
    );
    const closeLateAuthorization = db.prepare('DELETE FROM transaction_late_authorizations WHERE transaction_id = ?');
    this.lateAuthorizationsWaiting = db.prepare(
      'SELECT transaction_id FROM transaction_late_authorizations ORDER BY since LIMIT ?',
    );
    this.projection = {
      name: 'transactions',
      apply: (event: RecordedEvent) => {
        if (!event.streamId.startsWith(TRANSACTION_PREFIX)) return;
        const id = event.streamId.slice(TRANSACTION_PREFIX.length);
        const before = this.find(id);
        const domainEvent = asDomainEvent<TransactionEvent>(event);
        const view = evolveView(before ?? undefined, domainEvent);
        if (!view) return;
        const buyer = view.details.buyer as { id?: string | null; external_identifier?: string | null } | undefined;
        upsert.run({
          id,
          merchant_account_id: view.state.merchantAccountId,
          status: view.state.status,
          amount: view.state.amount,
          currency: view.state.currency,
          buyer_id: buyer?.id ?? null,
          buyer_external_identifier: buyer?.external_identifier ?? null,
          payment_service_id: view.state.paymentServiceId,
          external_identifier: view.externalIdentifier,
          created_at: view.createdAt,
          updated_at: view.updatedAt,
          sort_key: sortKeyOf(view.createdAt, id),
          view: JSON.stringify(view),
        });
        const context = {
          event: event.type,
          status: view.state.status,
          ...historyContext(event.data),
          explanation: explainEvent(domainEvent, event.metadata, view),
        };
        addHistory.run(id, event.revision, event.id, historyName(event), event.recordedAt, JSON.stringify(context));
        if (event.type === 'TransactionCreated') openHold.run(id, view.createdAt);
        if (event.type === 'CreateRequestCompleted') closeHold.run(id);
        if (event.type === 'TransactionCreated' && view.state.giftCards) openGiftCardProcess.run(id, view.createdAt);
        if (event.type === 'GiftCardPaymentCompleted') closeGiftCardProcess.run(id);
        // A capture or a payment-method refund waiting for the provider's answer (reconciliation follows these).
        const waiting =
          view.state.captures.some((c) => c.status === 'pending') ||
          view.state.refunds.some((r) => !r.target && r.status === 'processing');
        if (waiting && (event.type === 'CaptureRequested' || event.type === 'RefundRequested'))
          openOperation.run(id, view.updatedAt);
        else if (!waiting) closeOperations.run(id);
        if (event.type === 'LateAuthorizationReceived') openLateAuthorization.run(id, view.updatedAt);
        if (event.type === 'LateAuthorizationReversed') closeLateAuthorization.run(id);
        if (event.type === 'RefundRequested')
          indexRefund.run((event.data as { refundId: string }).refundId, id, view.state.merchantAccountId);
      },
    };
  }

  find(id: string): TransactionView | null {
    const row = this.byId.get(id);
    return row ? (JSON.parse(row.view) as TransactionView) : null;
  }

  /** Transactions whose create request has held provider failures since `before` or earlier (oldest first). */
  expiredCreateHolds(before: string, limit: number): string[] {
    return this.holdsSince.all(before, limit).map((row) => row.transaction_id);
  }

  /** Create requests running since `before` or earlier while `processing` (no buyer to wait for), oldest first. */
  runningCreateRequests(before: string, limit: number): string[] {
    return this.processingHoldsSince.all(before, limit).map((row) => row.transaction_id);
  }

  /** Transactions still `processing` after their create request answered, unchanged since `before` (oldest first). */
  undecidedAuthorizations(before: string, limit: number): string[] {
    return this.processingSince.all(before, limit).map((row) => row.transaction_id);
  }

  /** Transactions with a capture or a payment-method refund waiting for the provider since `before` or earlier. */
  openOperations(before: string, limit: number): string[] {
    return this.openOperationsSince.all(before, limit).map((row) => row.transaction_id);
  }

  /** Transactions holding a late authorization not yet reversed at the provider (oldest first). */
  unreversedLateAuthorizations(limit: number): string[] {
    return this.lateAuthorizationsWaiting.all(limit).map((row) => row.transaction_id);
  }

  /** Transactions created at `before` or earlier whose gift card process has not completed (oldest first). */
  openGiftCardProcesses(before: string, limit: number): string[] {
    return this.giftCardProcessesSince.all(before, limit).map((row) => row.transaction_id);
  }

  /** The transaction of a refund, when the refund exists. */
  refundOwner(refundId: string): { transactionId: string; merchantAccountId: string } | null {
    const row = this.refundIndex.get(refundId);
    return row ? { transactionId: row.transaction_id, merchantAccountId: row.merchant_account_id } : null;
  }

  /** Newest first, filtered, keyset-paged (the table can be long). */
  list(merchantAccountId: string, filters: TransactionListFilters, query: PageQuery): Page<TransactionView> {
    const conditions = transactionListConditions(merchantAccountId, filters);
    const { newest, older, newer } = this.listStatementsFor(conditions.sql);
    const params = conditions.params;
    const page = keysetPage<ListedRow>(
      query,
      (row) => row.sort_key,
      (key, n) => (key === null ? newest.all({ ...params, n }) : older.all({ ...params, key, n })),
      (key, n) => newer.all({ ...params, key, n }),
    );
    return { ...page, items: page.items.map((row) => JSON.parse(row.view) as TransactionView) };
  }

  /**
   * The list's statements for one WHERE clause, prepared once: preparing them on each request was about half of a
   * first page's time here (bench/transactions-list.bench.ts). Clauses differ only by which filters are present (and
   * how many values an IN list has); past {@link MAX_LIST_CLAUSES} the cache starts over rather than grow.
   */
  private listStatementsFor(conditions: string): ListStatements {
    let statements = this.listStatements.get(conditions);
    if (!statements) {
      const sql = transactionListStatements(conditions);
      const prepare = (text: string) => this.db.prepare<Record<string, unknown>, ListedRow>(text);
      statements = { newest: prepare(sql.newest), older: prepare(sql.older), newer: prepare(sql.newer) };
      if (this.listStatements.size >= MAX_LIST_CLAUSES) this.listStatements.clear();
      this.listStatements.set(conditions, statements);
    }
    return statements;
  }

  history(transactionId: string, query: PageQuery): Page<HistoryEntry> {
    const page = keysetPage<HistoryRow>(
      query,
      (row) => String(row.revision),
      (key, n) => this.historyAfter.all(transactionId, key === null ? -1 : Number(key), n),
      (key, n) => this.historyBefore.all(transactionId, Number(key), n),
    );
    return {
      ...page,
      items: page.items.map((row) => ({
        id: row.event_id,
        name: row.name,
        createdAt: row.created_at,
        context: JSON.parse(row.context) as Record<string, unknown>,
      })),
    };
  }
}

/** The event's data for the history: ids and outcomes, never anything card-like (events never hold a card number). */
function historyContext(data: unknown): Record<string, unknown> {
  const { details: _details, at: _at, ...rest } = (data ?? {}) as Record<string, unknown>;
  return rest;
}
