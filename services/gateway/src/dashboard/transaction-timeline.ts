/**
 * A transaction's timeline for the dashboard: every event of `GET /transactions/{id}/events` (oldest first: who, which
 * rule, which connection, the provider's codes — in its `context`), each with the transaction as it stood right after
 * it, asked of the transactions service with `as_of` = the event's recorded time (time travel, the same fold as
 * `GET /transactions/{id}?as_of=`). Events recorded in the same millisecond share that state: the fold takes every event
 * recorded at or before the instant.
 */
import { ApiError } from '@switchyard/api';
import {
  transactionsPatterns,
  type Transaction,
  type TransactionEventItem,
  type TransactionPageRequest,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';

export interface TimelineStep {
  readonly event: TransactionEventItem;
  /** The transaction right after the event; null when the service could not say (it does not know `as_of`). */
  readonly state_after: Transaction | null;
}

/** More events than any real transaction has (a page is 100); beyond it the timeline is cut and says so. */
const MAX_EVENTS = 1000;

export async function transactionTimeline(
  rpc: RpcClient,
  merchantAccountId: string,
  transactionId: string,
): Promise<{ steps: TimelineStep[]; complete: boolean }> {
  const events: TransactionEventItem[] = [];
  let cursor: string | null = null;
  do {
    const request: TransactionPageRequest = {
      merchant_account_id: merchantAccountId,
      transaction_id: transactionId,
      limit: 100,
      ...(cursor ? { cursor } : {}),
    };
    const page: { items: TransactionEventItem[]; next_cursor: string | null } = await rpc.call(
      transactionsPatterns.events,
      request,
    );
    events.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor && events.length < MAX_EVENTS);

  const instants = [...new Set(events.map((event) => event.created_at))];
  const states = new Map(
    await Promise.all(
      instants.map(async (at) => [at, await stateAsOf(rpc, merchantAccountId, transactionId, at)] as const),
    ),
  );
  return {
    steps: events.map((event) => ({ event, state_after: states.get(event.created_at) ?? null })),
    complete: cursor === null,
  };
}

/**
 * The transaction as it stood at `at`. The one place that asks for it: a transactions service from before time travel
 * ignores `as_of` and answers the current state, which is recognised (it was updated after `at`) and shown as unknown.
 */
export async function stateAsOf(
  rpc: RpcClient,
  merchantAccountId: string,
  transactionId: string,
  at: string,
): Promise<Transaction | null> {
  try {
    const state = await rpc.call<Transaction>(transactionsPatterns.get, {
      merchant_account_id: merchantAccountId,
      transaction_id: transactionId,
      as_of: at,
    });
    return Date.parse(state.updated_at) > Date.parse(at) ? null : state;
  } catch (error) {
    if (error instanceof ApiError && (error.status === 400 || error.status === 404)) return null;
    throw error;
  }
}
