/**
 * `npm run bench:node-ab`: the embedded runtime (`npm start`'s entry) on Node.js 20 and on Node.js 24 in one run,
 * `authorize` and `get` at 1 and 16 clients (issue 27, item 4).
 *
 * - B is this process's runtime: the Node.js 24 package.json pins (npm scripts run on it). A is the machine's
 *   Node.js 20: NODE_AB_BASELINE=<path>, else the first `node` on PATH outside node_modules whose major is 20.
 * - better-sqlite3 13 (the project's) crashes Node 20, so A runs with the 12.x line the project used on Node 20,
 *   built once for A's ABI into node_modules/.cache/switchyard-node-ab/ (npm install on A: prebuilt download or
 *   node-gyp against A's headers, about 2 minutes), and preloaded by bench/lib/node20-compat.cjs. So A is the old
 *   runtime with its SQLite binding, B the new one with its own; the source, NestJS, Fastify and the rest are the same.
 * - Rounds alternate the order (A B, B A, …), each runtime on a fresh data directory, so that drift on a shared
 *   machine falls on both; each figure is the mean of the rounds.
 *
 * Environment: BENCH_DURATION_MS (measured window, default 4000), BENCH_WARMUP_MS (default 1000), BENCH_CLIENTS
 * (default 1,16), BENCH_ROUNDS (default 2), BENCH_NO_WRITE=1 (print only; else bench/results/node-ab-latest.json).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { HttpClient, machineCpu, processCpuMs, runLoad, type LoadResult } from './lib/load';
import { averageRuns, describeMachine, hostShare, markdownTable, type HostShare } from './lib/report';
import { defaultRuntime, repoRoot, startEmbeddedService, type Runtime } from './lib/service';
import { signEs512Token } from './lib/tokens';

const durationMs = Number(process.env.BENCH_DURATION_MS ?? 4000);
const warmupMs = Number(process.env.BENCH_WARMUP_MS ?? 1000);
const clientCounts = (process.env.BENCH_CLIENTS ?? '1,16').split(',').map(Number);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
/** The better-sqlite3 line the project ran on Node 20 (before issue 27). */
const NODE20_BETTER_SQLITE3 = '12.11.1';
const scenarios = ['authorize', 'get'] as const;
type Scenario = (typeof scenarios)[number];

const authorizeBody = {
  amount: 1000,
  currency: 'USD',
  intent: 'authorize',
  payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/30', security_code: '123' },
};

const log = (line: string) => process.stdout.write(`${line}\n`);
const fmt = (value: number, digits = 0) => value.toFixed(digits);

interface Side {
  readonly label: string;
  readonly version: string;
  readonly runtime: Runtime;
}

interface Run extends LoadResult {
  readonly side: string;
  readonly scenario: Scenario;
  readonly clients: number;
  readonly round: number;
  readonly host: HostShare | null;
}

function nodeVersion(execPath: string): string {
  const result = spawnSync(execPath, ['-p', 'process.version'], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${execPath} -p process.version failed: ${result.stderr}`);
  return result.stdout.trim();
}

/** NODE_AB_BASELINE, else the first Node.js 20 on PATH that is not a node_modules one. */
function findNode20(): string {
  if (process.env.NODE_AB_BASELINE) return process.env.NODE_AB_BASELINE;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'node');
    if (!dir || dir.includes(`${path.sep}node_modules${path.sep}`) || !existsSync(candidate)) continue;
    if (nodeVersion(candidate).startsWith('v20.')) return candidate;
  }
  throw new Error('no Node.js 20 on PATH outside node_modules: set NODE_AB_BASELINE=/path/to/node');
}

/** better-sqlite3 12.x built for `execPath`'s ABI, in a cache folder of its own; answers its package directory. */
function betterSqlite3For(execPath: string): string {
  const abi = spawnSync(execPath, ['-p', 'process.versions.modules'], { encoding: 'utf8' }).stdout.trim();
  const dir = path.join(
    repoRoot,
    'node_modules',
    '.cache',
    'switchyard-node-ab',
    `abi-${abi}-better-sqlite3-${NODE20_BETTER_SQLITE3}`,
  );
  const packageDir = path.join(dir, 'node_modules', 'better-sqlite3');
  const loads = () =>
    spawnSync(execPath, ['-e', `new (require(${JSON.stringify(packageDir)}))(':memory:').prepare('select 1').get()`])
      .status === 0;
  if (existsSync(packageDir) && loads()) return packageDir;
  log(
    `building better-sqlite3 ${NODE20_BETTER_SQLITE3} for ${execPath} (ABI ${abi}) into ${path.relative(repoRoot, dir)} …`,
  );
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ private: true, allowScripts: { 'better-sqlite3': true } }),
  );
  // npm runs on A (its directory first on PATH), so prebuild-install and node-gyp target A; node-gyp compiles against
  // A's own headers when its prefix has them (offline), else downloads them.
  const prefix = path.dirname(path.dirname(execPath));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${path.dirname(execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
  };
  if (existsSync(path.join(prefix, 'include', 'node', 'node.h'))) env.npm_config_nodedir = prefix;
  else delete env.npm_config_nodedir;
  const npm = spawnSync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--foreground-scripts', `better-sqlite3@${NODE20_BETTER_SQLITE3}`],
    { cwd: dir, env, stdio: 'inherit' },
  );
  if (npm.status !== 0 || !loads())
    throw new Error(`better-sqlite3 ${NODE20_BETTER_SQLITE3} does not load in ${execPath}`);
  return packageDir;
}

async function measureSide(side: Side, round: number): Promise<Run[]> {
  const service = await startEmbeddedService({ runtime: side.runtime });
  const headers = { authorization: `Bearer ${signEs512Token(service.key, ['*.read', '*.write'], 3600)}` };
  const setup = new HttpClient(service.url, { maxSockets: 16 });
  const runs: Run[] = [];
  try {
    const health = await setup.json<{ node?: string }>('GET', '/healthz');
    if (health.node !== side.version)
      throw new Error(`${side.label}: /healthz reports ${health.node}, expected ${side.version}`);
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
    const ids: string[] = [];
    const authorize = async (client: HttpClient) => {
      const tx = await client.json<{ id: string; status: string }>('POST', '/transactions', {
        headers,
        body: authorizeBody,
      });
      if (tx.status !== 'authorization_succeeded') throw new Error(`authorize answered ${tx.status}`);
      ids.push(tx.id);
    };
    for (let i = 0; i < 300; i += 1) await authorize(setup);
    for (const scenario of scenarios) {
      for (const clients of clientCounts) {
        const client = new HttpClient(service.url, { maxSockets: clients });
        const readable = ids.slice();
        const request =
          scenario === 'authorize'
            ? () => authorize(client)
            : async (i: number) => {
                await client.json('GET', `/transactions/${readable[(i * 7919) % readable.length]}`, { headers });
              };
        const before = machineCpu();
        const ownBefore = (processCpuMs(process.pid) ?? 0) + (processCpuMs(service.pid) ?? 0);
        const t0 = performance.now();
        const result = await runLoad({ concurrency: clients, durationMs, warmupMs, request, cpuPid: service.pid });
        const wallMs = performance.now() - t0;
        const after = machineCpu();
        const own = (processCpuMs(process.pid) ?? 0) + (processCpuMs(service.pid) ?? 0) - ownBefore;
        const host = before && after ? hostShare(before, after, wallMs, own) : null;
        client.close();
        runs.push({ ...result, side: side.label, scenario, clients, round, host });
        log(
          `  round ${round} ${side.label} ${scenario}@${clients}: ${fmt(result.throughput)} req/s, p50 ${fmt(result.p50Ms, 2)} ms, ` +
            `p99 ${fmt(result.p99Ms, 2)} ms, CPU ${result.cpuMsPerRequest === null ? 'n/a' : fmt(result.cpuMsPerRequest, 3)} ms/req, ` +
            `errors ${result.errors}${host ? ` [other processes ${fmt(host.otherCores, 2)} cores]` : ''}`,
        );
      }
    }
  } finally {
    setup.close();
    await service.stop();
  }
  return runs;
}

async function main(): Promise<boolean> {
  const machine = describeMachine();
  const node20 = findNode20();
  const sides: Side[] = [
    {
      label: 'A',
      version: nodeVersion(node20),
      runtime: {
        execPath: node20,
        preload: path.join(repoRoot, 'bench/lib/node20-compat.cjs'),
        env: { BENCH_NODE20_BETTER_SQLITE3: betterSqlite3For(node20) },
      },
    },
    { label: 'B', version: process.version, runtime: defaultRuntime },
  ];
  log(
    `Node.js A/B: A = ${sides[0]!.version} (${node20}, better-sqlite3 ${NODE20_BETTER_SQLITE3}), B = ${process.version} (${process.execPath})`,
  );
  log(`${machine.cpuCount} x ${machine.cpuModel}; load average at start ${machine.loadAverageAtStart.join(' ')}`);
  log(
    `windows: ${warmupMs} ms warm-up + ${durationMs} ms measured; clients ${clientCounts.join(', ')}; ${rounds} rounds, order alternating`,
  );

  const runs: Run[] = [];
  for (let round = 1; round <= rounds; round += 1) {
    const order = round % 2 === 1 ? sides : [...sides].reverse();
    for (const side of order) runs.push(...(await measureSide(side, round)));
  }

  const rows: string[][] = [];
  const summary = [];
  for (const scenario of scenarios) {
    for (const clients of clientCounts) {
      const [a, b] = sides.map((side) =>
        averageRuns(runs.filter((r) => r.side === side.label && r.scenario === scenario && r.clients === clients)),
      );
      const cpu = (r: LoadResult) => (r.cpuMsPerRequest === null ? 'n/a' : fmt(r.cpuMsPerRequest, 3));
      rows.push([
        `${scenario}@${clients}`,
        fmt(a!.throughput),
        fmt(b!.throughput),
        fmt(b!.throughput / a!.throughput, 2),
        `${fmt(a!.p50Ms, 2)} / ${fmt(b!.p50Ms, 2)}`,
        `${fmt(a!.p99Ms, 2)} / ${fmt(b!.p99Ms, 2)}`,
        `${cpu(a!)} / ${cpu(b!)}`,
      ]);
      summary.push({ scenario, clients, a, b, throughputRatio: b!.throughput / a!.throughput });
    }
  }
  log('');
  log(
    markdownTable(
      ['scenario@clients', 'A req/s', 'B req/s', 'B/A', 'p50 ms A / B', 'p99 ms A / B', 'CPU ms/req A / B'],
      rows,
      [false, true, true, true, true, true, true],
    ),
  );
  const otherCores = runs.map((r) => r.host?.otherCores ?? 0);
  const busiest = Math.max(0, ...otherCores);
  if (busiest >= 0.15)
    log(
      `note: other processes used up to ${fmt(busiest, 2)} cores during a window: a busy machine, figures are indicative only`,
    );

  if (process.env.BENCH_NO_WRITE !== '1') {
    const file = path.join(repoRoot, 'bench', 'results', 'node-ab-latest.json');
    const sideInfo = sides.map((s) => ({ label: s.label, node: s.version, execPath: s.runtime.execPath }));
    writeFileSync(
      file,
      `${JSON.stringify({ startedAt: new Date().toISOString(), machine, sides: sideInfo, durationMs, warmupMs, rounds, summary, runs }, null, 2)}\n`,
    );
    log(`written: ${path.relative(repoRoot, file)}`);
  }
  return runs.every((r) => r.errors === 0);
}

main().then(
  (clean) => process.exit(clean ? 0 : 1),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
