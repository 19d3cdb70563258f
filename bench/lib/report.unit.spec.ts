import { describe, expect, it } from 'vitest';
import type { LoadResult } from './load';
import {
  averageRuns,
  evaluateTargets,
  recordedTargets,
  hostShare,
  markdownTable,
  ratio,
  reportRows,
  resultFileName,
  slope,
  type BaselineRun,
  type Es512Rate,
  type ScenarioName,
  type ScenarioRun,
} from './report';

const load = (throughput: number, p50Ms: number, p99Ms: number, errors = 0): LoadResult => ({
  requests: throughput * 8,
  errors,
  durationMs: 8000,
  throughput,
  p50Ms,
  p95Ms: p99Ms,
  p99Ms,
  cpuMsPerRequest: 1,
});
const scenario = (
  name: ScenarioName,
  clients: number,
  throughput: number,
  p50Ms = 1,
  p99Ms = 2,
  errors = 0,
): ScenarioRun => ({
  scenario: name,
  clients,
  ...load(throughput, p50Ms, p99Ms, errors),
});
const baseline = (
  name: 'bare-fastify' | 'nest-hello',
  clients: number,
  throughput: number,
  p50Ms = 1,
  p99Ms = 2,
): BaselineRun => ({
  baseline: name,
  clients,
  ...load(throughput, p50Ms, p99Ms),
});
const es512: Es512Rate = { verificationsPerSecond: 800, workers: 2, durationMs: 3000 };

describe('ratio', () => {
  it('divides, and answers null for a missing or non-positive denominator', () => {
    expect(ratio(50, 100)).toBe(0.5);
    expect(ratio(50, 0)).toBeNull();
    expect(ratio(50, undefined)).toBeNull();
    expect(ratio(null, 100)).toBeNull();
    expect(ratio(Number.NaN, 100)).toBeNull();
  });
});

describe('reportRows', () => {
  it('compares each scenario with its baseline at the same client count (the raw ES512 rate for auth)', () => {
    const rows = reportRows(
      [
        scenario('authorize', 16, 300),
        scenario('get', 1, 500),
        scenario('auth-fresh', 64, 700),
        scenario('list', 64, 10),
      ],
      [baseline('bare-fastify', 16, 600), baseline('bare-fastify', 1, 100), baseline('nest-hello', 1, 1000)],
      es512,
    );
    expect(rows.map((r) => [r.baseline?.name ?? null, r.baseline?.clients ?? null, r.ratio])).toEqual([
      ['bare-fastify', 16, 0.5],
      ['nest-hello', 1, 0.5],
      ['es512-rate', null, 0.875],
      [null, null, null], // no nest-hello run at 64 clients
    ]);
  });
});

describe('evaluateTargets', () => {
  const baselines = [
    baseline('bare-fastify', 16, 1000, 5, 20),
    baseline('bare-fastify', 64, 1200),
    baseline('nest-hello', 16, 10_000),
  ];
  const met = (targets: ReturnType<typeof evaluateTargets>) => Object.fromEntries(targets.map((t) => [t.id, t.met]));

  it("meets issue 21's targets on figures on their limits, the stretch goal apart", () => {
    const targets = evaluateTargets(
      [
        { ...scenario('authorize', 16, 600), cpuMsPerRequest: 2 },
        scenario('authorize', 64, 960),
        scenario('capture', 16, 500),
        scenario('refund', 16, 500),
        scenario('get', 16, 5000),
        scenario('list', 16, 3000),
        scenario('auth-fresh', 16, 500),
        scenario('auth-fresh', 64, 640),
      ],
      baselines,
      es512,
    );
    expect(met(targets)).toEqual({
      'authorize-16': true, // 0.6x
      'authorize-cpu': true, // 2 ms
      'authorize-64': true, // 960 / 1200 = 0.8x
      'authorize-stretch': false, // 0.6x < 1.0x
      capture: true,
      refund: true,
      get: true,
      list: true, // 0.3x
      'auth-fresh': true, // best run (640 at 64 clients) / 800 = 0.8x
      errors: true,
    });
  });

  it('reports the figures of a target not met', () => {
    const targets = evaluateTargets(
      [{ ...scenario('authorize', 16, 599, 7.5, 81, 3), cpuMsPerRequest: 2.5 }, scenario('list', 16, 2999)],
      baselines,
      es512,
    );
    const byId = Object.fromEntries(targets.map((t) => [t.id, t]));
    expect(byId['authorize-16']).toMatchObject({ met: false, value: 0.599, limit: 0.6 });
    expect(byId['authorize-cpu']).toMatchObject({ met: false, value: 2.5, limit: 2 });
    expect(byId.list).toMatchObject({ met: false });
    expect(byId.errors).toMatchObject({ met: false, value: 3 });
    expect(byId['authorize-16']!.detail).toBe('599 req/s vs floor 1000 req/s = 0.60x');
  });

  it('marks a target whose figures are missing as not measured', () => {
    const targets = evaluateTargets([scenario('list', 16, 100)], [], null);
    expect(targets.filter((t) => t.id !== 'errors').every((t) => t.met === null)).toBe(true);
  });
});

describe('recordedTargets', () => {
  it('judges the event lag and memory targets as the last runs of their commands recorded them', () => {
    const targets = recordedTargets({
      soak: {
        startedAt: '2026-11-27T04:25:21Z',
        targets: [
          { id: 'soak-rss', met: false, value: 384 },
          { id: 'soak-flat', met: true, value: 0.5 },
        ],
      },
      distributed: {
        startedAt: '2026-11-27T08:00:00Z',
        targets: { eventLagP99: { p99Ms: 120, met: false }, embeddedEventLagP99: { p99Ms: 90, met: true } },
      },
    });
    const byId = Object.fromEntries(targets.map((t) => [t.id, t]));
    expect(byId['event-lag-embedded']).toMatchObject({ met: true, value: 90 });
    // A webhook missing fails the run's target whatever its p99.
    expect(byId['event-lag-distributed']).toMatchObject({ met: false, value: 120 });
    expect(byId['soak-peak']).toMatchObject({ met: false, value: 384, limit: 350 });
    expect(byId['soak-growth']).toMatchObject({ met: true, value: 0.5 });
    expect(byId['soak-peak']!.detail).toContain('soak-latest.json, run of 2026-11-27T04:25:21Z');
  });

  it('says not measured when a command has no recorded run', () => {
    expect(recordedTargets({ soak: null, distributed: null }).every((t) => t.met === null)).toBe(true);
  });
});

describe('formatting helpers', () => {
  it('aligns a Markdown table', () => {
    expect(
      markdownTable(
        ['a', 'num'],
        [
          ['xx', '1'],
          ['y', '100'],
        ],
        [false, true],
      ),
    ).toBe(['| a  | num |', '|----|----:|', '| xx |   1 |', '| y  | 100 |'].join('\n'));
  });

  it('names result files by ISO date and host name', () => {
    expect(resultFileName(new Date('2026-01-02T03:04:05.678Z'), 'host name/1')).toBe(
      '2026-01-02T03-04-05Z-host_name_1.json',
    );
  });

  it('computes a least-squares slope', () => {
    expect(
      slope([
        [0, 1],
        [1, 3],
        [2, 5],
      ]),
    ).toBeCloseTo(2, 10);
    expect(slope([[0, 4]])).toBe(0);
  });
});

describe('averageRuns', () => {
  it('averages rates, latencies and CPU, and adds up counts', () => {
    const mean = averageRuns([baseline('bare-fastify', 16, 400, 2, 10), baseline('bare-fastify', 16, 600, 4, 30)]);
    expect(mean).toMatchObject({
      baseline: 'bare-fastify',
      clients: 16,
      throughput: 500,
      p50Ms: 3,
      p99Ms: 20,
      requests: 8000,
      durationMs: 16_000,
      cpuMsPerRequest: 1,
    });
  });

  it('answers null CPU when a run has none, and keeps a single run as it is', () => {
    const one = baseline('nest-hello', 1, 100);
    expect(averageRuns([one])).toBe(one);
    expect(averageRuns([one, { ...one, cpuMsPerRequest: null }]).cpuMsPerRequest).toBeNull();
  });
});

describe('hostShare', () => {
  it('counts the cores other processes used and the steal share of a window', () => {
    const before = { busyMs: 1000, irqMs: 0, idleMs: 5000, stealMs: 0 };
    const after = { busyMs: 1000 + 1400, irqMs: 100, idleMs: 5000 + 400, stealMs: 100 };
    // 1 s window on 2 cores: 1.4 s in processes (1.1 s of them the benchmark and the measured process) + 0.1 s irq.
    expect(hostShare(before, after, 1000, 1100)).toEqual({ busyCores: 1.5, otherCores: 0.3, stealPct: 5 });
  });
});
