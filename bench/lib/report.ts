/**
 * The pure parts of `npm run bench`'s report: ratios to baselines, the issue's targets (met / not met with the
 * numbers), the printed table and the machine description.
 */
import { cpus, hostname, loadavg, release, totalmem, type, platform, arch } from 'node:os';
import type { LoadResult, MachineCpu } from './load';

export type ScenarioName = 'authorize' | 'capture' | 'refund' | 'get' | 'list' | 'auth-fresh' | 'auth-reused';
export type BaselineName = 'bare-fastify' | 'nest-hello' | 'es512-rate';

/** Which baseline each scenario is compared with (issue 10, item 2). */
export const baselineOf: Readonly<Record<ScenarioName, BaselineName>> = {
  authorize: 'bare-fastify',
  capture: 'bare-fastify',
  refund: 'bare-fastify',
  get: 'nest-hello',
  list: 'nest-hello',
  'auth-fresh': 'es512-rate',
  'auth-reused': 'es512-rate',
};

/** What else used the machine during a window (warm-up included): a sign that a figure is skewed. */
export interface HostShare {
  /** Cores busy on the whole machine, on average (interrupts included). */
  readonly busyCores: number;
  /** Cores busy with processes other than the benchmark and the measured process (interrupts excluded). */
  readonly otherCores: number;
  /** CPU time the hypervisor gave to others while this VM wanted it, % of the window's CPU time. */
  readonly stealPct: number;
}

export function hostShare(before: MachineCpu, after: MachineCpu, wallMs: number, ownCpuMs: number): HostShare {
  const busy = after.busyMs - before.busyMs;
  const irq = after.irqMs - before.irqMs;
  const total = busy + irq + (after.idleMs - before.idleMs) + (after.stealMs - before.stealMs);
  const round = (value: number) => Math.round(value * 100) / 100;
  return {
    busyCores: round((busy + irq) / wallMs),
    otherCores: round(Math.max(0, busy - ownCpuMs) / wallMs),
    stealPct: round(total > 0 ? (100 * (after.stealMs - before.stealMs)) / total : 0),
  };
}

export interface ScenarioRun extends LoadResult {
  readonly scenario: ScenarioName;
  readonly clients: number;
  readonly host?: HostShare | null;
}

export interface BaselineRun extends LoadResult {
  readonly baseline: 'bare-fastify' | 'nest-hello';
  readonly clients: number;
  /** Which round (1: before the scenarios, 2: after); absent on a mean of rounds. */
  readonly round?: number;
  /** On a mean: the rounds it averages. */
  readonly rounds?: readonly number[];
  readonly host?: HostShare | null;
}

export interface Es512Rate {
  readonly verificationsPerSecond: number;
  readonly workers: number;
  readonly durationMs: number;
}

export interface BaselineFigure {
  readonly name: BaselineName;
  readonly clients: number | null;
  readonly throughput: number;
  readonly p50Ms: number | null;
  readonly p99Ms: number | null;
}

export interface ReportRow extends ScenarioRun {
  readonly baseline: BaselineFigure | null;
  /** Scenario throughput / baseline throughput; null when the baseline is missing. */
  readonly ratio: number | null;
}

/**
 * The mean of repeated runs of one baseline (the run brackets the scenarios with a round of baselines before and
 * one after, so that a drift of the machine shows, and weighs the same on both sides). Counts add up; rates,
 * latencies and CPU per request are averaged.
 */
export function averageRuns<T extends LoadResult>(runs: readonly T[]): T {
  if (runs.length === 0) throw new Error('averageRuns: no runs');
  if (runs.length === 1) return runs[0]!;
  const mean = (pick: (r: LoadResult) => number) => runs.reduce((sum, r) => sum + pick(r), 0) / runs.length;
  const cpu = runs.every((r) => r.cpuMsPerRequest !== null) ? mean((r) => r.cpuMsPerRequest ?? 0) : null;
  const firstError = runs.find((r) => r.firstError !== undefined)?.firstError;
  return {
    ...runs[0]!,
    requests: runs.reduce((sum, r) => sum + r.requests, 0),
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    durationMs: runs.reduce((sum, r) => sum + r.durationMs, 0),
    throughput: mean((r) => r.throughput),
    p50Ms: mean((r) => r.p50Ms),
    p95Ms: mean((r) => r.p95Ms),
    p99Ms: mean((r) => r.p99Ms),
    cpuMsPerRequest: cpu,
    ...(firstError !== undefined ? { firstError } : {}),
  };
}

/** a / b, null when either is missing or b is not positive. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (
    a === null ||
    a === undefined ||
    b === null ||
    b === undefined ||
    !Number.isFinite(a) ||
    !Number.isFinite(b) ||
    b <= 0
  )
    return null;
  return a / b;
}

/** The baseline figure a scenario at `clients` is compared with: same client count for the HTTP baselines. */
export function baselineFor(
  scenario: ScenarioName,
  clients: number,
  baselines: readonly BaselineRun[],
  es512: Es512Rate | null,
): BaselineFigure | null {
  const name = baselineOf[scenario];
  if (name === 'es512-rate')
    return es512 ? { name, clients: null, throughput: es512.verificationsPerSecond, p50Ms: null, p99Ms: null } : null;
  const run = baselines.find((b) => b.baseline === name && b.clients === clients);
  return run ? { name, clients, throughput: run.throughput, p50Ms: run.p50Ms, p99Ms: run.p99Ms } : null;
}

export function reportRows(
  scenarios: readonly ScenarioRun[],
  baselines: readonly BaselineRun[],
  es512: Es512Rate | null,
): ReportRow[] {
  return scenarios.map((run) => {
    const baseline = baselineFor(run.scenario, run.clients, baselines, es512);
    return { ...run, baseline, ratio: ratio(run.throughput, baseline?.throughput) };
  });
}

export interface TargetResult {
  readonly id: string;
  readonly description: string;
  /** null: not measured in this run. */
  readonly met: boolean | null;
  readonly value: number | null;
  readonly limit: number;
  readonly unit: string;
  readonly detail: string;
}

const fmt = (value: number | null | undefined, digits = 2) =>
  value === null || value === undefined || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits);

function target(
  id: string,
  description: string,
  value: number | null,
  limit: number,
  unit: string,
  atLeast: boolean,
  detail: string,
): TargetResult {
  const met = value === null ? null : atLeast ? value >= limit : value <= limit;
  return { id, description, met, value, limit, unit, detail };
}

/**
 * Issue 21's targets that `npm run bench` judges itself (embedded runtime, one run): `authorize` against the floor
 * (bare Fastify) at 16 and 64 clients, with its CPU per authorization (all threads of the process) and the stretch
 * goal (faster than the floor); `capture` and `refund` at 16 against the floor; `get` and `list` at 16 against NestJS
 * hello; `auth-fresh` at its best client count against the raw ES512 rate; and every scenario without errors. The
 * event lag and memory targets are `npm run bench:distributed`'s and `npm run bench:soak`'s (`recordedTargets`).
 */
export function evaluateTargets(
  scenarios: readonly ScenarioRun[],
  baselines: readonly BaselineRun[],
  es512: Es512Rate | null,
): TargetResult[] {
  const find = (scenario: ScenarioName, clients: number) =>
    scenarios.find((s) => s.scenario === scenario && s.clients === clients);
  const floor = (clients: number) => baselines.find((b) => b.baseline === 'bare-fastify' && b.clients === clients);
  const nest16 = baselines.find((b) => b.baseline === 'nest-hello' && b.clients === 16);
  const fresh = scenarios.filter((s) => s.scenario === 'auth-fresh').sort((a, b) => b.throughput - a.throughput)[0];
  const results: TargetResult[] = [];
  const againstFloor = (id: string, scenario: ScenarioName, clients: number, limit: number, note = '') => {
    const run = find(scenario, clients);
    const base = floor(clients);
    const value = ratio(run?.throughput, base?.throughput);
    results.push(
      target(
        id,
        `${scenario}@${clients} >= ${limit.toFixed(1)}x the floor (bare Fastify) at ${clients} clients${note}`,
        value,
        limit,
        'x',
        true,
        `${fmt(run?.throughput, 0)} req/s vs floor ${fmt(base?.throughput, 0)} req/s = ${fmt(value)}x`,
      ),
    );
  };
  againstFloor('authorize-16', 'authorize', 16, 0.6);
  const authorize16 = find('authorize', 16);
  results.push(
    target(
      'authorize-cpu',
      'authorize@16 CPU per authorization <= 2 ms (all threads of the service process)',
      authorize16?.cpuMsPerRequest ?? null,
      2,
      'ms',
      false,
      `${fmt(authorize16?.cpuMsPerRequest)} ms`,
    ),
  );
  againstFloor('authorize-64', 'authorize', 64, 0.8);
  againstFloor('authorize-stretch', 'authorize', 16, 1, ' (stretch goal: faster than one fsync per request)');
  againstFloor('capture', 'capture', 16, 0.5);
  againstFloor('refund', 'refund', 16, 0.5);
  const againstNest = (id: string, scenario: ScenarioName, limit: number) => {
    const run = find(scenario, 16);
    const value = ratio(run?.throughput, nest16?.throughput);
    results.push(
      target(
        id,
        `${scenario}@16 >= ${limit.toFixed(1)}x NestJS-on-Fastify hello world at 16 clients`,
        value,
        limit,
        'x',
        true,
        `${fmt(run?.throughput, 0)} req/s vs ${fmt(nest16?.throughput, 0)} req/s = ${fmt(value)}x`,
      ),
    );
  };
  againstNest('get', 'get', 0.5);
  againstNest('list', 'list', 0.3);
  const freshRatio = ratio(fresh?.throughput, es512?.verificationsPerSecond);
  results.push(
    target(
      'auth-fresh',
      'auth-fresh >= 0.8x the raw ES512 verification rate (node:crypto, all cores)',
      freshRatio,
      0.8,
      'x',
      true,
      `best ${fmt(fresh?.throughput, 0)} req/s${fresh ? ` at ${fresh.clients} clients` : ''} vs ${fmt(es512?.verificationsPerSecond, 0)} verifications/s on ${es512?.workers ?? '?'} threads = ${fmt(freshRatio)}x`,
    ),
  );
  const errors = scenarios.length === 0 ? null : scenarios.reduce((sum, s) => sum + s.errors, 0);
  const failing = scenarios
    .filter((s) => s.errors > 0)
    .map((s) => `${s.scenario}@${s.clients}: ${s.errors} (${s.firstError ?? ''})`);
  results.push(
    target(
      'errors',
      'every scenario answers without errors',
      errors,
      0,
      'errors',
      false,
      failing.length === 0 ? 'none' : failing.join('; '),
    ),
  );
  return results;
}

/** What `recordedTargets` reads: the last soak's and the last distributed run's result files, as written. */
export interface RecordedResults {
  readonly soak: {
    readonly startedAt?: string;
    readonly targets?: readonly { id: string; met: boolean | null; value: number | null }[];
  } | null;
  readonly distributed: {
    readonly startedAt?: string;
    readonly targets?: {
      readonly eventLagP99?: { p99Ms: number | null; met: boolean } | null;
      readonly embeddedEventLagP99?: { p99Ms: number | null; met: boolean } | null;
    };
  } | null;
}

/**
 * Issue 21's targets another command measures, as its last committed run recorded them (each line names the file
 * and the date): the event lag append → first webhook attempt (p99 <= 250 ms, embedded and distributed:
 * `npm run bench:distributed`) and the memory of the 10-minute soak (`npm run bench:soak`). Not measured: no file.
 */
export function recordedTargets(recorded: RecordedResults): TargetResult[] {
  const soakTarget = (id: string) => recorded.soak?.targets?.find((t) => t.id === id);
  const from = (file: string, startedAt: string | undefined) => `(${file}, run of ${startedAt ?? 'unknown date'})`;
  const soakFrom = from('bench/results/soak-latest.json', recorded.soak?.startedAt);
  const distributedFrom = from('bench/results/distributed-latest.json', recorded.distributed?.startedAt);
  // As the run judged it: a webhook that never arrived fails the target whatever the p99.
  const lag = (
    id: string,
    where: string,
    figure: { p99Ms: number | null; met: boolean } | null | undefined,
  ): TargetResult => ({
    ...target(
      id,
      `event lag append -> first webhook attempt p99 <= 250 ms, ${where}`,
      figure?.p99Ms ?? null,
      250,
      'ms',
      false,
      `p99 ${fmt(figure?.p99Ms, 0)} ms ${distributedFrom}`,
    ),
    met: figure ? figure.met : null,
  });
  const peak = soakTarget('soak-rss');
  const slope = soakTarget('soak-flat');
  return [
    lag('event-lag-embedded', 'embedded', recorded.distributed?.targets?.embeddedEventLagP99),
    lag('event-lag-distributed', 'distributed', recorded.distributed?.targets?.eventLagP99),
    target(
      'soak-peak',
      'the 10-minute soak at authorize@16 peaks <= 350 MB',
      peak?.value ?? null,
      350,
      'MB',
      false,
      `peak ${fmt(peak?.value, 1)} MB ${soakFrom}`,
    ),
    target(
      'soak-growth',
      "the soak's second half grows <= 1 MB/min",
      slope?.value ?? null,
      1,
      'MB/min',
      false,
      `${fmt(slope?.value)} MB/min ${soakFrom}`,
    ),
  ];
}

function pad(cells: readonly string[], widths: readonly number[], rightAligned: readonly boolean[]): string {
  return `| ${cells.map((cell, i) => (rightAligned[i] ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0))).join(' | ')} |`;
}

/** A Markdown table (aligned for the terminal). */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  rightAligned: readonly boolean[] = [],
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const separator = `|${widths.map((w, i) => (rightAligned[i] ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [pad(header, widths, []), separator, ...rows.map((row) => pad(row, widths, rightAligned))].join('\n');
}

export function formatResultsTable(rows: readonly ReportRow[]): string {
  const header = [
    'scenario',
    'clients',
    'req/s',
    'p50 ms',
    'p95 ms',
    'p99 ms',
    'CPU ms/req',
    'errors',
    'baseline',
    'ratio',
  ];
  const body = rows.map((row) => [
    row.scenario,
    String(row.clients),
    fmt(row.throughput, 0),
    fmt(row.p50Ms),
    fmt(row.p95Ms),
    fmt(row.p99Ms),
    fmt(row.cpuMsPerRequest),
    String(row.errors),
    row.baseline
      ? `${row.baseline.name}${row.baseline.clients === null ? '' : `@${row.baseline.clients}`} ${fmt(row.baseline.throughput, 0)}/s`
      : 'n/a',
    row.ratio === null ? 'n/a' : `${fmt(row.ratio)}x`,
  ]);
  return markdownTable(header, body, [false, true, true, true, true, true, true, true, false, true]);
}

export function formatBaselinesTable(
  baselines: readonly BaselineRun[],
  es512: readonly (Es512Rate & { round?: number })[],
): string {
  const header = ['baseline', 'round', 'clients', 'req/s', 'p50 ms', 'p95 ms', 'p99 ms', 'CPU ms/req', 'errors'];
  const round = (r: number | undefined) => (r === undefined ? 'mean' : String(r));
  const body = baselines.map((b) => [
    b.baseline,
    round(b.round),
    String(b.clients),
    fmt(b.throughput, 0),
    fmt(b.p50Ms),
    fmt(b.p95Ms),
    fmt(b.p99Ms),
    fmt(b.cpuMsPerRequest),
    String(b.errors),
  ]);
  for (const rate of es512) {
    body.push([
      'es512-rate',
      round(rate.round),
      `${rate.workers} threads`,
      fmt(rate.verificationsPerSecond, 0),
      '',
      '',
      '',
      fmt(1000 / (rate.verificationsPerSecond / rate.workers)),
      '0',
    ]);
  }
  return markdownTable(header, body, [false, true, true, true, true, true, true, true, true]);
}

export function formatTargets(targets: readonly TargetResult[]): string {
  return targets
    .map((t) => `- [${t.met === null ? 'not measured' : t.met ? 'met' : 'NOT MET'}] ${t.description}: ${t.detail}`)
    .join('\n');
}

export interface MachineDescription {
  readonly hostname: string;
  readonly cpuModel: string;
  readonly cpuCount: number;
  readonly ramBytes: number;
  readonly node: string;
  readonly os: string;
  readonly arch: string;
  /** 1, 5 and 15 minute load averages when the run started: other work on the machine skews the figures. */
  readonly loadAverageAtStart: readonly number[];
}

export function describeMachine(): MachineDescription {
  const list = cpus();
  return {
    hostname: hostname(),
    cpuModel: list[0]?.model ?? 'unknown',
    cpuCount: list.length,
    ramBytes: totalmem(),
    node: process.version,
    os: `${type()} ${release()} (${platform()})`,
    arch: arch(),
    loadAverageAtStart: loadavg().map((value) => Math.round(value * 100) / 100),
  };
}

/** File name of a run's JSON: `<ISO date>-<hostname>.json`, safe on every file system. */
export function resultFileName(startedAt: Date, host: string): string {
  return `${startedAt
    .toISOString()
    .replace(/:/g, '-')
    .replace(/\.\d+Z$/, 'Z')}-${host.replace(/[^A-Za-z0-9._-]/g, '_')}.json`;
}

/** Least-squares slope of (x, y) points; 0 with fewer than two distinct x. */
export function slope(points: readonly (readonly [number, number])[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const meanX = points.reduce((s, [x]) => s + x, 0) / n;
  const meanY = points.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - meanX) * (y - meanY);
    den += (x - meanX) ** 2;
  }
  return den === 0 ? 0 : num / den;
}
