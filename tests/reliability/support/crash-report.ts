/**
 * What every crash suite does the same way after its kills, whatever it kills: let the load reach the last start,
 * let the service's timers settle what the kills interrupted, read everything back and check it against the
 * clients' records and the provider's ledger; then report the figures (same field names in every suite, for
 * docs/reliability.md) and run the same checks, each suite in its own `it`.
 */
import { expect } from 'vitest';
import type { CrashRecord } from './crash-loop';
import type { ServiceApi } from './http-api';
import type { LoadRun } from './load';
import type { RunningProvider } from './provider';
import { sleep } from './random';
import { snapshotTransactions, verifyAgainstLedger, waitUntilSettled, type LedgerVerification } from './verify';
import { expectedWebhooks, type ExpectedWebhook, type WebhookVerification } from './webhooks';

/**
 * What the load needs in the default merchant account: the card simulator as its payment service (the service's
 * MOCK_CARD_URL), and a webhook subscription to every event at `receiverUrl`. Resolves with the signing secret.
 */
export async function setUpCardsAndWebhooks(api: ServiceApi, receiverUrl: string, merchantId: string): Promise<string> {
  await api.must('POST', '/payment-services', 201, {
    display_name: 'Cards',
    payment_service_definition_id: 'mock-card',
    fields: [{ key: 'merchant_id', value: merchantId }],
    accepted_currencies: ['USD'],
    accepted_countries: ['US'],
  });
  const subscription = await api.must<{ id: string }>('POST', '/webhook-subscriptions', 201, { url: receiverUrl });
  return (await api.must<{ secret: string }>('POST', `/webhook-subscriptions/${subscription.id}/secrets`, 201)).secret;
}

/** Waits until the load got `count` more acknowledgements (after the last restart: the last start serves too). */
export async function waitForMoreAcknowledgements(
  load: LoadRun,
  count: number,
  timeoutMs: number,
  describe: () => string,
): Promise<void> {
  const from = load.counters.acknowledged;
  const deadline = Date.now() + timeoutMs;
  while (load.counters.acknowledged - from < count) {
    if (Date.now() > deadline)
      throw new Error(
        `only ${load.counters.acknowledged - from} of ${count} writes acknowledged within ${timeoutMs} ms after the last restart\n${describe()}`,
      );
    await sleep(50);
  }
}

export interface SettledRun {
  /** Transactions still in an open status once the wait ended. */
  readonly openAfterSettling: number;
  readonly ledger: LedgerVerification;
  /** The webhooks the stored events call for. */
  readonly expected: ExpectedWebhook[];
  /** Milliseconds of each step (figures, never asserted). */
  readonly phases: { readonly settle_ms: number; readonly verify_ms: number };
}

/**
 * After the load stopped: waits for the service's timers (the hold window completes create requests a kill
 * interrupted, reconciliation settles the provider calls whose answer died with a process: at least `minWaitMs`),
 * then reads every transaction back and checks it against the clients' records and the provider.
 */
export async function settleAndVerify(input: {
  readonly api: ServiceApi;
  readonly load: LoadRun;
  readonly provider: RunningProvider;
  readonly minWaitMs: number;
}): Promise<SettledRun> {
  const started = Date.now();
  const openAfterSettling = await waitUntilSettled(input.api, {
    minWaitMs: input.minWaitMs,
    quietMs: 3_000,
    maxWaitMs: 30_000,
  });
  const settled = Date.now();
  const snapshots = await snapshotTransactions(input.api);
  const ledger = await verifyAgainstLedger({ snapshots, flows: input.load.flows, provider: input.provider });
  const expected = await expectedWebhooks(input.api, snapshots.keys());
  return {
    openAfterSettling,
    ledger,
    expected,
    phases: { settle_ms: settled - started, verify_ms: Date.now() - settled },
  };
}

export interface CrashRunOutcome {
  readonly load: LoadRun | undefined;
  readonly crashes: readonly CrashRecord[];
  readonly ledger: LedgerVerification | undefined;
  readonly webhooks: WebhookVerification | undefined;
  readonly provider: RunningProvider | undefined;
  readonly openAfterSettling: number;
}

/** The figures every crash suite writes (the suite adds its own around them). */
export function crashRunFigures(run: CrashRunOutcome): Record<string, unknown> {
  const { load, ledger, webhooks } = run;
  const ops = load?.flows.flatMap((f) => f.ops) ?? [];
  return {
    crashes: run.crashes.length,
    requests_sent: load?.counters.sent ?? 0,
    requests_acknowledged: load?.counters.acknowledged ?? 0,
    requests_without_answer: load?.counters.noAnswer ?? 0,
    requests_concurrent_request_409: load?.counters.concurrentRequest ?? 0,
    requests_5xx: load?.counters.serverErrors ?? 0,
    writes_with_unknown_outcome: ops.filter((op) => op.outcome === 'unknown').length,
    writes_interrupted_by_a_kill: writesInterruptedByAKill(run),
    writes_refused: ops.filter((op) => op.outcome === 'refused').map((op) => ({ key: op.key, ...op.refusal })),
    flows: load?.flows.length ?? 0,
    transactions: ledger?.transactions ?? 0,
    lost: ledger?.lost.length ?? null,
    lost_details: ledger?.lost ?? [],
    duplicates_at_provider: ledger?.duplicates.length ?? null,
    duplicate_details: ledger?.duplicates ?? [],
    disagreements: ledger?.disagreements ?? [],
    orphans_at_provider: ledger?.orphans ?? [],
    provider_operations: ledger?.provider ?? null,
    provider_calls_delivered_after_the_caller_died: run.provider?.forwardedAfterCallerLeft ?? 0,
    open_after_settling: run.openAfterSettling,
    unsettled_count: ledger?.unsettled.length ?? null,
    unsettled: ledger?.unsettled ?? [],
    webhooks_expected: webhooks?.expected ?? null,
    webhooks_delivered: webhooks?.delivered ?? null,
    webhooks_missing: webhooks?.missing.slice(0, 50) ?? [],
    webhooks_out_of_order: webhooks?.outOfOrder ?? [],
    webhooks_received: webhooks?.received ?? null,
    webhooks_repeated: webhooks?.repeats ?? null,
    webhooks_bad_signatures: webhooks?.badSignatures ?? null,
    crash_rounds: run.crashes,
  };
}

/** The middle of every crash suite's summary line: writes, losses, duplicates, unsettled. */
export function crashRunSummary(run: CrashRunOutcome): string {
  return (
    `${run.load?.counters.sent ?? 0} writes sent, ${run.load?.counters.acknowledged ?? 0} acknowledged, ${run.ledger?.lost.length ?? null} lost, ` +
    `${run.ledger?.duplicates.length ?? null} duplicates at the provider, ${run.ledger?.unsettled.length ?? null} unsettled ` +
    `(${writesInterruptedByAKill(run)} writes interrupted by a kill)`
  );
}

/** Every write that got a 2xx is reflected exactly. */
export function expectNothingLost(run: CrashRunOutcome, context: () => string): void {
  expect(run.ledger?.acknowledgedWrites).toBe(run.load?.counters.acknowledged);
  expect(run.ledger?.lost, context()).toEqual([]);
}

/** The provider's ledger agrees: nothing authorized or captured without our record, nothing twice. */
export function expectLedgerAgrees(run: CrashRunOutcome): void {
  expect(run.ledger?.orphans).toEqual([]);
  expect(run.ledger?.duplicates).toEqual([]);
  expect(run.ledger?.disagreements).toEqual([]);
}

/**
 * Writes a kill caught mid-request: the client's connection was reset or timed out while it waited (a refused
 * connection is not one: the service was already down), or the key was left `running` (409 `concurrent_request`),
 * plus the provider calls that arrived after their caller had died. Without at least one, "reconciliation settles
 * the interrupted writes" proves nothing: no kill landed mid-write.
 */
export function writesInterruptedByAKill(run: CrashRunOutcome): number {
  const cutMidRequest = new Set(
    (run.load?.requests ?? []).filter((r) => r.result === 'no-answer' && r.error !== 'ECONNREFUSED').map((r) => r.key),
  );
  for (const op of run.load?.flows.flatMap((f) => f.ops) ?? []) if (op.outcome === 'unknown') cutMidRequest.add(op.key);
  return cutMidRequest.size + (run.provider?.forwardedAfterCallerLeft ?? 0);
}

/** Nothing is left half-applied (the provider's view is left out of the comparison: it is in the results). */
export function expectNothingUnsettled(run: CrashRunOutcome): void {
  expect(
    writesInterruptedByAKill(run),
    'no kill landed mid-write: nothing was left for reconciliation to settle',
  ).toBeGreaterThan(0);
  expect((run.ledger?.unsettled ?? []).map((u) => ({ ...u, provider: undefined }))).toEqual([]);
}

/** Every expected webhook delivered at least once, signed, in order per resource, and none unexpected. */
export function expectWebhooksDelivered(run: CrashRunOutcome): void {
  expect(run.webhooks?.expected ?? 0).toBeGreaterThan(0);
  expect(run.webhooks?.missing.map((m) => `${m.transactionId} r${m.revision} ${m.name} ${m.eventId}`)).toEqual([]);
  expect(run.webhooks?.outOfOrder).toEqual([]);
  expect(run.webhooks?.badSignatures).toBe(0);
  expect(run.webhooks?.unexpected).toEqual([]);
}
