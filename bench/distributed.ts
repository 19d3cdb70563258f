/**
 * `npm run bench:distributed` (issue 10, item 3): `authorize` and `get` through the distributed runtime — identity,
 * transactions, webhooks, gateway and the mock-card simulator as separate processes on loopback, over NestJS TCP,
 * Kafka and Redis — next to the embedded runtime (`npm start`) under the same load in the same run; then the event
 * lag from the append of an event to Kafka and to the first attempt of its webhook.
 *
 *   npm run bench:distributed -- [--duration 8] [--warmup 2] [--rounds 2] [--initial-warmup 10] [--clients 1,16,64]
 *                                [--lag-rate 20] [--lag-seconds 20] [--lag-only] [--idle 10]
 *                                [--no-embedded] [--no-lag] [--profile gateway,transactions] [--trace] [--without webhooks]
 *                                [--scenarios authorize,get]
 *                                [--out bench/results]
 *
 * - Both runtimes get a fresh data directory, one API key (operator CLI), a merchant account `bench` with a
 *   mock-card connection, and the SAME simulator process (zero simulated latency: approved card, amount 1000), so
 *   the difference between them is the runtime: in-process calls and bus vs TCP RPC, Kafka and Redis.
 * - Load: closed loop (`runLoad`, bench/lib/load.ts), one ES512 token reused, 1/16/64 clients, `--warmup` seconds
 *   unrecorded then `--duration` seconds measured, `--rounds` times per runtime: both runtimes run side by side and
 *   their windows alternate (E D, D E, …), so that a busy spell of the machine (it is shared) hits both; the rounds'
 *   latencies are merged into one distribution. Before the first window each runtime gets `--initial-warmup`
 *   seconds of `authorize` at 4 clients, unrecorded (the first seconds after a start are JIT compilation). `authorize` = POST /transactions (card, intent authorize); `get` =
 *   GET /transactions/{id} over the ids `authorize` created. CPU per request is the sum over the runtime's Node
 *   processes (simulator included), and Kafka's JVM and Redis for the distributed runtime, read from /proc.
 * - Event lag: a webhook receiver on loopback (bench/lib/receiver.ts), a subscription of merchant account `bench`
 *   to every `transaction.*` event, and an open-loop stream of authorizations (`--lag-rate` a second for
 *   `--lag-seconds`, after 3 s of warm-up at that rate). Distributed: a kafkajs consumer on `transactions.events`
 *   too; the append time of an event is its `recorded_at` on Kafka (set by the event store when it appends); lag =
 *   arrival − recorded_at, on Kafka (append → Kafka) and at the receiver (append → webhook first attempt); before
 *   the stream the webhooks service must have consumed the load phases' backlog (its group's offsets at the end).
 *   Embedded (no Kafka to watch): the append time is the webhook body's `created_at` (the event's own time, `at`,
 *   taken when the command decided, a little before its commit: an upper bound of append → first attempt); it runs
 *   after the load phases, before the embedded runtime stops. `--lag-only`: no load phases, only the lag streams.
 * - Kafka: started with `bash scripts/kafka.sh start` when not running, and stopped again at the end (left as
 *   found). Redis must answer on REDIS_URL (default redis://127.0.0.1:6379).
 * - `--profile a,b`: those processes (embedded, identity, transactions, webhooks, gateway, simulator) run with
 *   `--cpu-prof`; the .cpuprofile files go to <out>/profiles/.
 * - `--trace`: every process is loaded with bench/lib/trace-hook.cjs, which times each hop it makes or serves
 *   (HTTP in, fetch out, TCP RPC made and served, in-process RPC, event store append); the bench reads the
 *   summary of each measured window and prints calls per request and mean time per hop. Diagnostics: it adds a
 *   little work per hop, so measure without it.
 * - `--without webhooks`: the distributed runtime without its webhooks process (no event lag then): how much of
 *   the distributed cost is the event pipeline's work competing for the same cores. Diagnostics too.
 * - `--scenarios authorize`: only those scenarios (a profile of one of them); a diagnostic run too. `split` (not run
 *   by default): split tender, a card and a gift card given by number at the simulator's gift card service (each
 *   request a new card) — the latency of a payment that waits for the gift cards service's redemption over Kafka.
 *
 * Prints a table and writes bench/results/distributed-<ISO date>-<hostname>.json and distributed-latest.json.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type * as KafkaJs from 'kafkajs';
import { kafkajs } from '@switchyard/bus/src/kafka/kafkajs';
import { transactionsTopic, webhookEventNames, webhookPatterns } from '@switchyard/contracts';
import { defaultRedisUrl } from '@switchyard/kv';
import { probeRedis } from '@switchyard/kv/src/redis/probe-redis';
import { TcpRpcClient } from '@switchyard/rpc/src/tcp-rpc';
// Sub-modules of @switchyard/testing: its index also loads the Vitest helpers, which a plain script cannot.
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing/src/artifacts';
import {
  groupsReadingTransactionsFromTheBeginning,
  waitForConsumerGroups,
} from '@switchyard/testing/src/kafka-backlog';
import { freePort, kafkaBrokersForTests } from '@switchyard/testing/src/probes';
import { repoRoot, runCli, startTsProcess, waitFor, type RunningProcess } from '@switchyard/testing/src/processes';
import { rpcCredentialsForTests } from '@switchyard/testing/src/rpc-credentials';
import { signToken } from '@switchyard/testing/src/tokens';
import { HttpClient, latencySummary, processCpuMs, runLoad, type LoadResult } from './lib/load';
import { BenchWebhookReceiver } from './lib/receiver';

// kafkajs as the services run it: without its idle check loop (libs/bus/src/kafka/kafkajs.ts).
const { Kafka, logLevel } = kafkajs();
type Kafka = KafkaJs.Kafka;

// ---- options ----------------------------------------------------------------------------------------------------

const argValue = (name: string): string | undefined => {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
};
const hasFlag = (name: string) => process.argv.includes(name);
const options = {
  durationMs: Number(argValue('--duration') ?? 8) * 1000,
  warmupMs: Number(argValue('--warmup') ?? 2) * 1000,
  rounds: Math.max(1, Number(argValue('--rounds') ?? 2)),
  initialWarmupMs: Number(argValue('--initial-warmup') ?? 10) * 1000,
  clients: (argValue('--clients') ?? '1,16,64').split(',').map(Number),
  lagRate: Number(argValue('--lag-rate') ?? 20),
  lagSeconds: Number(argValue('--lag-seconds') ?? 20),
  embedded: !hasFlag('--no-embedded'),
  lag: !hasFlag('--no-lag'),
  lagOnly: hasFlag('--lag-only'),
  profile: (argValue('--profile') ?? '').split(',').filter(Boolean),
  trace: hasFlag('--trace'),
  without: (argValue('--without') ?? '').split(',').filter(Boolean),
  scenarios: (argValue('--scenarios') ?? 'authorize,get').split(',').filter(Boolean),
  idleSeconds: Number(argValue('--idle') ?? 0),
  outDir: path.resolve(repoRoot, argValue('--out') ?? 'bench/results'),
};
const LAG_WARMUP_SECONDS = 3;
const MERCHANT = 'bench';
const MERCHANT_HEADER = 'x-service-merchant-account-id';
const SCENARIOS = ['authorize', 'get', 'split'] as const;
/** What a run measures unless told (`--scenarios`); a run of fewer is a diagnostic one. */
const DEFAULT_SCENARIOS: readonly Scenario[] = ['authorize', 'get'];
type Scenario = (typeof SCENARIOS)[number];
const TRANSACTION_EVENT_NAMES = webhookEventNames.filter((name) => name.startsWith('transaction.'));

const runStamp = new Date().toISOString().replace(/[:.]/g, '-');
const profileDir = path.join(options.outDir, 'profiles');
const traceDir = path.join(os.tmpdir(), `bench-distributed-trace-${runStamp}`);
const traceHook = path.join(repoRoot, 'bench/lib/trace-hook.cjs');

/** The environment of one process: with --cpu-prof when profiled, with the trace hook under --trace. */
function instrumented(processName: string, env: Record<string, string>): Record<string, string> {
  const nodeOptions = [process.env.NODE_OPTIONS ?? ''];
  if (options.profile.includes(processName))
    nodeOptions.push(`--cpu-prof --cpu-prof-dir=${profileDir} --cpu-prof-name=${processName}-${runStamp}.cpuprofile`);
  if (options.trace) nodeOptions.push(`--require ${traceHook}`);
  const joined = nodeOptions.join(' ').trim();
  return joined === ''
    ? env
    : {
        ...env,
        NODE_OPTIONS: joined,
        ...(options.trace ? { BENCH_TRACE_DIR: traceDir, BENCH_TRACE_NAME: processName } : {}),
      };
}

const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (value: number | null | undefined, digits = 2) =>
  value === null || value === undefined || Number.isNaN(value) ? null : Number(value.toFixed(digits));

// ---- machine and infrastructure ---------------------------------------------------------------------------------

function machine() {
  const cpus = os.cpus();
  return {
    hostname: os.hostname(),
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    cpuModel: cpus[0]?.model ?? 'unknown',
    cpus: cpus.length,
    memoryGb: round(os.totalmem() / 2 ** 30, 1),
    node: process.version,
  };
}

const kafkaScript = (command: 'start' | 'stop' | 'status') =>
  spawnSync('bash', [path.join(repoRoot, 'scripts/kafka.sh'), command], {
    cwd: repoRoot,
    stdio: command === 'status' ? 'ignore' : 'inherit',
  }).status;

function kafkaPid(): number | null {
  try {
    const pid = Number(
      fs.readFileSync(path.join(process.env.KAFKA_HOME ?? path.join(repoRoot, '.kafka'), 'kafka.pid'), 'utf8').trim(),
    );
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** The pid of the process listening on a loopback TCP port (from /proc/net/tcp and /proc/<pid>/fd), or null. */
function listenerPid(port: number): number | null {
  try {
    const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
    const inodes = new Set<string>();
    for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
      if (!fs.existsSync(file)) continue;
      for (const line of fs.readFileSync(file, 'utf8').split('\n').slice(1)) {
        const fields = line.trim().split(/\s+/);
        if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A') inodes.add(fields[9]!);
      }
    }
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let fds: string[];
      try {
        fds = fs.readdirSync(`/proc/${entry}/fd`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        try {
          const target = fs.readlinkSync(`/proc/${entry}/fd/${fd}`);
          const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
          if (inode && inodes.has(inode)) return Number(entry);
        } catch {
          // gone meanwhile
        }
      }
    }
  } catch {
    // not Linux
  }
  return null;
}

// ---- runtimes ---------------------------------------------------------------------------------------------------

interface Runtime {
  readonly name: 'embedded' | 'distributed';
  readonly baseUrl: string;
  readonly env: Record<string, string>;
  readonly dataDir: string;
  /** Processes whose CPU is counted: name → pid. */
  readonly pids: Record<string, number>;
  readonly processes: Record<string, RunningProcess>;
  describe(): string;
  stop(): Promise<void>;
}

interface Simulator {
  readonly url: string;
  readonly secret: string;
  readonly process: RunningProcess;
}

async function startSimulatorProcess(): Promise<Simulator> {
  const port = await freePort();
  const secret = randomBytes(24).toString('base64url');
  const url = `http://127.0.0.1:${port}`;
  const child = startTsProcess(
    'libs/connectors/src/simulator/simulator-main.ts',
    instrumented('simulator', { MOCK_CARD_PORT: String(port), MOCK_CARD_WEBHOOK_SECRET: secret }),
  );
  await waitFor(
    'the mock-card simulator listening',
    async () => ((await fetch(`${url}/v1/ledger?reference=probe`)).status === 200 ? true : undefined),
    30_000,
    () => child.output(),
  );
  return { url, secret, process: child };
}

/** Ready: every readiness check answers ok, except those of processes left out with --without. */
const readyz = (url: string) => async () => {
  const answer = await fetch(`${url}/readyz`);
  if (answer.status === 200) return true;
  const body = (await answer.json().catch(() => null)) as { checks?: Record<string, string> } | null;
  const failing = Object.entries(body?.checks ?? { unknown: 'no checks' }).filter(
    ([name, result]) => result !== 'ok' && !options.without.includes(name),
  );
  return body?.checks && failing.length === 0 ? true : undefined;
};

function runtimeOf(
  name: Runtime['name'],
  baseUrl: string,
  env: Record<string, string>,
  dataDir: string,
  processes: Record<string, RunningProcess>,
  simulator: Simulator,
): Runtime {
  const describe = () =>
    Object.entries(processes)
      .map(([processName, child]) => `${processName}:\n${child.output().slice(-4000)}`)
      .join('\n');
  return {
    name,
    baseUrl,
    env,
    dataDir,
    processes,
    pids: {
      ...Object.fromEntries(Object.entries(processes).map(([processName, child]) => [processName, child.child.pid!])),
      simulator: simulator.process.child.pid!,
    },
    describe,
    stop: async () => {
      await Promise.all(Object.values(processes).map((child) => child.kill('SIGTERM')));
      removeTestDataDir(dataDir);
    },
  };
}

async function startEmbeddedRuntime(simulator: Simulator): Promise<Runtime> {
  const dataDir = createTestDataDir('bench-embedded');
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  // The receiver of the event-lag phase listens on loopback.
  const env = {
    DATA_DIR: dataDir,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    MOCK_CARD_URL: simulator.url,
    MOCK_CARD_WEBHOOK_SECRET: simulator.secret,
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  };
  const processes = { embedded: startTsProcess('services/standalone/src/main.ts', instrumented('embedded', env)) };
  const runtime = runtimeOf('embedded', baseUrl, env, dataDir, processes, simulator);
  try {
    await waitFor('the embedded runtime ready', readyz(baseUrl), 60_000, runtime.describe);
  } catch (error) {
    await runtime.stop();
    throw error;
  }
  return runtime;
}

async function startDistributed(simulator: Simulator): Promise<Runtime> {
  const dataDir = createTestDataDir('bench-distributed');
  const credentials = await rpcCredentialsForTests();
  const [identityPort, transactionsPort, vaultPort, giftCardsPort, webhooksPort, httpPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const baseUrl = `http://127.0.0.1:${httpPort}`;
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    IDENTITY_RPC_URL: `tcp://127.0.0.1:${identityPort}`,
    TRANSACTIONS_RPC_URL: `tcp://127.0.0.1:${transactionsPort}`,
    VAULT_RPC_URL: `tcp://127.0.0.1:${vaultPort}`,
    GIFT_CARDS_RPC_URL: `tcp://127.0.0.1:${giftCardsPort}`,
    WEBHOOKS_RPC_URL: `tcp://127.0.0.1:${webhooksPort}`,
    // The receiver of the event-lag phase listens on loopback.
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    // The broker may be shared (tests, earlier runs): this installation's own consumer group.
    WEBHOOKS_CONSUMER_GROUP: `bench-webhooks-${randomUUID()}`,
    GIFT_CARDS_CONSUMER_GROUP: `bench-gift-cards-${randomUUID()}`,
    VAULT_CONSUMER_GROUP: `bench-vault-${randomUUID()}`,
    TRANSACTIONS_CONSUMER_GROUP: `bench-transactions-${randomUUID()}`,
    KAFKA_BROKERS: kafkaBrokersForTests().join(','),
    REDIS_URL: defaultRedisUrl(),
    PORT: String(httpPort),
    LOG_LEVEL: 'warn',
    MOCK_CARD_URL: simulator.url,
    MOCK_CARD_WEBHOOK_SECRET: simulator.secret,
    PUBLIC_BASE_URL: baseUrl,
    ...credentials.env,
  };
  const envOf = (service: string) => instrumented(service, env);
  const processes: Record<string, RunningProcess> = {};
  processes.identity = startTsProcess('services/identity/src/main.ts', envOf('identity'));
  processes.transactions = startTsProcess('services/transactions/src/main.ts', envOf('transactions'));
  // Every card-bearing call of an authorization goes through it (the card summary, the aliases, the forwarder).
  processes.vault = startTsProcess('services/vault/src/main.ts', envOf('vault'));
  // The gateway's /readyz pings it (and a split payment with a stored card asks it).
  processes['gift-cards'] = startTsProcess('services/gift-cards/src/main.ts', envOf('gift-cards'));
  if (!options.without.includes('webhooks'))
    processes.webhooks = startTsProcess('services/webhooks/src/main.ts', envOf('webhooks'));
  processes.gateway = startTsProcess('services/gateway/src/main.ts', envOf('gateway'));
  const runtime = runtimeOf('distributed', baseUrl, env, dataDir, processes, simulator);
  try {
    await waitFor('the gateway ready', readyz(baseUrl), 90_000, runtime.describe);
    if (processes.webhooks) {
      const webhooksRpc = TcpRpcClient.fromUrl(env.WEBHOOKS_RPC_URL!, 'webhooks', credentials.of('gateway'), 2_000);
      try {
        await waitFor(
          'the webhooks service ready',
          async () => (await webhooksRpc.call(webhookPatterns.ping, {}), true),
          60_000,
          runtime.describe,
        );
      } finally {
        await webhooksRpc.close();
      }
    }
  } catch (error) {
    await runtime.stop();
    throw error;
  }
  return runtime;
}

// ---- API --------------------------------------------------------------------------------------------------------

interface Api {
  readonly http: HttpClient;
  readonly headers: Record<string, string>;
}

/** An administrator key (CLI), the merchant account `bench` and its mock-card connection. */
async function prepare(runtime: Runtime): Promise<Api> {
  const created = await runCli(runtime.env, 'api-keys', 'create', '--display-name', 'bench', '--role', 'administrator');
  if (created.code !== 0) throw new Error(`the CLI could not create a key (exit ${created.code}): ${created.stderr}`);
  const key = JSON.parse(created.stdout) as { kid: string; private_key: string };
  const token = await signToken({ kid: key.kid, privateKeyPem: key.private_key, expiresIn: 3 * 3600 });
  const http = new HttpClient(runtime.baseUrl, { maxSockets: Math.max(...options.clients, 8) });
  const auth = { authorization: `Bearer ${token}` };
  await waitFor(
    `the new key accepted by the ${runtime.name} gateway`,
    async () =>
      (await http.request('GET', '/merchant-accounts', { headers: auth })).status === 200 ? true : undefined,
    30_000,
    runtime.describe,
  );
  await http.request('POST', '/merchant-accounts', {
    headers: auth,
    body: { id: MERCHANT, display_name: 'Benchmark' },
  });
  const headers = { ...auth, [MERCHANT_HEADER]: MERCHANT };
  // The simulator's card service; its gift card service too when split tender is measured.
  const connect = (displayName: string, definition: string) =>
    http.request('POST', '/payment-services', {
      headers,
      body: {
        display_name: displayName,
        payment_service_definition_id: definition,
        fields: [{ key: 'merchant_id', value: 'bench' }],
        accepted_currencies: ['USD'],
        accepted_countries: ['US'],
      },
    });
  await connect('Card simulator', 'mock-card');
  if (options.scenarios.includes('split')) await connect('Gift card simulator', 'mock-gift-card');
  return { http, headers };
}

const authorizeBody = JSON.stringify({
  amount: 1000,
  currency: 'USD',
  intent: 'authorize',
  payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30', security_code: '123' },
});

let giftCards = 0;
/** A card and a new gift card by number (the simulator's PIN `0nnnn` holds nnnn cents): its redemption succeeds. */
async function split(api: Api): Promise<void> {
  giftCards += 1;
  const number = `606061${String(Date.now() % 1_000_000).padStart(6, '0')}${String(giftCards % 10_000).padStart(4, '0')}`;
  const created = await api.http.json<{ status: string; gift_card_redemptions?: { status: string }[] }>(
    'POST',
    '/transactions',
    {
      headers: api.headers,
      body: JSON.stringify({
        amount: 1000,
        currency: 'USD',
        intent: 'authorize',
        payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30', security_code: '123' },
        gift_cards: [{ number, pin: '05000', amount: 300 }],
      }),
    },
  );
  if (created.status !== 'authorization_succeeded' || created.gift_card_redemptions?.[0]?.status !== 'succeeded')
    throw new Error(`split tender answered status ${created.status}`);
}

async function authorize(api: Api): Promise<{ id: string; status: string }> {
  const created = await api.http.json<{ id: string; status: string }>('POST', '/transactions', {
    headers: api.headers,
    body: authorizeBody,
  });
  if (created.status !== 'authorization_succeeded') throw new Error(`authorize answered status ${created.status}`);
  return created;
}

// ---- load -------------------------------------------------------------------------------------------------------

interface Measured extends LoadResult {
  readonly runtime: Runtime['name'];
  readonly scenario: Scenario;
  readonly clients: number;
  /** CPU ms per request of each counted process (the sum is `cpuMsPerRequest`). */
  readonly cpuMsPerRequestByProcess: Record<string, number | null>;
  /** p50 of each round (window) on its own: how much the machine moved during the run. */
  readonly roundsP50Ms: number[];
  readonly loadGeneratorCpuPercent: number | null;
  /** CPU used by other processes of the machine during the windows, % of one core (noise: should be near 0). */
  readonly otherCpuPercent: number | null;
  /** CPU stolen by the hypervisor during the windows, % of one core. */
  readonly stealPercent: number | null;
  /** With --trace: per process, per hop (trace-hook.cjs keys), calls per request, mean ms, and the highest p99 of a round. */
  readonly hops?: Record<string, Record<string, { perRequest: number; meanMs: number; p99Ms: number }>>;
}

interface TraceEntry {
  readonly count: number;
  readonly meanMs: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly totalMs: number;
}

const traceSignals = new Map<number, number>();

/** SIGUSR2 to every traced process: each writes what it timed since the last cut, and starts over. */
async function traceCut(pids: Record<string, number>): Promise<Record<string, Record<string, TraceEntry>>> {
  const files = Object.entries(pids).map(([name, pid]) => {
    const n = traceSignals.get(pid) ?? 0;
    traceSignals.set(pid, n + 1);
    process.kill(pid, 'SIGUSR2');
    return [name, path.join(traceDir, `${name}-${n}.json`)] as const;
  });
  const out: Record<string, Record<string, TraceEntry>> = {};
  for (const [name, file] of files) {
    await waitFor(`the trace of ${name}`, async () => (fs.existsSync(file) ? true : undefined), 10_000);
    out[name] = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, TraceEntry>;
  }
  return out;
}

/** The machine's CPU time so far (ms, all cores) from /proc/stat: busy (user … softirq) and steal; null off Linux. */
function machineCpuMs(): { busy: number; steal: number } | null {
  try {
    const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
    const tick = 1000 / (Number(process.env.CLK_TCK) || 100);
    return { busy: (user + nice + system + irq + softirq) * tick, steal: steal * tick };
  } catch {
    return null;
  }
}

function cpuSnapshot(pids: Record<string, number>): Record<string, number | null> {
  return Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, processCpuMs(pid)]));
}

interface Target {
  readonly runtime: Runtime;
  readonly api: Api;
  /** Processes whose CPU is counted (the runtime's, plus Kafka and Redis for the distributed one). */
  readonly cpuPids: Record<string, number>;
  /** Transactions this runtime's `authorize` created, for `get`. */
  readonly ids: string[];
}

/**
 * `--idle <seconds>` (diagnostics): each runtime's CPU with no load at all, per process, after its start and one
 * payment — the polling, heartbeats and timers that every request at low load competes with for the two cores.
 */
async function idleCpu(targets: readonly Target[]): Promise<void> {
  for (const target of targets) await authorize(target.api);
  await sleep(3_000);
  const before = targets.map((target) => cpuSnapshot(target.cpuPids));
  const startedAt = performance.now();
  await sleep(options.idleSeconds * 1000);
  const elapsedMs = performance.now() - startedAt;
  targets.forEach((target, index) => {
    const after = cpuSnapshot(target.cpuPids);
    const percent = Object.entries(after).map(([name, ms]) => {
      const start = before[index]![name];
      return `${name} ${ms === null || start == null ? '?' : ((100 * (ms - start)) / elapsedMs).toFixed(1)}%`;
    });
    log(`idle CPU (${target.runtime.name}, ${options.idleSeconds} s, % of one core): ${percent.join(', ')}`);
  });
}

/** One window (warm-up + duration) of one scenario against one runtime: raw latencies, CPU and trace deltas. */
interface Round {
  readonly result: LoadResult;
  readonly samples: number[];
  readonly cpuMs: Record<string, number | null>;
  /** CPU (ms) of everything else on the machine during the window (not the runtime's processes, not this one), and steal. */
  readonly otherCpuMs: number | null;
  readonly stealMs: number | null;
  /** CPU (ms) of this process, the load generator. */
  readonly selfMs: number;
  readonly trace?: Record<string, Record<string, TraceEntry>>;
}

async function measureRound(target: Target, scenario: Scenario, clients: number): Promise<Round> {
  const { runtime, api, ids } = target;
  let before: Record<string, number | null> = {};
  let machineBefore: ReturnType<typeof machineCpuMs> = null;
  let selfBefore = 0;
  let traceStart: Promise<unknown> = Promise.resolve();
  const startReading = setTimeout(() => {
    before = cpuSnapshot(target.cpuPids);
    machineBefore = machineCpuMs();
    selfBefore = processCpuMs(process.pid) ?? 0;
    if (options.trace) traceStart = traceCut(runtime.pids);
  }, options.warmupMs);
  const inner =
    scenario === 'authorize'
      ? async () => {
          const created = await authorize(api);
          if (ids.length < 20_000) ids.push(created.id);
        }
      : scenario === 'split'
        ? () => split(api)
        : async (i: number) => {
            await api.http.request('GET', `/transactions/${ids[i % ids.length]}`, { headers: api.headers });
          };
  // The same timing as runLoad's, kept raw so that rounds can be merged into one distribution.
  const samples: number[] = [];
  const windowStart = performance.now() + options.warmupMs;
  const request = async (i: number) => {
    const t0 = performance.now();
    await inner(i);
    if (t0 >= windowStart) samples.push(performance.now() - t0);
  };
  const result = await runLoad({
    concurrency: clients,
    durationMs: options.durationMs,
    warmupMs: options.warmupMs,
    request,
  });
  clearTimeout(startReading);
  const after = cpuSnapshot(target.cpuPids);
  const machineAfter = machineCpuMs();
  const selfMs = (processCpuMs(process.pid) ?? 0) - selfBefore;
  const cpuMs = Object.fromEntries(
    Object.keys(target.cpuPids).map((name) => {
      const start = before[name];
      const end = after[name];
      return [name, start == null || end == null ? null : end - start];
    }),
  );
  const ours = Object.values(cpuMs).reduce((sum: number, value) => sum + (value ?? 0), 0) + selfMs;
  // Set in the timer above (TypeScript cannot see that assignment).
  const machineStart = machineBefore as ReturnType<typeof machineCpuMs>;
  const otherCpuMs = machineStart && machineAfter ? Math.max(0, machineAfter.busy - machineStart.busy - ours) : null;
  const stealMs = machineStart && machineAfter ? machineAfter.steal - machineStart.steal : null;
  let trace: Round['trace'];
  if (options.trace) {
    await traceStart;
    trace = await traceCut(runtime.pids);
  }
  return { result, samples, cpuMs, otherCpuMs, stealMs, selfMs, ...(trace ? { trace } : {}) };
}

/** The rounds of one runtime, scenario and client count as one measurement. */
function merge(target: Target, scenario: Scenario, clients: number, rounds: readonly Round[]): Measured {
  const samples = rounds.flatMap((r) => r.samples);
  const requests = rounds.reduce((sum, r) => sum + r.result.requests, 0);
  const windowMs = rounds.reduce((sum, r) => sum + r.result.durationMs, 0);
  const errors = rounds.reduce((sum, r) => sum + r.result.errors, 0);
  const firstError = rounds.find((r) => r.result.firstError)?.result.firstError;
  const byProcess = Object.fromEntries(
    Object.keys(target.cpuPids).map((name) => {
      const values = rounds.map((r) => r.cpuMs[name]);
      return [
        name,
        values.some((value) => value == null) || requests === 0
          ? null
          : round(values.reduce((sum: number, value) => sum + (value as number), 0) / requests, 3),
      ];
    }),
  );
  const known = Object.values(byProcess).filter((value): value is number => value !== null);
  let hops: Measured['hops'];
  if (rounds.every((r) => r.trace)) {
    const merged: Record<string, Record<string, { count: number; totalMs: number; p99Ms: number }>> = {};
    for (const r of rounds) {
      for (const [name, entries] of Object.entries(r.trace!)) {
        for (const [key, entry] of Object.entries(entries)) {
          const into = ((merged[name] ??= {})[key] ??= { count: 0, totalMs: 0, p99Ms: 0 });
          into.count += entry.count;
          into.totalMs += entry.totalMs;
          into.p99Ms = Math.max(into.p99Ms, entry.p99Ms);
        }
      }
    }
    hops = Object.fromEntries(
      Object.entries(merged).map(([name, entries]) => [
        name,
        Object.fromEntries(
          Object.entries(entries)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([key, entry]) => [
              key,
              {
                perRequest: round(entry.count / Math.max(1, requests), 2)!,
                meanMs: round(entry.totalMs / entry.count, 2)!,
                p99Ms: round(entry.p99Ms, 2)!,
              },
            ]),
        ),
      ]),
    );
  }
  return {
    runtime: target.runtime.name,
    scenario,
    clients,
    requests,
    errors,
    ...(firstError !== undefined ? { firstError } : {}),
    durationMs: windowMs,
    throughput: (requests * 1000) / Math.max(windowMs, 1e-9),
    ...latencySummary(samples),
    cpuMsPerRequest:
      known.length > 0
        ? round(
            known.reduce((sum, value) => sum + value, 0),
            3,
          )
        : null,
    cpuMsPerRequestByProcess: byProcess,
    roundsP50Ms: rounds.map((r) => round(latencySummary(r.samples).p50Ms)!),
    loadGeneratorCpuPercent: round((100 * rounds.reduce((sum, r) => sum + r.selfMs, 0)) / windowMs, 1),
    otherCpuPercent: rounds.every((r) => r.otherCpuMs !== null)
      ? round((100 * rounds.reduce((sum, r) => sum + r.otherCpuMs!, 0)) / windowMs, 1)
      : null,
    stealPercent: rounds.every((r) => r.stealMs !== null)
      ? round((100 * rounds.reduce((sum, r) => sum + r.stealMs!, 0)) / windowMs, 1)
      : null,
    ...(hops ? { hops } : {}),
  };
}

/**
 * Every scenario and client count, `--rounds` windows per runtime, the runtimes alternating (embedded first in odd
 * rounds, distributed first in even ones) so that a slow spell of the machine hits both. After each distributed
 * `authorize` window the webhooks service is let finish the events it produced, so that its work does not spill
 * into the next window.
 */
async function loadPhases(targets: readonly Target[], kafka: Kafka | null): Promise<Measured[]> {
  const results: Measured[] = [];
  for (const target of targets) {
    if (options.initialWarmupMs <= 0) break;
    log(`${target.runtime.name}: ${options.initialWarmupMs / 1000} s of warm-up (authorize, 4 clients)`);
    await runLoad({
      concurrency: 4,
      durationMs: options.initialWarmupMs,
      request: async () => void target.ids.push((await authorize(target.api)).id),
    });
    // A new group reads transactions.events from its beginning: on a broker that kept earlier runs' events, the
    // usage projections and split tender's requests read all of them first — not in a measured window.
    if (kafka) {
      const waitedMs = await waitForConsumerGroups(kafka, {
        topic: transactionsTopic,
        groupIds: followersOf(target.runtime),
        timeoutMs: 10 * 60_000,
        stableMs: 500,
      });
      if (waitedMs > 1_000)
        log(`${target.runtime.name}: waited ${(waitedMs / 1000).toFixed(1)} s for its consumer groups to catch up`);
    }
  }
  for (const scenario of SCENARIOS.filter((name) => options.scenarios.includes(name))) {
    for (const clients of options.clients) {
      const rounds = new Map<Target, Round[]>(targets.map((target) => [target, []]));
      for (let n = 0; n < options.rounds; n += 1) {
        const order = n % 2 === 0 ? targets : [...targets].reverse();
        for (const target of order) {
          rounds.get(target)!.push(await measureRound(target, scenario, clients));
          if (scenario !== 'get' && kafka)
            await waitForConsumerGroups(kafka, {
              topic: transactionsTopic,
              groupIds: followersOf(target.runtime),
              timeoutMs: 5 * 60_000,
              stableMs: 500,
            });
        }
      }
      for (const target of targets) {
        const result = merge(target, scenario, clients, rounds.get(target)!);
        log(
          `${target.runtime.name.padEnd(11)} ${scenario.padEnd(9)} @${String(clients).padEnd(2)}  ${result.throughput.toFixed(0).padStart(5)} req/s  p50 ${result.p50Ms.toFixed(2)} ms (rounds ${result.roundsP50Ms.join(', ')})  p99 ${result.p99Ms.toFixed(2)} ms  errors ${result.errors}${result.firstError ? ` (${result.firstError})` : ''}`,
        );
        results.push(result);
      }
    }
  }
  return results;
}

// ---- event lag ----------------------------------------------------------------------------------------------------

interface LagStats {
  readonly count: number;
  readonly p50Ms: number | null;
  readonly p95Ms: number | null;
  readonly p99Ms: number | null;
  readonly maxMs: number | null;
}

function lagStats(samples: readonly number[]): LagStats {
  if (samples.length === 0) return { count: 0, p50Ms: null, p95Ms: null, p99Ms: null, maxMs: null };
  const summary = latencySummary(samples);
  return {
    count: samples.length,
    p50Ms: round(summary.p50Ms, 1),
    p95Ms: round(summary.p95Ms, 1),
    p99Ms: round(summary.p99Ms, 1),
    maxMs: round(Math.max(...samples), 1),
  };
}

interface KafkaSeen {
  readonly streamId: string;
  readonly type: string;
  readonly recordedAtMs: number;
  readonly arrivedAtMs: number;
}

/** The consumer groups of a runtime that follow transactions.events (none for the embedded one). */
function followersOf(runtime: Runtime): string[] {
  const env = runtime.env;
  return [
    ...(runtime.processes.webhooks && env.WEBHOOKS_CONSUMER_GROUP ? [env.WEBHOOKS_CONSUMER_GROUP] : []),
    ...groupsReadingTransactionsFromTheBeginning(env),
  ];
}

/** The event lag of a runtime; `kafka` null for the embedded one (no Kafka hop to watch). */
async function eventLag(runtime: Runtime, api: Api, kafka: Kafka | null) {
  let drainMs = 0;
  if (kafka) {
    log(`event lag (${runtime.name}): waiting for the webhooks service to consume the load phases' events`);
    drainMs = await waitForConsumerGroups(kafka, {
      topic: transactionsTopic,
      groupIds: [runtime.env.WEBHOOKS_CONSUMER_GROUP!],
      timeoutMs: 10 * 60_000,
      stableMs: 2_000,
    });
    log(`event lag (${runtime.name}): backlog consumed (waited ${(drainMs / 1000).toFixed(1)} s)`);
  }

  // Kafka: every message of transactions.events from now on, with its arrival time.
  const seen = new Map<string, KafkaSeen>();
  const consumer = kafka?.consumer({ groupId: `bench-lag-${randomUUID()}`, maxWaitTimeInMs: 100 });
  if (consumer) {
    const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
    await consumer.connect();
    await consumer.subscribe({ topics: [transactionsTopic], fromBeginning: false });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const arrivedAtMs = Date.now();
        try {
          const event = JSON.parse(message.value?.toString() ?? '') as {
            id: string;
            stream_id: string;
            type: string;
            recorded_at: string;
          };
          if (!seen.has(event.id))
            seen.set(event.id, {
              streamId: event.stream_id,
              type: event.type,
              recordedAtMs: Date.parse(event.recorded_at),
              arrivedAtMs,
            });
        } catch {
          // not an event message
        }
      },
    });
    await joined;
  }

  const receiver = new BenchWebhookReceiver();
  await receiver.start();
  try {
    await api.http.request('POST', '/webhook-subscriptions', {
      headers: api.headers,
      body: {
        url: receiver.url,
        merchant_account_id: MERCHANT,
        event_names: TRANSACTION_EVENT_NAMES,
        description: 'bench event lag',
      },
    });
    await sleep(1_000);

    // The stream: open loop, one authorization every 1000/rate ms; warm-up first, not counted.
    const interval = 1000 / options.lagRate;
    const total = Math.round(options.lagRate * (LAG_WARMUP_SECONDS + options.lagSeconds));
    const warmupCount = Math.round(options.lagRate * LAG_WARMUP_SECONDS);
    const measuredIds = new Set<string>();
    const answerMs: number[] = [];
    let errors = 0;
    let firstError: string | undefined;
    const pending: Promise<void>[] = [];
    const streamStart = performance.now();
    log(`event lag (${runtime.name}): ${total} authorizations at ${options.lagRate}/s (${warmupCount} of warm-up)`);
    for (let k = 0; k < total; k += 1) {
      const due = streamStart + k * interval;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const t0 = performance.now();
      pending.push(
        authorize(api).then(
          (created) => {
            if (k >= warmupCount) {
              measuredIds.add(created.id);
              answerMs.push(performance.now() - t0);
            }
          },
          (error: unknown) => {
            errors += 1;
            firstError ??= error instanceof Error ? error.message : String(error);
          },
        ),
      );
    }
    await Promise.all(pending);
    const streamSeconds = (performance.now() - streamStart) / 1000;

    const authorizedReceived = () =>
      [...receiver.deliveries.values()].filter(
        (delivery) =>
          delivery.name === 'transaction.authorized' &&
          delivery.targetId !== null &&
          measuredIds.has(delivery.targetId),
      ).length;
    const deadline = Date.now() + 60_000;
    while (authorizedReceived() < measuredIds.size && Date.now() < deadline) await sleep(100);
    await sleep(1_000); // stragglers of other names

    const measuredStreams = new Set([...measuredIds].map((id) => `transaction-${id}`));
    const appendToKafka: number[] = [];
    for (const event of seen.values())
      if (measuredStreams.has(event.streamId)) appendToKafka.push(event.arrivedAtMs - event.recordedAtMs);
    const appendToWebhook: number[] = [];
    const kafkaToWebhook: number[] = [];
    let withoutKafka = 0;
    for (const delivery of receiver.deliveries.values()) {
      if (delivery.targetId === null || !measuredIds.has(delivery.targetId)) continue;
      const event = seen.get(delivery.eventId);
      if (event) {
        appendToWebhook.push(delivery.arrivedAtMs - event.recordedAtMs);
        kafkaToWebhook.push(delivery.arrivedAtMs - event.arrivedAtMs);
      } else {
        // Not seen on Kafka by our consumer: the body's created_at (occurred_at, the event's own time) instead.
        withoutKafka += 1;
        appendToWebhook.push(delivery.arrivedAtMs - delivery.createdAtMs);
      }
    }
    const result = {
      runtime: runtime.name,
      appendTime: kafka ? 'recorded_at on Kafka' : "the webhook body's created_at (the event's own time)",
      rate: options.lagRate,
      seconds: options.lagSeconds,
      authorizations: measuredIds.size,
      streamSeconds: round(streamSeconds, 1),
      errors,
      ...(firstError ? { firstError } : {}),
      authorizeAnswer: lagStats(answerMs),
      appendToKafka: lagStats(appendToKafka),
      kafkaToWebhook: lagStats(kafkaToWebhook),
      appendToWebhook: lagStats(appendToWebhook),
      webhooksMissing: measuredIds.size - authorizedReceived(),
      webhooksTimedWithoutKafka: withoutKafka,
      webhookRepeats: receiver.repeats,
      backlogWaitMs: drainMs,
    };
    return result;
  } finally {
    await receiver.stop();
    await consumer?.disconnect().catch(() => undefined);
  }
}

// ---- report -------------------------------------------------------------------------------------------------------

const fmt = (value: number | null | undefined, digits = 2) =>
  value === null || value === undefined || Number.isNaN(value) ? '—' : value.toFixed(digits);

const signed = (value: number | null | undefined) =>
  value === null || value === undefined || Number.isNaN(value) ? '—' : `${value >= 0 ? '+' : ''}${value.toFixed(2)}`;

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ')} |`;
  return [
    line(headers),
    `|${widths.map((width, i) => (i === 0 ? `:${'-'.repeat(width + 1)}` : `${'-'.repeat(width + 1)}:`)).join('|')}|`,
    ...rows.map(line),
  ].join('\n');
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const redis = await probeRedis();
  if (!redis.available)
    throw new Error(`Redis is not reachable (${redis.reason}): start it on ${defaultRedisUrl()} (REDIS_URL)`);
  let kafkaStartedByUs = false;
  if (kafkaScript('status') !== 0) {
    log('Kafka is not running: bash scripts/kafka.sh start (stopped again at the end)');
    if (kafkaScript('start') !== 0) throw new Error('bash scripts/kafka.sh start failed');
    // `start` also succeeds by using another checkout's broker on the port: only ours is stopped at the end.
    kafkaStartedByUs = kafkaScript('status') === 0;
  }
  if (options.profile.length > 0) fs.mkdirSync(profileDir, { recursive: true });
  if (options.trace) fs.mkdirSync(traceDir, { recursive: true });

  let simulator: Simulator | null = null;
  let embedded: Runtime | null = null;
  let distributed: Runtime | null = null;
  const kafka = new Kafka({
    clientId: 'bench-distributed',
    brokers: kafkaBrokersForTests(),
    logLevel: logLevel.NOTHING,
  });
  const results: Measured[] = [];
  let lag: Awaited<ReturnType<typeof eventLag>> | null = null;
  let embeddedLag: Awaited<ReturnType<typeof eventLag>> | null = null;
  const apis: Api[] = [];
  try {
    simulator = await startSimulatorProcess();
    const targets: Target[] = [];
    if (options.embedded) {
      log('embedded runtime (npm start): starting');
      embedded = await startEmbeddedRuntime(simulator);
      const api = await prepare(embedded);
      apis.push(api);
      targets.push({ runtime: embedded, api, cpuPids: embedded.pids, ids: [] });
    }
    log(`distributed runtime: starting${options.profile.length ? ` (profiling ${options.profile.join(', ')})` : ''}`);
    distributed = await startDistributed(simulator);
    const api = await prepare(distributed);
    apis.push(api);
    const infraPids: Record<string, number> = {};
    const kafkaProcess = kafkaPid() ?? listenerPid(Number(kafkaBrokersForTests()[0]!.split(':')[1] ?? 9092));
    if (kafkaProcess) infraPids.kafka = kafkaProcess;
    const redisPid = listenerPid(Number(new URL(defaultRedisUrl()).port || 6379));
    if (redisPid) infraPids.redis = redisPid;
    targets.push({ runtime: distributed, api, cpuPids: { ...distributed.pids, ...infraPids }, ids: [] });

    if (options.idleSeconds > 0) await idleCpu(targets);
    if (!options.lagOnly) results.push(...(await loadPhases(targets, kafka)));
    if (embedded) {
      if (options.lag) embeddedLag = await eventLag(embedded, apis[0]!, null);
      await embedded.stop();
      embedded = null;
    }
    if (options.lag && distributed.processes.webhooks) lag = await eventLag(distributed, api, kafka);
  } finally {
    for (const api of apis) api.http.close();
    await embedded?.stop().catch(() => undefined);
    await distributed?.stop().catch(() => undefined);
    await simulator?.process.kill('SIGTERM').catch(() => undefined);
    if (kafkaStartedByUs) {
      log('stopping Kafka (it was not running before)');
      kafkaScript('stop');
    }
  }

  // ---- comparison and output ----
  const find = (runtimeName: Runtime['name'], scenario: Scenario, clients: number) =>
    results.find((r) => r.runtime === runtimeName && r.scenario === scenario && r.clients === clients);
  const comparison = SCENARIOS.flatMap((scenario) =>
    options.clients.map((clients) => {
      const embedded = find('embedded', scenario, clients);
      const distributed = find('distributed', scenario, clients);
      return {
        scenario,
        clients,
        embeddedP50Ms: round(embedded?.p50Ms),
        distributedP50Ms: round(distributed?.p50Ms),
        addedP50Ms: embedded && distributed ? round(distributed.p50Ms - embedded.p50Ms) : null,
        embeddedP99Ms: round(embedded?.p99Ms),
        distributedP99Ms: round(distributed?.p99Ms),
        throughputRatio: embedded && distributed ? round(distributed.throughput / embedded.throughput, 3) : null,
      };
    }),
  );
  const authorizeAdded = comparison.filter((row) => row.scenario === 'authorize' && row.addedP50Ms !== null);
  const targets = {
    distributedAuthorizeP50: {
      target: 'distributed authorize p50 <= embedded p50 + 3 ms',
      byClients: Object.fromEntries(
        authorizeAdded.map((row) => [row.clients, { addedMs: row.addedP50Ms, met: (row.addedP50Ms ?? Infinity) <= 3 }]),
      ),
    },
    eventLagP99: lag
      ? {
          target: 'append -> webhook first attempt p99 <= 250 ms',
          p99Ms: lag.appendToWebhook.p99Ms,
          met: lag.appendToWebhook.p99Ms !== null && lag.appendToWebhook.p99Ms <= 250 && lag.webhooksMissing === 0,
        }
      : null,
    embeddedEventLagP99: embeddedLag
      ? {
          target: 'append -> webhook first attempt p99 <= 250 ms (embedded)',
          p99Ms: embeddedLag.appendToWebhook.p99Ms,
          met:
            embeddedLag.appendToWebhook.p99Ms !== null &&
            embeddedLag.appendToWebhook.p99Ms <= 250 &&
            embeddedLag.webhooksMissing === 0,
        }
      : null,
  };

  const rows = results.map((r) => {
    const embedded = r.runtime === 'distributed' ? find('embedded', r.scenario, r.clients) : undefined;
    return [
      `${r.runtime} ${r.scenario} @${r.clients}`,
      r.throughput.toFixed(0),
      fmt(r.p50Ms),
      fmt(r.p95Ms),
      fmt(r.p99Ms),
      embedded ? signed(r.p50Ms - embedded.p50Ms) : '',
      fmt(r.cpuMsPerRequest),
      String(r.errors),
      `${fmt(r.loadGeneratorCpuPercent, 0)} / ${fmt(r.otherCpuPercent, 0)} / ${fmt(r.stealPercent, 0)}`,
    ];
  });
  process.stdout.write(
    `\nDistributed vs embedded (${machine().cpus} × ${machine().cpuModel}, Node ${process.version}; ${options.rounds} × (${options.warmupMs / 1000} s warm-up + ${options.durationMs / 1000} s) per row, runtimes alternating)\n\n`,
  );
  process.stdout.write(
    `${table(['scenario', 'req/s', 'p50 ms', 'p95 ms', 'p99 ms', 'p50 vs embedded', 'CPU ms/req', 'errors', 'CPU % bench/other/steal'], rows)}\n`,
  );
  if (results.some((r) => r.runtime === 'distributed')) {
    const pidNames = Object.keys(results.find((r) => r.runtime === 'distributed')!.cpuMsPerRequestByProcess);
    process.stdout.write(`\nCPU ms per request by process (distributed)\n\n`);
    process.stdout.write(
      `${table(
        ['scenario', ...pidNames],
        results
          .filter((r) => r.runtime === 'distributed')
          .map((r) => [
            `${r.scenario} @${r.clients}`,
            ...pidNames.map((name) => fmt(r.cpuMsPerRequestByProcess[name], 3)),
          ]),
      )}\n`,
    );
  }
  for (const r of results.filter((entry) => entry.hops && entry.clients === Math.min(...options.clients))) {
    process.stdout.write(
      `\nHops of ${r.runtime} ${r.scenario} @${r.clients} (--trace; p50 ${fmt(r.p50Ms)} ms at the client)\n\n`,
    );
    const hopRows = Object.entries(r.hops!).flatMap(([name, entries]) =>
      Object.entries(entries)
        .filter(([, entry]) => entry.perRequest >= 0.05)
        .map(([key, entry]) => [`${name}: ${key}`, fmt(entry.perRequest), fmt(entry.meanMs), fmt(entry.p99Ms)]),
    );
    process.stdout.write(`${table(['process: hop', 'per request', 'mean ms', 'p99 ms'], hopRows)}\n`);
  }
  for (const measured of [embeddedLag, lag]) {
    if (!measured) continue;
    process.stdout.write(
      `\nEvent lag, ${measured.runtime} (append time: ${measured.appendTime}): ${measured.authorizations} authorizations at ${measured.rate}/s for ${measured.seconds} s (errors ${measured.errors}; webhooks missing ${measured.webhooksMissing}; repeats ${measured.webhookRepeats})\n\n`,
    );
    const lagRow = (what: string, stats: LagStats) => [
      what,
      String(stats.count),
      fmt(stats.p50Ms, 1),
      fmt(stats.p95Ms, 1),
      fmt(stats.p99Ms, 1),
      fmt(stats.maxMs, 1),
    ];
    process.stdout.write(
      `${table(
        ['hop', 'count', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms'],
        [
          lagRow('POST /transactions answer', measured.authorizeAnswer),
          ...(measured.appendToKafka.count > 0
            ? [
                lagRow('append → Kafka consumer', measured.appendToKafka),
                lagRow('Kafka consumer → webhook', measured.kafkaToWebhook),
              ]
            : []),
          lagRow('append → webhook 1st attempt', measured.appendToWebhook),
        ],
      )}\n`,
    );
  }
  process.stdout.write('\nTargets\n');
  for (const row of authorizeAdded)
    process.stdout.write(
      `  distributed authorize @${row.clients} p50 ${fmt(row.distributedP50Ms)} ms vs embedded ${fmt(row.embeddedP50Ms)} ms: ${signed(row.addedP50Ms)} ms (target ≤ +3 ms) ${(row.addedP50Ms ?? Infinity) <= 3 ? 'MET' : 'NOT MET'}\n`,
    );
  if (targets.embeddedEventLagP99)
    process.stdout.write(
      `  event lag append → webhook p99, embedded ${fmt(targets.embeddedEventLagP99.p99Ms, 1)} ms (target ≤ 250 ms) ${targets.embeddedEventLagP99.met ? 'MET' : 'NOT MET'}\n`,
    );
  if (targets.eventLagP99)
    process.stdout.write(
      `  event lag append → webhook p99, distributed ${fmt(targets.eventLagP99.p99Ms, 1)} ms (target ≤ 250 ms) ${targets.eventLagP99.met ? 'MET' : 'NOT MET'}\n`,
    );

  const report = {
    benchmark: 'distributed',
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: machine(),
    settings: {
      durationMs: options.durationMs,
      warmupMs: options.warmupMs,
      rounds: options.rounds,
      initialWarmupMs: options.initialWarmupMs,
      clients: options.clients,
      lagRate: options.lagRate,
      lagSeconds: options.lagSeconds,
      lagWarmupSeconds: LAG_WARMUP_SECONDS,
      profile: options.profile,
      trace: options.trace,
      without: options.without,
      kafkaStartedByBenchmark: kafkaStartedByUs,
      notes: [
        'authorize = POST /transactions (card 4111…, amount 1000 USD, intent authorize) through one shared mock-card simulator process; get = GET /transactions/{id}',
        'one ES512 token reused; closed loop (bench/lib/load.ts, node:http keep-alive)',
        'CPU ms/req = sum over the runtime processes (simulator included; Kafka and Redis for distributed)',
        "event lag: append time = recorded_at of the Kafka message (the event store's append time) for distributed, the webhook body's created_at (the event's own time) for embedded; services on their default POLL_INTERVAL_MS, WEBHOOK_WORKER_INTERVAL_MS",
      ],
    },
    results: results.map((r) => ({
      runtime: r.runtime,
      scenario: r.scenario,
      clients: r.clients,
      requests: r.requests,
      errors: r.errors,
      ...(r.firstError ? { firstError: r.firstError } : {}),
      throughput: round(r.throughput, 1),
      p50Ms: round(r.p50Ms),
      p95Ms: round(r.p95Ms),
      p99Ms: round(r.p99Ms),
      roundsP50Ms: r.roundsP50Ms,
      loadGeneratorCpuPercent: r.loadGeneratorCpuPercent,
      otherCpuPercent: r.otherCpuPercent,
      stealPercent: r.stealPercent,
      cpuMsPerRequest: r.cpuMsPerRequest,
      cpuMsPerRequestByProcess: r.cpuMsPerRequestByProcess,
      ...(r.hops ? { hops: r.hops } : {}),
    })),
    comparison,
    eventLag: lag,
    embeddedEventLag: embeddedLag,
    targets,
  };
  fs.mkdirSync(options.outDir, { recursive: true });
  const stamp = runStamp;
  // A diagnostic run (instrumented processes) is kept beside the others but is never the latest figures.
  const diagnostic =
    options.trace ||
    options.profile.length > 0 ||
    options.without.length > 0 ||
    options.lagOnly ||
    !DEFAULT_SCENARIOS.every((scenario) => options.scenarios.includes(scenario));
  const file = path.join(
    options.outDir,
    `distributed-${stamp}-${os.hostname()}${diagnostic ? '-diagnostic' : ''}.json`,
  );
  fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  if (!diagnostic)
    fs.writeFileSync(path.join(options.outDir, 'distributed-latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(
    `\nwritten: ${path.relative(repoRoot, file)}${diagnostic ? ' (diagnostic run: distributed-latest.json left as it was)' : ' and distributed-latest.json'}\n`,
  );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `bench:distributed failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
