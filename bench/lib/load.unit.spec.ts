import { describe, expect, it } from 'vitest';
import { latencySummary, parseProcStat, parseProcStatCpuMs, parseProcStatus, percentile, runLoad } from './load';

describe('percentile (nearest rank)', () => {
  const sorted = Float64Array.from({ length: 100 }, (_, i) => i + 1); // 1..100

  it('picks the value at rank ceil(p/100 * n)', () => {
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 95)).toBe(95);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile(sorted, 99.5)).toBe(100);
  });

  it('clamps at both ends and answers NaN for no samples', () => {
    expect(percentile(sorted, 0)).toBe(1);
    expect(percentile(sorted, 100)).toBe(100);
    expect(percentile([7], 50)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it('never interpolates: p50 of two samples is the lower one', () => {
    expect(percentile([1, 3], 50)).toBe(1);
    expect(percentile([1, 3], 51)).toBe(3);
  });

  it('latencySummary sorts the samples it is given', () => {
    const samples = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
    expect(latencySummary(samples)).toEqual({ p50Ms: 5, p95Ms: 10, p99Ms: 10 });
    expect(samples[0]).toBe(5); // the caller's array is left as it was
  });
});

describe('parseProcStatCpuMs', () => {
  it('adds utime and stime (fields 14 and 15) in clock ticks, with spaces in the command name', () => {
    const stat = '4242 (node main (x).ts) S 1 4242 4242 0 -1 4194560 12345 0 0 0 250 75 0 0 20 0 11 0 100 1000000 5000';
    expect(parseProcStatCpuMs(stat, 100)).toBe(3250);
    expect(parseProcStatCpuMs(stat, 1000)).toBe(325);
  });
});

describe('runLoad', () => {
  it('counts a throwing request as an error, keeps the first message, and records only successes', async () => {
    const result = await runLoad({
      concurrency: 3,
      durationMs: 30,
      request: async (i) => {
        await new Promise((resolve) => setImmediate(resolve));
        if (i % 2 === 1) throw new Error(`failed ${i}`);
      },
    });
    expect(result.requests).toBeGreaterThan(0);
    expect(result.errors).toBeGreaterThan(0);
    expect(result.firstError).toMatch(/^failed \d+$/);
    expect(result.cpuMsPerRequest).toBeNull();
    expect(result.throughput).toBeCloseTo((result.requests * 1000) / result.durationMs, 6);
  });

  it('reads the CPU of a process when given its pid', async () => {
    const result = await runLoad({
      concurrency: 1,
      durationMs: 20,
      request: () => new Promise((resolve) => setImmediate(resolve)),
      cpuPid: process.pid,
    });
    expect(result.cpuMsPerRequest).not.toBeNull();
    expect(result.cpuMsPerRequest!).toBeGreaterThanOrEqual(0);
  });

  it('does not record requests started during the warm-up', async () => {
    const seen: number[] = [];
    const result = await runLoad({
      concurrency: 1,
      warmupMs: 15,
      durationMs: 15,
      request: async (i) => {
        seen.push(i);
        await new Promise((resolve) => setImmediate(resolve));
      },
    });
    expect(result.requests).toBeLessThan(seen.length);
  });
});

describe('parseProcStat', () => {
  it('reads process, interrupt, idle (with iowait) and steal time of the aggregate cpu line', () => {
    const stat = 'cpu  100 5 50 1000 20 3 2 7 0 0\ncpu0 50 2 25 500 10 1 1 3 0 0\n';
    expect(parseProcStat(stat, 100)).toEqual({ busyMs: 1550, irqMs: 50, idleMs: 10_200, stealMs: 70 });
    expect(parseProcStat('nothing here', 100)).toBeNull();
  });
});

describe('parseProcStatus', () => {
  it("reads a process's resident memory by kind, in bytes, and its thread count", () => {
    const status = [
      'Name:\tnode',
      'VmRSS:\t  307200 kB',
      'RssAnon:\t  245760 kB',
      'RssFile:\t   61440 kB',
      'RssShmem:\t       0 kB',
      'Threads:\t17',
    ].join('\n');
    expect(parseProcStatus(status)).toEqual({
      rss: 300 * 2 ** 20,
      rssAnon: 240 * 2 ** 20,
      rssFile: 60 * 2 ** 20,
      rssShmem: 0,
      threads: 17,
    });
  });

  it('answers null for lines the kernel does not write', () => {
    expect(parseProcStatus('VmRSS:\t1 kB\n')).toEqual({
      rss: 1024,
      rssAnon: null,
      rssFile: null,
      rssShmem: null,
      threads: null,
    });
  });
});
