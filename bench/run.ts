/**
 * `npm run bench`: the embedded runtime under load, next to its baselines, in one run on one machine.
 *
 * 1. Baselines, each a child process driven by the same load generator (bench/lib/load.ts): the raw ES512
 *    verification rate (node:crypto, one worker thread per core), the floor for `authorize` (bare Fastify: parse
 *    JSON, one durable SQLite commit of an event-sized row, one loopback call to the simulator, JSON reply) and
 *    NestJS-on-Fastify hello world, at 1, 16 and 64 clients.
 * 2. `npm start`'s entry as a child process on a free loopback port, fresh DATA_DIR, LOG_LEVEL=silent, the
 *    in-process simulator (zero latency: amount 1000 is approved at once); an administrator API key made with the
 *    CLI before it starts, and one `mock-card` connection on `default`.
 * 3. Scenarios at 1, 16 and 64 clients: authorize, capture, refund, get, list, auth-fresh, auth-reused.
 * 4. One table (each figure with its baseline and the ratio), issue 21's targets (met / not met, with the numbers:
 *    those of this run, then the event lag and memory targets as bench/results/distributed-latest.json and
 *    soak-latest.json recorded them), JSON in bench/results/<ISO date>-<hostname>.json and bench/results/latest.json.
 *
 * Environment: BENCH_DURATION_MS (measured window, default 8000), BENCH_WARMUP_MS (default 3000), BENCH_QUICK=1
 * (1 s windows, 300 ms warm-up: a smoke run), BENCH_CLIENTS (default 1,16,64), BENCH_SCENARIOS (a subset, comma
 * separated), BENCH_BASELINES=0 (skip the baselines), BENCH_BASELINE_ROUNDS (default 2: one round of baselines
 * before the scenarios and one after, the ratios use their mean; 1 in quick mode), BENCH_CPU_PROF=<dir> (run the
 * service with --cpu-prof into <dir>), BENCH_SQLITE_TXN=<file> (the service's SQLite transactions timed on its main
 * thread, a table written to <file> when it stops: bench/lib/sqlite-txn-probe.cjs), BENCH_NO_WRITE=1 (print only),
 * BENCH_KEEP_DATA=1 (the service's data directory stays, its path printed: e.g. the transactions.db that
 * bench/transactions-list.bench.ts --db reads).
 *
 * Each window also records what else used the machine (`host`: busy cores, cores used by other processes, steal):
 * on a shared 2-core VM a figure taken while something else ran is not comparable, and the line says so.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  HttpClient,
  machineCpu,
  processCpuMs,
  processRssBytes,
  runLoad,
  type LoadOptions,
  type LoadResult,
} from './lib/load';
import {
  averageRuns,
  describeMachine,
  hostShare,
  evaluateTargets,
  formatBaselinesTable,
  formatResultsTable,
  formatTargets,
  recordedTargets,
  reportRows,
  resultFileName,
  type BaselineRun,
  type Es512Rate,
  type HostShare,
  type ScenarioName,
  type ScenarioRun,
} from './lib/report';
import { repoRoot, startBaseline, startEmbeddedService, startTs, type EmbeddedService } from './lib/service';
import { signEs512Token, TokenPool } from './lib/tokens';

const quick = process.env.BENCH_QUICK === '1';

/** A result file of another bench command in bench/results (as committed), or null when there is none. */
function readResults<T>(name: string): T | null {
  const file = path.join(repoRoot, 'bench/results', name);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : null;
}
const durationMs = Number(process.env.BENCH_DURATION_MS ?? (quick ? 1000 : 8000));
const warmupMs = Number(process.env.BENCH_WARMUP_MS ?? (quick ? 300 : 3000));
const clientCounts = (process.env.BENCH_CLIENTS ?? '1,16,64').split(',').map(Number);
const allScenarios: readonly ScenarioName[] = [
  'authorize',
  'capture',
  'refund',
  'get',
  'list',
  'auth-fresh',
  'auth-reused',
];
const scenarios = process.env.BENCH_SCENARIOS
  ? (process.env.BENCH_SCENARIOS.split(',') as ScenarioName[])
  : allScenarios;
const withBaselines = process.env.BENCH_BASELINES !== '0';
const cpuProfDir = process.env.BENCH_CPU_PROF;
const sqliteTxnFile = process.env.BENCH_SQLITE_TXN;
const windowSeconds = (warmupMs + durationMs) / 1000;
const baselineRounds = Number(process.env.BENCH_BASELINE_ROUNDS ?? (quick ? 1 : 2));

/** The authenticated endpoint of the auth scenarios: cheap, read-only, answered by the gateway and identity. */
const AUTH_PATH = '/roles';
const authorizeBody = {
  amount: 1000,
  currency: 'USD',
  intent: 'authorize',
  payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30', security_code: '123' },
};

const log = (line: string) => process.stdout.write(`${line}\n`);
const fmt = (value: number, digits = 0) => value.toFixed(digits);
const summary = (r: LoadResult & { host?: HostShare | null }) =>
  `${fmt(r.throughput)} req/s, p50 ${fmt(r.p50Ms, 2)} ms, p99 ${fmt(r.p99Ms, 2)} ms, CPU ${r.cpuMsPerRequest === null ? 'n/a' : fmt(r.cpuMsPerRequest, 3)} ms/req, errors ${r.errors}${r.firstError ? ` (${r.firstError})` : ''}` +
  (r.host && (process.env.BENCH_VERBOSE === '1' || isSkewed(r.host))
    ? ` [machine ${fmt(r.host.busyCores, 2)} cores busy, other processes ${fmt(r.host.otherCores, 2)} cores, steal ${fmt(r.host.stealPct, 1)}%${isSkewed(r.host) ? ': skewed' : ''}]`
    : '');
/** Another process used at least 0.15 core on average during the window, or the hypervisor took 5% of it. */
const isSkewed = (host: HostShare | null | undefined) =>
  host !== null && host !== undefined && (host.otherCores >= 0.15 || host.stealPct >= 5);

/** runLoad, plus what else used the machine during the window (warm-up included). */
async function measure(options: LoadOptions & { cpuPid: number }): Promise<LoadResult & { host: HostShare | null }> {
  const before = machineCpu();
  const ownBefore = (processCpuMs(process.pid) ?? 0) + (processCpuMs(options.cpuPid) ?? 0);
  const t0 = performance.now();
  const result = await runLoad(options);
  const wallMs = performance.now() - t0;
  const after = machineCpu();
  const ownAfter = (processCpuMs(process.pid) ?? 0) + (processCpuMs(options.cpuPid) ?? 0);
  return { ...result, host: before && after ? hostShare(before, after, wallMs, ownAfter - ownBefore) : null };
}

/** Runs exactly `count` calls, `concurrency` at a time (pool preparation, not measured). */
async function runCount(count: number, concurrency: number, call: () => Promise<void>): Promise<void> {
  let started = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(concurrency, count)) }, async () => {
      while (started < count) {
        started += 1;
        await call();
      }
    }),
  );
}

async function es512Rate(): Promise<Es512Rate & { host: HostShare | null }> {
  const before = machineCpu();
  const ownBefore = processCpuMs(process.pid) ?? 0;
  const t0 = performance.now();
  const child = startTs(
    'bench/baselines/es512-rate.ts',
    {},
    [],
    ['--ms', String(Math.max(1000, Math.min(durationMs, 5000))), '--warmup-ms', String(Math.min(warmupMs, 1000))],
  );
  const code = await new Promise<number | null>((resolve) => child.child.once('exit', resolve));
  const wallMs = performance.now() - t0;
  const after = machineCpu();
  const line = child
    .output()
    .split('\n')
    .find((l) => l.startsWith('{'));
  if (code !== 0 || !line) throw new Error(`es512-rate failed (${code}): ${child.output()}`);
  const { cpuMs, ...rate } = JSON.parse(line) as Es512Rate & { cpuMs: number };
  const own = (processCpuMs(process.pid) ?? 0) - ownBefore + cpuMs;
  return { ...rate, host: before && after ? hostShare(before, after, wallMs, own) : null };
}

async function httpBaseline(name: 'bare-fastify' | 'nest-hello', round: number): Promise<BaselineRun[]> {
  const entry = name === 'bare-fastify' ? 'bench/baselines/bare-fastify.ts' : 'bench/baselines/nest-hello.ts';
  const server = await startBaseline(entry);
  const runs: BaselineRun[] = [];
  try {
    for (const clients of clientCounts) {
      const client = new HttpClient(server.url, { maxSockets: clients });
      const request =
        name === 'bare-fastify'
          ? async () => {
              const answer = JSON.parse(
                (await client.request('POST', '/transactions', { body: authorizeBody })).body,
              ) as { status: string };
              if (answer.status !== 'authorization_succeeded') throw new Error(`floor answered ${answer.status}`);
            }
          : async () => {
              JSON.parse((await client.request('GET', '/hello')).body);
            };
      const result = await measure({ concurrency: clients, durationMs, warmupMs, request, cpuPid: server.pid });
      client.close();
      log(`  ${name}@${clients}: ${summary(result)}`);
      runs.push({ baseline: name, round, clients, ...result });
    }
  } finally {
    await server.stop();
  }
  return runs;
}

interface Transaction {
  readonly id: string;
  readonly status: string;
}

/** Runs everything; answers whether every scenario answered without errors (null: nothing measured). */
async function main(): Promise<boolean | null | undefined> {
  const startedAt = new Date();
  const machine = describeMachine();
  log(
    `Switchyard embedded benchmark: ${machine.cpuCount} x ${machine.cpuModel}, ${fmt(machine.ramBytes / 2 ** 30, 1)} GiB, Node ${machine.node}, ${machine.os}`,
  );
  log(
    `windows: ${warmupMs} ms warm-up (not recorded) + ${durationMs} ms measured; clients ${clientCounts.join(', ')}${quick ? ' (BENCH_QUICK)' : ''}`,
  );
  if (machine.loadAverageAtStart[0]! > 0.5)
    log(
      `note: load average at start ${machine.loadAverageAtStart.join(' ')}: other work on this machine skews the figures`,
    );

  // 1. Baselines while the service is not running (nothing else of ours is using the CPU): one round now, one after
  // the scenarios (BENCH_BASELINE_ROUNDS); the ratios use the mean of the rounds not skewed by other work.
  const es512Rounds: (Es512Rate & { round: number; host: HostShare | null })[] = [];
  const baselineRuns: BaselineRun[] = [];
  const baselineRound = async (round: number) => {
    log(`baselines, round ${round}:`);
    const rate = await es512Rate();
    es512Rounds.push({ ...rate, round });
    log(
      `  es512-rate: ${fmt(rate.verificationsPerSecond)} verifications/s on ${rate.workers} worker threads${rate.host && (process.env.BENCH_VERBOSE === '1' || isSkewed(rate.host)) ? ` [other processes ${fmt(rate.host.otherCores, 2)} cores, steal ${fmt(rate.host.stealPct, 1)}%${isSkewed(rate.host) ? ': skewed' : ''}]` : ''}`,
    );
    baselineRuns.push(...(await httpBaseline('bare-fastify', round)));
    baselineRuns.push(...(await httpBaseline('nest-hello', round)));
  };
  if (withBaselines) await baselineRound(1);

  // 2. The service.
  const service: EmbeddedService = await startEmbeddedService({
    nodeArgs: [
      ...(cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(cpuProfDir)] : []),
      ...(sqliteTxnFile ? ['-r', path.join(repoRoot, 'bench/lib/sqlite-txn-probe.cjs')] : []),
    ],
    ...(sqliteTxnFile ? { env: { SQLITE_TXN_PROBE_FILE: path.resolve(sqliteTxnFile) } } : {}),
  });
  const rssSamples: number[] = [];
  const rssTimer = setInterval(() => {
    const rss = processRssBytes(service.pid);
    if (rss !== null) rssSamples.push(rss);
  }, 1000);
  const scopes = ['*.read', '*.write'];
  const token = signEs512Token(service.key, scopes, 3600);
  const headers = { authorization: `Bearer ${token}` };
  const setup = new HttpClient(service.url, { maxSockets: 16 });
  const tokenPool = new TokenPool(service.key, ['*.read'], 3600);
  const runs: ScenarioRun[] = [];
  const authorized: string[] = [];
  const captured: string[] = [];
  const allIds: string[] = [];
  let tokensSigned = 0;
  try {
    await setup.request('POST', '/payment-services', {
      headers,
      body: {
        display_name: 'Bench cards',
        payment_service_definition_id: 'mock-card',
        fields: [{ key: 'merchant_id', value: 'bench' }],
        accepted_currencies: ['USD'],
        accepted_countries: ['US'],
      },
    });

    const authorizeWith = async (client: HttpClient) => {
      const tx = await client.json<Transaction>('POST', '/transactions', { headers, body: authorizeBody });
      if (tx.status !== 'authorization_succeeded') throw new Error(`authorize answered ${tx.status}`);
      authorized.push(tx.id);
      allIds.push(tx.id);
    };
    const captureWith = async (client: HttpClient) => {
      const id = authorized.pop();
      if (id === undefined) throw new Error('no authorized transaction left to capture (pool too small)');
      const tx = await client.json<Transaction>('POST', `/transactions/${id}/capture`, { headers, body: {} });
      if (tx.status !== 'capture_succeeded') throw new Error(`capture answered ${tx.status}`);
      captured.push(id);
    };
    const refundWith = async (client: HttpClient) => {
      const id = captured.pop();
      if (id === undefined) throw new Error('no captured transaction left to refund (pool too small)');
      const refund = await client.json<{ status: string }>('POST', `/transactions/${id}/refunds`, {
        headers,
        body: {},
      });
      if (refund.status !== 'succeeded') throw new Error(`refund answered ${refund.status}`);
    };
    const best = (scenario: ScenarioName) =>
      Math.max(0, ...runs.filter((r) => r.scenario === scenario).map((r) => r.throughput));
    /** Enough items for a window at up to twice the fastest rate seen so far for the related scenarios. */
    const needed = (rate: number) => Math.ceil(rate * 2 * windowSeconds) + 100;

    // Something to read and to capture even when `authorize` is not in BENCH_SCENARIOS.
    await runCount(quick ? 200 : 500, 16, () => authorizeWith(setup));

    log('scenarios (embedded runtime, `npm start`):');
    for (const scenario of scenarios) {
      for (const clients of clientCounts) {
        // Pools are filled before the measured window, never during it.
        if (scenario === 'capture') {
          const need = needed(Math.max(best('authorize'), best('capture'), 200));
          if (authorized.length < need) await runCount(need - authorized.length, 16, () => authorizeWith(setup));
        } else if (scenario === 'refund') {
          const need = needed(Math.max(best('capture'), best('refund'), 200));
          if (captured.length < need) {
            const missing = need - captured.length;
            if (authorized.length < missing)
              await runCount(missing - authorized.length, 16, () => authorizeWith(setup));
            await runCount(missing, 16, () => captureWith(setup));
          }
        } else if (scenario === 'auth-fresh') {
          // The service cannot verify faster than the raw rate of all cores; 1.5x covers the run-to-run spread.
          const rawRate = Math.max(600, ...es512Rounds.map((r) => r.verificationsPerSecond));
          const need = Math.ceil(rawRate * 1.5 * windowSeconds) + 100;
          const before = tokenPool.size;
          await tokenPool.fill(need);
          tokensSigned += tokenPool.size - before;
        }

        const client = new HttpClient(service.url, { maxSockets: clients });
        const ids = allIds.slice();
        const request: (i: number) => Promise<void> = {
          authorize: () => authorizeWith(client),
          capture: () => captureWith(client),
          refund: () => refundWith(client),
          get: async (i: number) => {
            await client.json('GET', `/transactions/${ids[(i * 7919) % ids.length]}`, { headers });
          },
          list: async () => {
            const page = await client.json<{ items: unknown[] }>('GET', '/transactions?limit=20', { headers });
            if (page.items.length !== 20) throw new Error(`list answered ${page.items.length} items`);
          },
          'auth-fresh': async () => {
            await client.json('GET', AUTH_PATH, { headers: { authorization: `Bearer ${tokenPool.take()}` } });
          },
          'auth-reused': async () => {
            await client.json('GET', AUTH_PATH, { headers });
          },
        }[scenario];
        const inlineBefore = tokenPool.signedInline;
        const result = await measure({ concurrency: clients, durationMs, warmupMs, request, cpuPid: service.pid });
        client.close();
        const inline = tokenPool.signedInline - inlineBefore;
        log(
          `  ${scenario}@${clients}: ${summary(result)}${inline > 0 ? ` [${inline} tokens signed inline: pool ran dry]` : ''}`,
        );
        runs.push({ scenario, clients, ...result });
      }
    }
  } finally {
    clearInterval(rssTimer);
    setup.close();
    await tokenPool.close();
    await service.stop();
  }
  for (let round = 2; withBaselines && round <= baselineRounds; round += 1) await baselineRound(round);

  const baselines: BaselineRun[] = [];
  for (const name of ['bare-fastify', 'nest-hello'] as const) {
    for (const clients of clientCounts) {
      const rounds = baselineRuns.filter((b) => b.baseline === name && b.clients === clients);
      if (rounds.length === 0) continue;
      // A round that shared the machine with other work is left out when a clean one exists.
      const clean = rounds.filter((b) => !isSkewed(b.host));
      const used = clean.length > 0 ? clean : rounds;
      const { round: _round, host: _host, ...mean } = averageRuns(used);
      baselines.push({ ...mean, rounds: used.map((b) => b.round ?? 0) });
    }
  }
  const cleanEs512 = es512Rounds.filter((r) => !isSkewed(r.host));
  const es512Used = cleanEs512.length > 0 ? cleanEs512 : es512Rounds;
  const es512: (Es512Rate & { rounds: number[] }) | null =
    es512Used.length === 0
      ? null
      : {
          verificationsPerSecond: es512Used.reduce((sum, r) => sum + r.verificationsPerSecond, 0) / es512Used.length,
          workers: es512Used[0]!.workers,
          durationMs: es512Used.reduce((sum, r) => sum + r.durationMs, 0),
          rounds: es512Used.map((r) => r.round),
        };
  const rows = reportRows(runs, baselines, es512);
  const targets = evaluateTargets(runs, baselines, es512);
  const finishedAt = new Date();
  log('');
  log('## Embedded runtime (`npm start`), each scenario against its baseline');
  log('');
  log(formatResultsTable(rows));
  log('');
  log(
    `baselines (same run, same load generator; ${baselineRounds > 1 ? 'rounds before and after the scenarios and the mean of the rounds not skewed by other work; ' : ''}CPU ms/req of es512-rate = ms per verification on one thread):`,
  );
  log('');
  log(
    formatBaselinesTable(
      baselineRounds > 1 ? [...baselineRuns, ...baselines] : baselineRuns,
      baselineRounds > 1 && es512 ? [...es512Rounds, es512] : es512Rounds,
    ),
  );
  log('');
  const peakRss = rssSamples.length ? Math.max(...rssSamples) : null;
  log(
    `service RSS: peak ${peakRss === null ? 'n/a' : `${fmt(peakRss / 2 ** 20)} MB`} (sampled every second; the soak is \`npm run bench:soak\`)`,
  );
  log(
    `auth-fresh: ${tokensSigned} tokens pre-signed in worker threads before the measured windows (never during them); ${tokenPool.signedInline} signed inline`,
  );
  const skewed = [
    ...runs.map((r) => ({ name: `${r.scenario}@${r.clients}`, host: r.host })),
    ...baselineRuns.map((b) => ({ name: `${b.baseline}@${b.clients} round ${b.round}`, host: b.host })),
    ...es512Rounds.map((r) => ({ name: `es512-rate round ${r.round}`, host: r.host })),
  ].filter((w) => isSkewed(w.host));
  log(
    skewed.length === 0
      ? 'no other process used the machine noticeably during the windows'
      : `windows shared with other work (skewed): ${skewed.map((w) => w.name).join(', ')}`,
  );
  log('');
  const recorded = recordedTargets({
    soak: readResults('soak-latest.json'),
    distributed: readResults('distributed-latest.json'),
  });
  log('## Targets (issue 21), judged by this run');
  log('');
  log(formatTargets(targets));
  log('');
  log('## Targets (issue 21) another command measures, as its last committed run recorded them');
  log('');
  log(formatTargets(recorded));

  const report = {
    kind: 'switchyard-bench-embedded',
    version: 1,
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    machine,
    settings: {
      quick,
      warmupMs,
      durationMs,
      clients: clientCounts,
      scenarios,
      baselineRounds,
      authPath: AUTH_PATH,
      loadGenerator: 'bench/lib/load.ts (closed loop, node:http keep-alive Agent)',
    },
    scenarios: rows,
    baselines: { http: baselines, es512, rounds: { http: baselineRuns, es512: es512Rounds } },
    service: {
      peakRssBytes: peakRss,
      rssSamplesBytes: rssSamples,
      tokensPreSigned: tokensSigned,
      tokensSignedInline: tokenPool.signedInline,
    },
    targets,
    recordedTargets: recorded,
  };
  if (process.env.BENCH_NO_WRITE !== '1') {
    const dir = path.join(repoRoot, 'bench/results');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, resultFileName(startedAt, machine.hostname));
    const json = `${JSON.stringify(report, null, 2)}\n`;
    writeFileSync(file, json);
    writeFileSync(path.join(dir, 'latest.json'), json);
    log('');
    log(`results: ${path.relative(repoRoot, file)} and bench/results/latest.json`);
  }
  return targets.find((entry) => entry.id === 'errors')?.met;
}

main().then(
  // Errors must be 0 (issue 10): a run where a scenario had any exits non-zero, whatever the figures.
  (errorsTarget) => process.exit(errorsTarget === false ? 1 : 0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
