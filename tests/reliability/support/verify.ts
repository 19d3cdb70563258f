/**
 * The checks after a crash run, against what the clients recorded and what the provider's ledger holds:
 *
 * - lost: an acknowledged write (a 2xx) that `GET /transactions/{id}` (its captures, its refunds) does not reflect
 *   exactly — status, amounts, the capture or refund with the status and amount its answer gave;
 * - duplicates: an operation that reached the provider more often than we have records of it (an authorization
 *   twice for one transaction, a capture or refund sent twice), or two transactions for one order;
 * - disagreements: a settled transaction whose money the provider sees otherwise; and changes nobody asked for
 *   (more captured or refunded than the acknowledged and unanswered writes of its order add up to);
 * - orphans: an authorization at the provider with no transaction of ours;
 * - unsettled: a transaction left half-applied (still `processing`, a capture `pending`, a refund `processing`)
 *   once the service's timers had their turn, each with the reason, the provider's view, and whether a write that
 *   the kill interrupted explains it.
 */
import type { FlowRecord, OpRecord } from './load';
import type { ServiceApi } from './http-api';
import type { ProviderLedger, ProviderTransaction } from './provider';
import { sleep } from './random';

export interface Snapshot {
  readonly transaction: any;
  readonly captures: readonly any[];
  readonly refunds: readonly any[];
}

export interface Finding {
  readonly transaction_id: string | null;
  readonly flow?: string;
  readonly what: string;
  readonly expected?: unknown;
  readonly actual?: unknown;
}

export interface UnsettledTransaction {
  readonly transaction_id: string;
  readonly flow: string | null;
  readonly status: string;
  readonly reasons: readonly string[];
  /** What the provider holds for it (null: never reached it). */
  readonly provider: {
    readonly status: string;
    readonly authorized: number;
    readonly captured: number;
    readonly refunded: number;
  } | null;
  /** Per open operation: what the provider did with it (e.g. "capture … pending: the provider captured 500"). */
  readonly diagnosis: readonly string[];
  /** A write of its order whose outcome the client never learned (the kill interrupted it); null when none. */
  readonly interruptedWrite: string | null;
}

export interface LedgerVerification {
  readonly transactions: number;
  readonly acknowledgedWrites: number;
  readonly lost: readonly Finding[];
  readonly duplicates: readonly Finding[];
  readonly disagreements: readonly Finding[];
  readonly orphans: readonly Finding[];
  readonly unsettled: readonly UnsettledTransaction[];
  /** Provider operations counted over all our transactions. */
  readonly provider: { readonly authorizations: number; readonly captures: number; readonly refunds: number };
}

/** Statuses a transaction should not stay in once nothing is under way. */
export const openStatuses: ReadonlySet<string> = new Set([
  'processing',
  'buyer_approval_pending',
  'capture_pending',
  'authorization_void_pending',
]);
const authorizedStatuses = new Set([
  'authorization_succeeded',
  'capture_pending',
  'capture_succeeded',
  'refunded',
  'authorization_void_pending',
  'authorization_voided',
]);

/** Every transaction of the merchant account, with its captures and refunds, as the API shows them. */
export async function snapshotTransactions(api: ServiceApi): Promise<Map<string, Snapshot>> {
  const summaries = await api.listAll<{ id: string }>('/transactions');
  const snapshots = new Map<string, Snapshot>();
  for (const { id } of summaries) {
    const [transaction, captures, refunds] = await Promise.all([
      api.get<any>(`/transactions/${id}`),
      api.listAll<any>(`/transactions/${id}/captures`),
      api.listAll<any>(`/transactions/${id}/refunds`),
    ]);
    snapshots.set(id, { transaction, captures, refunds });
  }
  return snapshots;
}

/**
 * Waits for the service's timers (hold window, reconciliation): at least `minWaitMs`, then until no transaction is
 * in an open status, or nothing changed for `quietMs`, or `maxWaitMs` passed. Resolves with the open ones left.
 */
export async function waitUntilSettled(
  api: ServiceApi,
  options: { minWaitMs: number; quietMs: number; maxWaitMs: number },
): Promise<number> {
  const started = Date.now();
  await sleep(options.minWaitMs);
  let last = '';
  let lastChange = Date.now();
  for (;;) {
    const summaries = await api.listAll<{ id: string; status: string; updated_at: string }>('/transactions');
    const open = summaries.filter((t) => openStatuses.has(t.status));
    const fingerprint = summaries.map((t) => `${t.id}:${t.status}:${t.updated_at}`).join('|');
    if (fingerprint !== last) {
      last = fingerprint;
      lastChange = Date.now();
    }
    if (open.length === 0 || Date.now() - lastChange >= options.quietMs || Date.now() - started >= options.maxWaitMs)
      return open.length;
    await sleep(250);
  }
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/** What the acknowledged writes of an order imply, and how far its unanswered ones could move it. */
/**
 * Statuses a capture or refund is answered with when its provider call's outcome was unknown (the call's process
 * or the vault's forwarder killed mid-call): acknowledged, but settled later by reconciliation, either way.
 */
const inDoubtStatuses: ReadonlySet<string> = new Set(['pending', 'processing']);
const inDoubt = (op: OpRecord): boolean => op.outcome === 'acknowledged' && inDoubtStatuses.has(op.ack?.body?.status);

function implied(flow: FlowRecord) {
  const acked = (kind: OpRecord['kind']) => flow.ops.filter((op) => op.kind === kind && op.outcome === 'acknowledged');
  const unknown = (kind: OpRecord['kind']) =>
    flow.ops.filter((op) => op.kind === kind && (op.outcome === 'unknown' || inDoubt(op)));
  const succeeded = (ops: OpRecord[]) => ops.filter((op) => op.ack?.body?.status === 'succeeded');
  return {
    captured: sum(succeeded(acked('capture')).map((op) => op.amount)),
    capturedUpTo:
      sum(succeeded(acked('capture')).map((op) => op.amount)) + sum(unknown('capture').map((op) => op.amount)),
    refunded: sum(succeeded(acked('refund')).map((op) => op.amount)),
    refundedUpTo:
      sum(succeeded(acked('refund')).map((op) => op.amount)) + sum(unknown('refund').map((op) => op.amount)),
    interrupted: flow.ops.find((op) => op.outcome === 'unknown' || inDoubt(op)) ?? null,
  };
}

/** The status the money implies (the product's rule: pending captures, then captured and refunded). */
function statusOf(captured: number, refunded: number): string {
  if (captured === 0) return 'authorization_succeeded';
  return refunded === captured ? 'refunded' : 'capture_succeeded';
}

export async function verifyAgainstLedger(input: {
  readonly snapshots: ReadonlyMap<string, Snapshot>;
  readonly flows: readonly FlowRecord[];
  readonly provider: ProviderLedger;
}): Promise<LedgerVerification> {
  const { snapshots, flows, provider } = input;
  const lost: Finding[] = [];
  const duplicates: Finding[] = [];
  const disagreements: Finding[] = [];
  const orphans: Finding[] = [];
  const unsettled: UnsettledTransaction[] = [];
  const totals = { authorizations: 0, captures: 0, refunds: 0 };
  let acknowledgedWrites = 0;

  const flowOf = new Map<string, FlowRecord>(flows.map((flow) => [flow.id, flow]));
  const transactionsOfFlow = new Map<string, string[]>();
  for (const [id, snapshot] of snapshots) {
    const flowId = snapshot.transaction.external_identifier as string | null;
    if (flowId) transactionsOfFlow.set(flowId, [...(transactionsOfFlow.get(flowId) ?? []), id]);
  }

  // ---- every acknowledged write, reflected exactly -----------------------------------------------------------
  for (const flow of flows) {
    const ids = transactionsOfFlow.get(flow.id) ?? [];
    if (ids.length > 1)
      duplicates.push({
        transaction_id: ids[0] ?? null,
        flow: flow.id,
        what: `${ids.length} transactions for one order (one create request)`,
        actual: ids,
      });
    for (const op of flow.ops) if (op.outcome === 'acknowledged') acknowledgedWrites += 1;
    const create = flow.ops[0];
    if (create?.outcome !== 'acknowledged') continue;
    const id = create.ack?.body?.id as string;
    const snapshot = snapshots.get(id);
    if (!snapshot) {
      lost.push({ transaction_id: id, flow: flow.id, what: 'acknowledged create: the transaction does not exist' });
      continue;
    }
    const t = snapshot.transaction;
    const ackedCreate = create.ack?.body;
    if (t.amount !== ackedCreate.amount)
      lost.push({
        transaction_id: id,
        flow: flow.id,
        what: 'acknowledged create: amount',
        expected: ackedCreate.amount,
        actual: t.amount,
      });
    if (ackedCreate.status === 'authorization_succeeded') {
      if (!authorizedStatuses.has(t.status))
        lost.push({
          transaction_id: id,
          flow: flow.id,
          what: 'acknowledged authorization: no longer authorized',
          expected: 'authorized',
          actual: t.status,
        });
      if (t.authorized_amount !== ackedCreate.authorized_amount)
        lost.push({
          transaction_id: id,
          flow: flow.id,
          what: 'acknowledged authorization: authorized_amount',
          expected: ackedCreate.authorized_amount,
          actual: t.authorized_amount,
        });
    }
    for (const op of flow.ops.slice(1)) {
      if (op.outcome !== 'acknowledged') continue;
      const acked = op.ack?.body;
      const list = op.kind === 'capture' ? snapshot.captures : snapshot.refunds;
      const found = list.find((item) => item.id === acked?.id);
      if (!found)
        lost.push({ transaction_id: id, flow: flow.id, what: `acknowledged ${op.kind} ${acked?.id}: not found` });
      else if (
        found.amount !== acked.amount ||
        // One answered in doubt may have been settled since (reconciliation); a settled one may not change.
        (found.status !== acked.status && !inDoubt(op))
      ) {
        lost.push({
          transaction_id: id,
          flow: flow.id,
          what: `acknowledged ${op.kind} ${acked.id}`,
          expected: { status: acked.status, amount: acked.amount },
          actual: { status: found.status, amount: found.amount },
        });
      }
    }
    const money = implied(flow);
    const captured = t.captured_amount as number;
    const refunded = t.refunded_amount as number;
    if (captured < money.captured)
      lost.push({
        transaction_id: id,
        flow: flow.id,
        what: 'captured_amount below the acknowledged captures',
        expected: money.captured,
        actual: captured,
      });
    if (refunded < money.refunded)
      lost.push({
        transaction_id: id,
        flow: flow.id,
        what: 'refunded_amount below the acknowledged refunds',
        expected: money.refunded,
        actual: refunded,
      });
    if (captured > money.capturedUpTo)
      disagreements.push({
        transaction_id: id,
        flow: flow.id,
        what: 'captured more than was ever asked for',
        expected: money.capturedUpTo,
        actual: captured,
      });
    if (refunded > money.refundedUpTo)
      disagreements.push({
        transaction_id: id,
        flow: flow.id,
        what: 'refunded more than was ever asked for',
        expected: money.refundedUpTo,
        actual: refunded,
      });
    if (
      !money.interrupted &&
      ackedCreate.status === 'authorization_succeeded' &&
      t.status !== statusOf(money.captured, money.refunded)
    ) {
      lost.push({
        transaction_id: id,
        flow: flow.id,
        what: 'status differs from what the acknowledged writes imply',
        expected: statusOf(money.captured, money.refunded),
        actual: t.status,
      });
    }
  }

  // ---- our records against each other and against the provider's ledger ------------------------------------
  for (const [id, snapshot] of snapshots) {
    const t = snapshot.transaction;
    const flowId = (t.external_identifier as string | null) ?? null;
    const flow = flowId ? flowOf.get(flowId) : undefined;
    const succeededCaptures = snapshot.captures.filter((c) => c.status === 'succeeded');
    const succeededRefunds = snapshot.refunds.filter((r) => r.status === 'succeeded');
    if (t.captured_amount !== sum(succeededCaptures.map((c) => c.amount))) {
      disagreements.push({
        transaction_id: id,
        flow: flowId ?? undefined,
        what: 'captured_amount differs from its succeeded captures',
        expected: sum(succeededCaptures.map((c) => c.amount)),
        actual: t.captured_amount,
      });
    }
    if (t.refunded_amount !== sum(succeededRefunds.map((r) => r.amount))) {
      disagreements.push({
        transaction_id: id,
        flow: flowId ?? undefined,
        what: 'refunded_amount differs from its succeeded refunds',
        expected: sum(succeededRefunds.map((r) => r.amount)),
        actual: t.refunded_amount,
      });
    }

    const [counts, held] = await Promise.all([provider.counts(id), provider.authorization(id)]);
    totals.authorizations += counts.authorizations;
    totals.captures += counts.captures;
    totals.refunds += counts.refunds;
    if (counts.authorizations > 1)
      duplicates.push({
        transaction_id: id,
        flow: flowId ?? undefined,
        what: 'authorized at the provider more than once',
        actual: counts.authorizations,
      });
    if (counts.captures > snapshot.captures.length)
      duplicates.push({
        transaction_id: id,
        flow: flowId ?? undefined,
        what: 'captures at the provider outnumber our capture records',
        expected: snapshot.captures.length,
        actual: counts.captures,
      });
    if (counts.refunds > snapshot.refunds.length)
      duplicates.push({
        transaction_id: id,
        flow: flowId ?? undefined,
        what: 'refunds at the provider outnumber our refund records',
        expected: snapshot.refunds.length,
        actual: counts.refunds,
      });
    const providerRefunds = held?.refunds ?? [];
    const ourRefundIds = new Set(snapshot.refunds.map((r) => r.id as string));
    for (const reference of new Set(providerRefunds.map((r) => r.refund_reference))) {
      const times = providerRefunds.filter((r) => r.refund_reference === reference).length;
      if (times > 1)
        duplicates.push({
          transaction_id: id,
          flow: flowId ?? undefined,
          what: `refund ${reference} made at the provider ${times} times`,
        });
      if (reference && !ourRefundIds.has(reference))
        orphans.push({ transaction_id: id, what: `refund ${reference} at the provider without a refund of ours` });
    }

    const reasons: string[] = [];
    if (openStatuses.has(t.status)) reasons.push(`transaction ${t.status}`);
    for (const c of snapshot.captures) if (c.status === 'pending') reasons.push(`capture ${c.id} pending`);
    for (const r of snapshot.refunds) if (r.status === 'processing') reasons.push(`refund ${r.id} processing`);
    if (reasons.length > 0) {
      const interrupted = flow ? implied(flow).interrupted : null;
      unsettled.push({
        transaction_id: id,
        flow: flowId,
        status: t.status,
        reasons,
        provider: held
          ? {
              status: held.status,
              authorized: held.authorized_amount,
              captured: held.captured_amount,
              refunded: held.refunded_amount,
            }
          : null,
        diagnosis: diagnose(snapshot, held),
        interruptedWrite: interrupted ? `${interrupted.kind} ${interrupted.key}: ${interrupted.why ?? ''}` : null,
      });
      continue; // its money is in flight: compared by the unsettled report, not here
    }
    disagreements.push(...compareSettled(id, flowId, snapshot, held));
  }

  // ---- the provider's authorizations that we have no transaction for ---------------------------------------
  for (const reference of provider.references?.() ?? []) {
    if (!snapshots.has(reference))
      orphans.push({
        transaction_id: reference,
        what: 'authorization at the provider without a transaction of ours',
        actual: await provider.counts(reference),
      });
  }

  return {
    transactions: snapshots.size,
    acknowledgedWrites,
    lost,
    duplicates,
    disagreements,
    orphans,
    unsettled,
    provider: totals,
  };
}

/** A settled transaction: the provider holds exactly the money we record, capture by capture and refund by refund. */
function compareSettled(
  id: string,
  flowId: string | null,
  snapshot: Snapshot,
  held: ProviderTransaction | null,
): Finding[] {
  const found: Finding[] = [];
  const t = snapshot.transaction;
  const where = { transaction_id: id, ...(flowId ? { flow: flowId } : {}) };
  const ours = {
    authorized: authorizedStatuses.has(t.status) ? t.authorized_amount : 0,
    captured: t.captured_amount,
    refunded: t.refunded_amount,
  };
  const theirs =
    held && ['authorized', 'captured', 'voided'].includes(held.status)
      ? { authorized: held.authorized_amount, captured: held.captured_amount, refunded: held.refunded_amount }
      : { authorized: 0, captured: 0, refunded: 0 };
  if (ours.authorized !== theirs.authorized || ours.captured !== theirs.captured || ours.refunded !== theirs.refunded) {
    found.push({
      ...where,
      what: `our record (${t.status}) and the provider's (${held?.status ?? 'none'}) disagree`,
      expected: ours,
      actual: theirs,
    });
  }
  const amounts = (items: readonly { amount: number; status: string }[]) =>
    items
      .filter((i) => i.status === 'succeeded')
      .map((i) => i.amount)
      .sort((a, b) => a - b);
  if (JSON.stringify(amounts(snapshot.captures)) !== JSON.stringify(amounts(held?.captures ?? []))) {
    found.push({
      ...where,
      what: 'succeeded captures differ from the provider',
      expected: amounts(snapshot.captures),
      actual: amounts(held?.captures ?? []),
    });
  }
  for (const refund of snapshot.refunds.filter((r) => r.status === 'succeeded')) {
    const theirsRefund = held?.refunds.find((r) => r.refund_reference === refund.id);
    if (theirsRefund?.status !== 'succeeded' || theirsRefund.amount !== refund.amount) {
      found.push({
        ...where,
        what: `refund ${refund.id} succeeded here, not so at the provider`,
        expected: { amount: refund.amount },
        actual: theirsRefund ?? null,
      });
    }
  }
  return found;
}

/** What the provider did with each operation a transaction still has open. */
function diagnose(snapshot: Snapshot, held: ProviderTransaction | null): string[] {
  const t = snapshot.transaction;
  const lines: string[] = [];
  if (t.status === 'processing' || t.status === 'buyer_approval_pending') {
    lines.push(
      held
        ? `authorization ${t.status}: the provider holds it ${held.status} (${held.authorized_amount} authorized)`
        : `authorization ${t.status}: the provider never received it`,
    );
  }
  // The provider's succeeded captures that none of our succeeded captures accounts for.
  const unaccounted = (held?.captures ?? []).filter((c) => c.status === 'succeeded').map((c) => c.amount);
  const takeAmount = (amount: number): boolean => {
    const at = unaccounted.indexOf(amount);
    if (at >= 0) unaccounted.splice(at, 1);
    return at >= 0;
  };
  for (const capture of snapshot.captures.filter((c) => c.status === 'succeeded')) takeAmount(capture.amount);
  for (const capture of snapshot.captures.filter((c) => c.status === 'pending')) {
    const at = takeAmount(capture.amount) ? 0 : -1;
    lines.push(
      at >= 0
        ? `capture ${capture.id} pending: the provider captured ${capture.amount}; its answer was lost with the process`
        : `capture ${capture.id} pending: the provider never received it`,
    );
  }
  for (const refund of snapshot.refunds.filter((r) => r.status === 'processing')) {
    const theirs = held?.refunds.find((r) => r.refund_reference === refund.id);
    lines.push(
      theirs
        ? `refund ${refund.id} processing: the provider holds it ${theirs.status} (${theirs.amount}); its answer was lost with the process`
        : `refund ${refund.id} processing: the provider never received it`,
    );
  }
  return lines;
}
