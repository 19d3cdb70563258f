/**
 * Issue 11, item 1, distributed runtime: the crash suite.
 *
 * The distributed runtime (tests/distributed.fixture.ts: identity, transactions, vault, webhooks and two gateways, each
 * its own process, over TCP RPC, Kafka and Redis) runs on a Kafka broker of this suite's own (scripts/kafka.sh,
 * tests/reliability/faults/own-infra.ts, on free ports below the ephemeral range), so that the broker can be killed
 * too without touching the shared one on 9092 that other suites use; Redis is the shared one (never stopped). The
 * card simulator runs in this test process behind a latency proxy, so its ledger survives every kill; webhooks go
 * to a receiver here.
 *
 * A few clients (2 in CI, 4 in full) drive `authorize → capture → refund` flows with Idempotency-Keys through both
 * gateways in turn, while one piece is killed with SIGKILL at a random moment and started again (same DATA_DIR and
 * environment): each of gateway (the two alternately), identity, transactions, vault, webhooks and the Kafka broker
 * in turn, in an order shuffled per cycle — 24 kills with RELIABILITY_FULL=1 (4 each), 6 in CI (1 each). Clients keep
 * going: a connection error, or a 5xx of a gateway whose service is down, is not an acknowledgement; they retry
 * with the same key.
 *
 * Afterwards, once the transactions service's timers (hold window, reconciliation) had their turn:
 * 1. every write that got a 2xx is reflected exactly by GET /transactions/{id} (status, amounts, its capture or
 *    refund with the acknowledged status and amount);
 * 2. the simulator's ledger agrees with ours: no authorization or capture without a record of ours, none twice;
 * 3. nothing is half-applied: `unsettled` is empty;
 * 4. every event's webhook was delivered at least once, signed, in order per resource;
 * 5. every event in the transactions service's store reached Kafka (`transactions.events` on this suite's broker,
 *    read from the beginning): none missing, none unknown, each stream in revision order.
 * Figures: tests/reliability/results/crash-distributed.json.
 */
import path from 'node:path';
import { transactionsTopic } from '@switchyard/contracts';
import { probeRedis } from '@switchyard/kv/src/contract';
import { describeWithInfra, type Availability } from '@switchyard/testing';
import { WebhookReceiver } from '../../services/standalone/src/webhooks.receiver';
import { startDistributedRuntime, type DistributedRuntime } from '../distributed.fixture';
import { OwnKafka, ownInfraAvailability } from './faults/own-infra';
import {
  bearerToken,
  crashRepeatedly,
  crashRunFigures,
  crashRunSummary,
  expectLedgerAgrees,
  expectNothingLost,
  expectNothingUnsettled,
  expectWebhooksDelivered,
  freePortBelowEphemeralRange,
  kill9Broker,
  processControl,
  readStoredEvents,
  readTopicOf,
  seededRandom,
  settleAndVerify,
  setUpCardsAndWebhooks,
  ServiceApi,
  startLoad,
  startProvider,
  verifyRelayed,
  verifyWebhooks,
  waitForMoreAcknowledgements,
  waitForWebhooksWhileArriving,
  writeResults,
  type CrashRecord,
  type CrashRunOutcome,
  type LedgerVerification,
  type LoadRun,
  type ProcessControl,
  type RelayVerification,
  type RunningProvider,
  type ServiceProcessName,
  type WebhookVerification,
} from './support';

const full = process.env.RELIABILITY_FULL === '1';
const TARGETS = ['gateway', 'identity', 'transactions', 'vault', 'webhooks', 'kafka'] as const;
type Target = (typeof TARGETS)[number];
const CRASHES = full ? 4 * TARGETS.length : TARGETS.length;
/**
 * Fewer clients than the embedded suite: the distributed runtime acknowledges writes several times faster, and
 * the webhooks service ingests the events more slowly than four clients make them (~30–70 a second on a 2-core
 * machine: one message at a time, each rendered over RPC and stored before the next), so that every client adds
 * to the webhook backlog the checks wait for. CI: 2 (the run stays near 90 s), full: 4.
 */
const CLIENTS = full ? 4 : 2;
/** The wait for the webhook backlog after the load: as long as webhooks keep arriving, until none came for WEBHOOK_STALL_MS. */
const WEBHOOK_STALL_MS = 30_000;
const WEBHOOK_DRAIN_MAX_MS = full ? 900_000 : 120_000;
const HOLD_WINDOW_MS = 2_000;
const RECONCILE_AFTER_MS = 4_000;
const SIMULATOR_SECRET = 'whsec_crash_distributed_0123456789abcdef';

const redis = await probeRedis();
const ownBroker = ownInfraAvailability();
const infrastructure: Availability = !redis.available ? redis : ownBroker;

/** This suite's broker, once created (stopped and removed in afterAll, also when its start failed). */
let ownKafka: OwnKafka | undefined;
/** Started at once, while the rest is set up: a new broker takes a while to format and start. */
const brokerStarting: Promise<unknown> | null = infrastructure.available
  ? (async () => {
      // OwnKafka's own ports come from binding port 0: inside the kernel's ephemeral range, which any other process
      // may be handed while the broker does not hold them (before its start, and while it is down after a kill).
      // The same broker folder, on ports below that range.
      const created = await OwnKafka.create();
      const Broker = OwnKafka as unknown as new (home: string, port: number, controllerPort: number) => OwnKafka;
      const port = await freePortBelowEphemeralRange();
      let controllerPort = port;
      while (controllerPort === port) controllerPort = await freePortBelowEphemeralRange();
      ownKafka = new Broker(created.home, port, controllerPort);
      await ownKafka.start();
      return undefined;
    })().catch((error: unknown) => error ?? new Error('the broker did not start'))
  : null;

describeWithInfra(
  `crash suite, distributed runtime: ${CRASHES} × kill -9 (each service process and the Kafka broker in turn) under authorize → capture → refund load`,
  infrastructure,
  () => {
    const random = seededRandom();
    let provider: RunningProvider | undefined;
    let runtime: DistributedRuntime | undefined;
    let receiver: WebhookReceiver | undefined;
    let webhookSecret = '';

    // What the run produced, for the assertions and the results file.
    const started = Date.now();
    /** The kill schedule: each cycle holds every target once, in a seeded order. */
    const schedule: Target[] = [];
    const gatewayKilled: ServiceProcessName[] = [];
    let load: LoadRun | undefined;
    let crashes: CrashRecord[] = [];
    let ledger: LedgerVerification | undefined;
    let webhooks: WebhookVerification | undefined;
    let relayed: RelayVerification | undefined;
    let openAfterSettling = 0;
    /** Webhook requests a second at the receiver while the backlog drained after the load (a figure). */
    let drainRate: number | null = null;
    let setupDone = false;
    /** Milliseconds each phase took (figures, never asserted). */
    const phases: Record<string, number> = {};
    const phase = (name: string, since: number) => (phases[name] = Date.now() - since);

    while (schedule.length < CRASHES) {
      const cycle: Target[] = [...TARGETS];
      for (let i = cycle.length - 1; i > 0; i -= 1) {
        const j = random.int(0, i);
        [cycle[i], cycle[j]] = [cycle[j]!, cycle[i]!];
      }
      schedule.push(...cycle.slice(0, CRASHES - schedule.length));
    }

    beforeAll(async () => {
      const [brokerError, simulator] = await Promise.all([
        brokerStarting,
        startProvider({ webhookSecret: SIMULATOR_SECRET, latencyMs: [0, 40], random }),
      ]);
      provider = simulator;
      if (brokerError !== undefined || !ownKafka) throw brokerError;
      const broker = ownKafka;
      receiver = await new WebhookReceiver().up();
      runtime = await startDistributedRuntime({
        name: 'crash-distributed',
        env: {
          KAFKA_BROKERS: broker.brokers,
          MOCK_CARD_URL: provider.url,
          MOCK_CARD_WEBHOOK_SECRET: SIMULATOR_SECRET,
          POLL_INTERVAL_MS: '50',
          BUYER_APPROVAL_WINDOW_MS: String(HOLD_WINDOW_MS),
          RECONCILE_AFTER_MS: String(RECONCILE_AFTER_MS),
          WEBHOOK_RETRY_BASE_MS: '200',
          WEBHOOK_RETRY_MAX_MS: '2000',
          WEBHOOK_WORKER_INTERVAL_MS: '50',
        },
      });
      const running = runtime;
      const control: ProcessControl = processControl(running);
      const token = await bearerToken(await running.createApiKey('crash-distributed', ['administrator']));
      // Both gateways, one request each in turn: a killed gateway's clients carry on through the other one.
      let turn = 0;
      const api = new ServiceApi(
        () => ((turn += 1) % 2 === 0 ? running.baseUrl : running.secondUrl),
        () => token,
      );

      webhookSecret = await setUpCardsAndWebhooks(api, receiver.url, 'crash-distributed');
      setupDone = true;
      phase('setup_ms', started);

      // The load, and the kills.
      const loadStarted = Date.now();
      // A gateway answers 502 while the service behind it is down: like no answer, retried until it is back.
      load = startLoad({ api, clients: CLIENTS, random, runId: `r${random.seed}`, serverErrorRetries: 300 });
      const run = load;
      try {
        crashes = await crashRepeatedly({
          crashes: CRASHES,
          random,
          uptimeMs: [1_500, 4_000],
          downtimeMs: [0, 300],
          acknowledged: () => run.counters.acknowledged,
          crash: async (round) => {
            const target = schedule[round - 1]!;
            if (target === 'kafka') return `kafka broker (kill -9 pid ${await kill9Broker(broker.home)})`;
            const name: ServiceProcessName =
              target === 'gateway' ? (gatewayKilled.length % 2 === 0 ? 'gateway' : 'second-gateway') : target;
            if (target === 'gateway') gatewayKilled.push(name);
            const pid = running.processes[name]?.child.pid;
            await control.kill9(name);
            return `${name} (kill -9 pid ${pid})`;
          },
          restart: async (round, killed) => {
            const target = schedule[round - 1]!;
            if (target === 'kafka') await broker.start();
            else await control.restart(killed.split(' ')[0] as ServiceProcessName);
            await control.serving();
          },
        });
        // The last start serves a little load too.
        await waitForMoreAcknowledgements(run, 20, 60_000, running.describe);
      } finally {
        run.stop();
        await run.done;
        phase('load_ms', loadStarted);
      }

      // The transactions service's timers settle what the kills interrupted; then everything is read back.
      const settled = await settleAndVerify({
        api,
        load: run,
        provider,
        minWaitMs: HOLD_WINDOW_MS + RECONCILE_AFTER_MS + 1_000,
      });
      ({ openAfterSettling, ledger } = settled);
      Object.assign(phases, settled.phases);
      const { expected } = settled;
      let since = Date.now();
      const requestsBeforeDrain = receiver.requests.length;
      await waitForWebhooksWhileArriving(receiver, expected, {
        stallMs: WEBHOOK_STALL_MS,
        maxMs: WEBHOOK_DRAIN_MAX_MS,
      });
      webhooks = verifyWebhooks(receiver, expected, webhookSecret);
      phase('webhooks_drain_ms', since);
      drainRate = Math.round(
        ((receiver.requests.length - requestsBeforeDrain) * 1000) / Math.max(1, Date.now() - since),
      );

      // Every stored event on Kafka: the processes stopped (SIGTERM), the store read from a copy, the topic from the
      // beginning on this suite's broker.
      since = Date.now();
      await running.stopProcesses();
      const stored = await readStoredEvents(path.join(running.dataDir, 'transactions.db'));
      const messages = await readTopicOf(
        broker.brokers,
        transactionsTopic,
        new Set(stored.map((event) => event.id)),
        20_000,
      );
      relayed = verifyRelayed(stored, messages);
      phase('kafka_check_ms', since);
    }, 1_800_000);

    const outcome = (): CrashRunOutcome => ({ load, crashes, ledger, webhooks, provider, openAfterSettling });

    afterAll(async () => {
      const killsPerProcess: Record<string, number> = {};
      for (const crash of crashes) {
        const name = crash.killed.split(' ')[0]!;
        killsPerProcess[name] = (killsPerProcess[name] ?? 0) + 1;
      }
      const run = outcome();
      const figures = {
        seed: random.seed,
        clients: CLIENTS,
        crashes_planned: CRASHES,
        kills_per_process: killsPerProcess,
        schedule,
        ...crashRunFigures(run),
        events_in_store: relayed?.inStore ?? null,
        events_on_kafka: relayed?.onKafka ?? null,
        kafka_messages: relayed?.messages ?? null,
        kafka_messages_republished: relayed?.republished ?? null,
        events_missing_on_kafka: relayed?.missing.slice(0, 50) ?? [],
        events_unknown_on_kafka: relayed?.unknown.slice(0, 50) ?? [],
        events_mismatched_on_kafka: relayed?.mismatched.slice(0, 50) ?? [],
        streams_out_of_order_on_kafka: relayed?.outOfOrder ?? [],
        webhook_requests_per_second_while_draining: drainRate,
        phases_ms: phases,
        elapsed_ms: Date.now() - started,
      };
      if (setupDone) {
        const file = writeResults('crash-distributed', figures);
        console.log(
          `crash-distributed (${full ? 'full' : 'ci'}, seed ${random.seed}): ${crashes.length} kill -9 (${Object.entries(
            killsPerProcess,
          )
            .map(([name, n]) => `${name} ${n}`)
            .join(', ')}), ` +
            `${crashRunSummary(run)}, events ${figures.events_on_kafka}/${figures.events_in_store} on Kafka (${figures.kafka_messages} messages), ` +
            `webhooks ${webhooks?.delivered ?? null}/${webhooks?.expected ?? null}, ${Math.round(figures.elapsed_ms / 1000)} s → ${path.relative(process.cwd(), file)}`,
        );
      }
      await runtime?.stop();
      await receiver?.down();
      await provider?.stop();
      await ownKafka?.destroy();
    }, 120_000);

    const context = () => `seed ${random.seed}\n${runtime?.describe().slice(-8_000) ?? ''}`;

    it('survives every kill: each piece restarted and serving, the load acknowledged writes throughout', () => {
      expect(crashes.map((c) => c.killed.split(' ')[0])).toHaveLength(CRASHES);
      const killed = new Set(
        crashes.map((c) => (c.killed.startsWith('second-gateway') ? 'gateway' : c.killed.split(' ')[0])),
      );
      expect(killed).toEqual(new Set(TARGETS));
      expect(load?.counters.acknowledged ?? 0).toBeGreaterThan(CRASHES * 5);
    });

    it('reflects every acknowledged write exactly: nothing lost', () => expectNothingLost(outcome(), context));

    it("agrees with the provider's ledger: nothing authorized or captured without our record, nothing twice", () =>
      expectLedgerAgrees(outcome()));

    it('leaves nothing half-applied: reconciliation settles even the writes a kill interrupted', () =>
      expectNothingUnsettled(outcome()));

    it('relays every stored event to Kafka: none missing, none unknown, each stream in order', () => {
      expect(relayed?.inStore ?? 0).toBeGreaterThan(0);
      expect(relayed?.missing.map((e) => `${e.streamId} r${e.revision} ${e.type} ${e.id}`)).toEqual([]);
      expect(relayed?.unknown).toEqual([]);
      expect(relayed?.mismatched).toEqual([]);
      expect(relayed?.outOfOrder).toEqual([]);
      expect(relayed?.unreadable).toBe(0);
      expect(relayed?.onKafka).toBe(relayed?.inStore);
    });

    it("delivers every event's webhook at least once, signed, in order per resource", () =>
      expectWebhooksDelivered(outcome()));
  },
);
