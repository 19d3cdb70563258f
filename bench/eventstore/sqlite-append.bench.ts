/**
 * SQLite append throughput and latency: does group commit pay with synchronous=FULL?
 *
 *   node -r ./scripts/register.cjs bench/eventstore/sqlite-append.bench.ts [seconds per cell, default 3] [rounds, default 1]
 *
 * Each of `concurrency` workers appends one ~250 B event at a time to its own stream with the expected revision
 * it got back, as a command handler does. Latency is measured from the call to the moment the worker resumes
 * after `await`, so it includes the time spent queued behind other workers' commits (better-sqlite3 blocks the
 * event loop during a commit). Every cell uses a fresh file in os.tmpdir(); the files are removed at the end.
 * With several rounds the cells are interleaved and each cell prints its median over the rounds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SqliteEventStore, type SqliteEventStoreOptions } from '../../libs/eventstore/src/sqlite/sqlite-event-store';

interface Config {
  readonly name: string;
  readonly options: SqliteEventStoreOptions;
}

interface CellResult {
  readonly appendsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

const configs: readonly Config[] = [
  { name: '(a) NORMAL per-append', options: { synchronous: 'NORMAL', groupCommit: false } },
  { name: '(b) FULL per-append', options: { synchronous: 'FULL', groupCommit: false } },
  { name: '(c) FULL group commit', options: { synchronous: 'FULL', groupCommit: true } },
];
const concurrencies = [1, 16, 64] as const;
const secondsPerCell = Number(process.argv[2] ?? 3);
const rounds = Number(process.argv[3] ?? 1);
const warmUpMs = 300;

const payload = {
  transactionId: '5f2c1e9a-8d3b-4f6e-9a1c-2b7d4e8f0a13',
  merchantAccountId: 'default',
  amount: 1299,
  currency: 'USD',
  paymentMethod: { id: 'b1a7c0de-0000-4000-8000-000000000001', scheme: 'visa', bin: '411111', last4: '1111' },
  status: 'authorization_succeeded',
};

async function runCell(directory: string, config: Config, concurrency: number, cellName: string): Promise<CellResult> {
  const store = new SqliteEventStore(join(directory, `${cellName}.sqlite`), config.options);
  const latencies: number[] = [];
  // Per-append mode never yields to the event loop (each append resolves at once and the workers chain on
  // microtasks), so no timer could fire: the workers read the clock themselves.
  const measureFrom = performance.now() + warmUpMs;
  const measureUntil = measureFrom + secondsPerCell * 1000;

  const worker = async (index: number): Promise<void> => {
    const streamId = `transaction-${index}`;
    let expectedRevision: number | 'no_stream' = 'no_stream';
    for (;;) {
      const started = performance.now();
      if (started >= measureUntil) return;
      const result = await store.append(streamId, [{ type: 'TransactionAuthorized', data: payload }], {
        expectedRevision,
      });
      if (started >= measureFrom) latencies.push(performance.now() - started);
      expectedRevision = result.nextExpectedRevision;
    }
  };

  await Promise.all(Array.from({ length: concurrency }, (_, index) => worker(index)));
  await store.close();
  const appendsPerSecond = latencies.length / secondsPerCell;

  latencies.sort((a, b) => a - b);
  const percentile = (p: number): number =>
    latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN;
  return { appendsPerSecond, p50Ms: percentile(0.5), p99Ms: percentile(0.99) };
}

async function main(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-sqlite-bench-'));
  const results = new Map<string, CellResult[]>();
  try {
    for (let round = 0; round < rounds; round++) {
      for (const concurrency of concurrencies) {
        for (const config of configs) {
          const key = `${config.name}|${concurrency}`;
          const cell = await runCell(
            directory,
            config,
            concurrency,
            `r${round}-c${concurrency}-${configs.indexOf(config)}`,
          );
          results.set(key, [...(results.get(key) ?? []), cell]);
          process.stderr.write(
            `round ${round + 1} ${config.name} c=${concurrency}: ${Math.round(cell.appendsPerSecond)}/s\n`,
          );
        }
      }
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }

  const median = (cells: CellResult[]): CellResult =>
    [...cells].sort((a, b) => a.appendsPerSecond - b.appendsPerSecond)[Math.floor(cells.length / 2)]!;
  const lines = [
    `SQLite append, WAL, one ~250 B event per append, ${secondsPerCell} s per cell, ${rounds} round(s), median of the rounds per cell`,
    '',
    '| mode | concurrency | appends/s | p50 ms | p99 ms |',
    '|---|---:|---:|---:|---:|',
  ];
  for (const concurrency of concurrencies) {
    for (const config of configs) {
      const cell = median(results.get(`${config.name}|${concurrency}`)!);
      lines.push(
        `| ${config.name} | ${concurrency} | ${Math.round(cell.appendsPerSecond).toLocaleString('en-US')} | ${cell.p50Ms.toFixed(2)} | ${cell.p99Ms.toFixed(2)} |`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exitCode = 1;
});
