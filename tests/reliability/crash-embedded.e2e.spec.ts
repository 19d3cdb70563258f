/**
 * Issue 11, item 1, embedded runtime: the crash suite.
 *
 * The service runs as `npm start` runs it (one child process, its own DATA_DIR and PORT); the card simulator runs
 * in this test process, behind a proxy that delays each provider call a little, so its ledger survives every kill
 * and kills land while calls are in flight; webhooks go to a receiver in this process. Eight clients drive
 * `authorize → capture → refund` flows with Idempotency-Keys while the process is killed with SIGKILL at random
 * moments — 20 times with RELIABILITY_FULL=1, 4 in CI — and started again with the same data directory and
 * environment. Clients keep going: a connection error is not an acknowledgement; they retry with the same key.
 *
 * Afterwards, once the service's timers had their turn (hold window, reconciliation) and webhooks drained:
 * 1. every write that got a 2xx is reflected exactly by GET /transactions/{id} (status, amounts, its capture or
 *    refund with the acknowledged status and amount);
 * 2. the simulator's ledger agrees with ours: no authorization or capture at the provider without a record of ours,
 *    none twice, and every settled transaction holds the same money on both sides;
 * 3. no transaction is left half-applied: the writes a kill interrupted (a capture or refund whose provider call died
 *    with the process) are settled by reconciliation from the provider's record — `unsettled` in the results is empty;
 * 4. every event's webhook was delivered at least once, signed, in order per resource.
 * Figures: tests/reliability/results/crash-embedded.json.
 */
import path from 'node:path';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';
import { WebhookReceiver } from '../../services/standalone/src/webhooks.receiver';
import {
  bearerToken,
  crashRepeatedly,
  crashRunFigures,
  crashRunSummary,
  createApiKey,
  expectLedgerAgrees,
  expectNothingLost,
  expectNothingUnsettled,
  expectWebhooksDelivered,
  seededRandom,
  ServiceApi,
  settleAndVerify,
  setUpCardsAndWebhooks,
  startLoad,
  startProvider,
  startStandaloneProcess,
  verifyWebhooks,
  waitForMoreAcknowledgements,
  waitForWebhooks,
  writeResults,
  type CrashRecord,
  type CrashRunOutcome,
  type LedgerVerification,
  type LoadRun,
  type RunningProvider,
  type StandaloneService,
  type WebhookVerification,
} from './support';

const full = process.env.RELIABILITY_FULL === '1';
const CRASHES = full ? 20 : 4;
const CLIENTS = 8;
const HOLD_WINDOW_MS = 2_000;
const RECONCILE_AFTER_MS = 4_000;
const SIMULATOR_SECRET = 'whsec_crash_embedded_0123456789abcdef';

const random = seededRandom();
// Kept for the card data scan when the run keeps its artifacts (CI).
const dataDir = createTestDataDir('crash-embedded');
let provider: RunningProvider;
let receiver: WebhookReceiver;
let service: StandaloneService | undefined;
let webhookSecret = '';

// What the run produced, for the assertions and the results file.
const started = Date.now();
let load: LoadRun | undefined;
let crashes: CrashRecord[] = [];
let ledger: LedgerVerification | undefined;
let webhooks: WebhookVerification | undefined;
let openAfterSettling = 0;
let setupDone = false;
/** Milliseconds each phase took (figures, never asserted). */
const phases: Record<string, number> = {};
const phase = (name: string, since: number) => (phases[name] = Date.now() - since);

beforeAll(async () => {
  provider = await startProvider({ webhookSecret: SIMULATOR_SECRET, latencyMs: [0, 40], random });
  receiver = await new WebhookReceiver().up();
  service = await startStandaloneProcess({
    DATA_DIR: dataDir,
    MOCK_CARD_URL: provider.url,
    MOCK_CARD_WEBHOOK_SECRET: SIMULATOR_SECRET,
    LOG_LEVEL: 'warn',
    POLL_INTERVAL_MS: '50',
    BUYER_APPROVAL_WINDOW_MS: String(HOLD_WINDOW_MS),
    // Read only by services that reconcile undecided authorizations; ignored otherwise.
    RECONCILE_AFTER_MS: String(RECONCILE_AFTER_MS),
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_BASE_MS: '200',
    WEBHOOK_RETRY_MAX_MS: '2000',
    WEBHOOK_WORKER_INTERVAL_MS: '50',
  });
  const running = service;
  const key = await createApiKey(running.env, 'administrator', 'crash-embedded');
  const token = await bearerToken(key);
  const api = new ServiceApi(
    () => running.url,
    () => token,
  );

  webhookSecret = await setUpCardsAndWebhooks(api, receiver.url, 'crash-embedded');
  setupDone = true;
  phase('setup_ms', started);

  // The load, and the kills.
  const loadStarted = Date.now();
  load = startLoad({ api, clients: CLIENTS, random, runId: `r${random.seed}` });
  const run = load;
  try {
    crashes = await crashRepeatedly({
      crashes: CRASHES,
      random,
      uptimeMs: [1_500, 4_000],
      downtimeMs: [0, 300],
      acknowledged: () => run.counters.acknowledged,
      crash: async () => {
        await running.kill9();
        return 'embedded service (kill -9)';
      },
      restart: () => running.restart(),
    });
    // The last start serves a little load too.
    await waitForMoreAcknowledgements(run, 20, 60_000, () => running.output(4_000));
  } finally {
    run.stop();
    await run.done;
    phase('load_ms', loadStarted);
  }

  // The service's timers: the hold window completes create requests a kill interrupted, reconciliation decides
  // their authorizations; then everything is read back and compared with the clients' records and the provider.
  const settled = await settleAndVerify({
    api,
    load: run,
    provider,
    minWaitMs: HOLD_WINDOW_MS + RECONCILE_AFTER_MS + 1_000,
  });
  openAfterSettling = settled.openAfterSettling;
  ledger = settled.ledger;
  Object.assign(phases, settled.phases);
  const since = Date.now();
  await waitForWebhooks(receiver, settled.expected, 30_000);
  webhooks = verifyWebhooks(receiver, settled.expected, webhookSecret);
  phase('webhooks_drain_ms', since);
}, 900_000);

/** What the run produced, as the shared crash-report functions take it. */
const outcome = (): CrashRunOutcome => ({ load, crashes, ledger, webhooks, provider, openAfterSettling });

afterAll(async () => {
  const figures = {
    seed: random.seed,
    clients: CLIENTS,
    crashes_planned: CRASHES,
    ...crashRunFigures(outcome()),
    unsettled_by_kind: unsettledByKind(),
    write_latency_ms: percentiles((load?.requests ?? []).filter((r) => r.result !== 'no-answer').map((r) => r.ms)),
    phases_ms: phases,
    elapsed_ms: Date.now() - started,
  };
  if (setupDone) {
    const file = writeResults('crash-embedded', figures);
    console.log(
      `crash-embedded (${full ? 'full' : 'ci'}, seed ${random.seed}): ${crashes.length} kill -9, ${crashRunSummary(outcome())}, ` +
        `webhooks ${webhooks?.delivered ?? null}/${webhooks?.expected ?? null}, ${Math.round(figures.elapsed_ms / 1000)} s → ${path.relative(process.cwd(), file)}`,
    );
  }
  await service?.stop();
  await receiver?.down();
  await provider?.stop();
  removeTestDataDir(dataDir);
}, 60_000);

/** How many open operations of each kind remained, and whether the provider had acted on them. */
function unsettledByKind(): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const line of (ledger?.unsettled ?? []).flatMap((u) => u.diagnosis)) {
    const kind = line
      .replace(/ [0-9a-f-]{36}/, '')
      .replace(/\(.*?\)/g, '')
      .replace(/ \d+/g, '')
      .replace(/;.*$/, '')
      .trim();
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return kinds;
}

function percentiles(values: number[]): { p50: number; p90: number; p99: number; max: number } | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[sorted.length - 1] ?? 0 };
}

const context = () => `seed ${random.seed}\n${service?.output(4_000) ?? ''}`;

describe(`crash suite, embedded runtime: ${CRASHES} × kill -9 under authorize → capture → refund load`, () => {
  it('survives every kill: restarted each time, the load acknowledged writes throughout', () => {
    expect(crashes).toHaveLength(CRASHES);
    expect(load?.counters.acknowledged ?? 0).toBeGreaterThan(CRASHES * 5);
  });

  it('reflects every acknowledged write exactly: nothing lost', () => expectNothingLost(outcome(), context));

  it("agrees with the provider's ledger: nothing authorized or captured without our record, nothing twice", () =>
    expectLedgerAgrees(outcome()));

  // An authorization, capture or refund whose provider call died with the process is settled from the provider's
  // record by the reconciliation timer (RECONCILE_AFTER_MS); anything still open is listed in `unsettled`.
  it('leaves nothing half-applied: reconciliation settles even the writes a kill interrupted', () =>
    expectNothingUnsettled(outcome()));

  it("delivers every event's webhook at least once, signed, in order per resource", () =>
    expectWebhooksDelivered(outcome()));
});
