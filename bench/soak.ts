/**
 * `npm run bench:soak`: memory of `npm start` under `authorize` load at 16 clients for SOAK_MS (default 10 minutes).
 * The service runs as a child process (fresh DATA_DIR, logs off, in-process simulator); its RSS is read from
 * /proc/<pid>/status every SOAK_SAMPLE_MS (default 10 s) and printed as a series, with the least-squares slope over
 * the whole run and over its second half (after warm-up), against the target: RSS <= 350 MB and flat. "Flat" here:
 * the second-half slope is at most 1 MB/min. JSON: bench/results/soak-<ISO date>-<hostname>.json and
 * bench/results/soak-latest.json.
 *   SOAK_MS=600000 node -r ./scripts/register.cjs bench/soak.ts
 * Each sample also has the breakdown, printed for the peak and the end: RssAnon, RssFile and the thread count from
 * /proc/<pid>/status, and the child's V8 heap (committed, used), external and arrayBuffers, which the service reports
 * itself: it runs with `bench/lib/memory-probe.cjs`, which writes them to a file every 2 s (so they are up to 2 s
 * older than the RSS beside them).
 * SOAK_NODE_ARGS="--flag …": node flags for the service, after `npm start`'s own (so they can override them), e.g.
 * SOAK_NODE_ARGS=--max-semi-space-size=8.
 * The in-process simulator remembers 10,000 references (MOCK_CARD_LEDGER_CAPACITY; the service's default is 100,000):
 * its ledger is in the same process, and the soak measures the service.
 * SOAK_HEAP_SNAPSHOT_DIR=<dir>: the service runs with `bench/lib/memory-probe.cjs` and writes a heap snapshot (after a
 * full GC) at a third of the run and at its end; `node bench/lib/heap-summary.cjs first second` shows what grew.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HttpClient, processMemory, runLoad } from './lib/load';
import { describeMachine, markdownTable, resultFileName, slope } from './lib/report';
import { repoRoot, startEmbeddedService } from './lib/service';
import { signEs512Token } from './lib/tokens';

const soakMs = Number(process.env.SOAK_MS ?? 600_000);
const sampleMs = Number(process.env.SOAK_SAMPLE_MS ?? 10_000);
const clients = Number(process.env.SOAK_CLIENTS ?? 16);
const extraNodeArgs = (process.env.SOAK_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const simulatorLedgerCapacity = process.env.MOCK_CARD_LEDGER_CAPACITY ?? '10000';
const RSS_LIMIT_MB = 350;
const FLAT_SLOPE_MB_PER_MIN = 1;
const MB = 2 ** 20;
const log = (line: string) => process.stdout.write(`${line}\n`);

/** One RSS sample with its breakdown (MB; null where /proc or the probe had nothing). */
interface Sample {
  atS: number;
  rssMb: number;
  requests: number;
  rssAnonMb: number | null;
  rssFileMb: number | null;
  threads: number | null;
  /** V8's heap: committed (`total_heap_size`) and used (`used_heap_size`). */
  heapCommittedMb: number | null;
  heapUsedMb: number | null;
  externalMb: number | null;
  arrayBuffersMb: number | null;
}

/** What bench/lib/memory-probe.cjs wrote last, or null (not written yet, or unreadable). */
function readProbe(file: string): {
  memoryUsage: NodeJS.MemoryUsage;
  heap: { total_heap_size: number; used_heap_size: number };
} | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

const mbOrNull = (bytes: number | null | undefined) => (bytes === null || bytes === undefined ? null : bytes / MB);
const fixed = (value: number | null) => (value === null ? 'n/a' : value.toFixed(1));

function breakdown(s: Sample): string {
  return `RSS ${fixed(s.rssMb)} MB = anon ${fixed(s.rssAnonMb)} + file ${fixed(s.rssFileMb)} MB, ${s.threads ?? 'n/a'} threads; V8 heap ${fixed(s.heapCommittedMb)} MB committed, ${fixed(s.heapUsedMb)} MB used; external ${fixed(s.externalMb)} MB, arrayBuffers ${fixed(s.arrayBuffersMb)} MB`;
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const machine = describeMachine();
  log(
    `soak: authorize@${clients} for ${soakMs / 1000} s, RSS every ${sampleMs / 1000} s (${machine.cpuCount} x ${machine.cpuModel}, Node ${machine.node})${extraNodeArgs.length > 0 ? `, node flags + ${extraNodeArgs.join(' ')}` : ''}`,
  );
  const snapshotDir = process.env.SOAK_HEAP_SNAPSHOT_DIR;
  if (snapshotDir) mkdirSync(snapshotDir, { recursive: true });
  const probeDir = mkdtempSync(path.join(tmpdir(), 'switchyard-soak-probe-'));
  const figuresFile = path.join(probeDir, 'figures.json');
  const service = await startEmbeddedService({
    nodeArgs: [
      ...(snapshotDir ? ['--expose-gc'] : []),
      '-r',
      path.join(repoRoot, 'bench/lib/memory-probe.cjs'),
      ...extraNodeArgs,
    ],
    env: {
      // The in-process simulator's ledger lives in the service's memory: bounded here so that the soak measures the
      // service (at its default, 100,000 references, the ledger alone grows the RSS for the whole 10 minutes).
      MOCK_CARD_LEDGER_CAPACITY: simulatorLedgerCapacity,
      MEMORY_PROBE_FIGURES_FILE: figuresFile,
      MEMORY_PROBE_INTERVAL_MS: '2000',
      ...(snapshotDir && {
        MEMORY_PROBE_SNAPSHOT_DIR: path.resolve(snapshotDir),
        MEMORY_PROBE_FILE: path.resolve(snapshotDir, 'memory-probe.jsonl'),
      }),
    },
  });
  let snapshotsRequested = 0;
  const snapshot = () => {
    if (!snapshotDir) return;
    process.kill(service.pid, 'SIGUSR2');
    snapshotsRequested += 1;
    log(`  heap snapshot requested (${snapshotDir})`);
  };
  /** The probe appends one line per snapshot once it is written; a big heap takes seconds. */
  const snapshotsWritten = async () => {
    const probeFile = path.resolve(snapshotDir ?? '.', 'memory-probe.jsonl');
    for (let waited = 0; snapshotDir && waited < 120_000; waited += 500) {
      const lines = existsSync(probeFile) ? readFileSync(probeFile, 'utf8').split('\n').filter(Boolean).length : 0;
      if (lines >= snapshotsRequested) return;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  };
  const firstSnapshot = setTimeout(snapshot, soakMs / 3);
  const headers = {
    authorization: `Bearer ${signEs512Token(service.key, ['*.read', '*.write'], Math.ceil(soakMs / 1000) + 3600)}`,
  };
  const client = new HttpClient(service.url, { maxSockets: clients });
  const samples: Sample[] = [];
  let completed = 0;
  try {
    await client.request('POST', '/payment-services', {
      headers,
      body: {
        display_name: 'Soak cards',
        payment_service_definition_id: 'mock-card',
        fields: [{ key: 'merchant_id', value: 'soak' }],
        accepted_currencies: ['USD'],
        accepted_countries: ['US'],
      },
    });
    const t0 = performance.now();
    const sample = () => {
      const memory = processMemory(service.pid);
      if (memory === null || memory.rss === null) return;
      const probe = readProbe(figuresFile);
      const entry: Sample = {
        atS: Math.round((performance.now() - t0) / 1000),
        rssMb: memory.rss / MB,
        requests: completed,
        rssAnonMb: mbOrNull(memory.rssAnon),
        rssFileMb: mbOrNull(memory.rssFile),
        threads: memory.threads,
        heapCommittedMb: mbOrNull(probe?.heap.total_heap_size),
        heapUsedMb: mbOrNull(probe?.heap.used_heap_size),
        externalMb: mbOrNull(probe?.memoryUsage.external),
        arrayBuffersMb: mbOrNull(probe?.memoryUsage.arrayBuffers),
      };
      samples.push(entry);
      log(
        `  t=${String(entry.atS).padStart(4)} s  RSS ${entry.rssMb.toFixed(1).padStart(6)} MB (anon ${fixed(entry.rssAnonMb)}, heap ${fixed(entry.heapCommittedMb)})  ${entry.requests} authorizations`,
      );
    };
    sample();
    const timer = setInterval(sample, sampleMs);
    const result = await runLoad({
      concurrency: clients,
      durationMs: soakMs,
      cpuPid: service.pid,
      request: async () => {
        const tx = JSON.parse(
          (
            await client.request('POST', '/transactions', {
              headers,
              body: {
                amount: 1000,
                currency: 'USD',
                intent: 'authorize',
                payment_method: {
                  method: 'card',
                  number: '4111111111111111',
                  expiration_date: '12/30',
                  security_code: '123',
                },
              },
            })
          ).body,
        ) as { status: string };
        if (tx.status !== 'authorization_succeeded') throw new Error(`authorize answered ${tx.status}`);
        completed += 1;
      },
    });
    clearInterval(timer);
    clearTimeout(firstSnapshot);
    sample();
    snapshot();
    await snapshotsWritten();

    const points = samples.map((s) => [s.atS / 60, s.rssMb] as const);
    const secondHalf = points.filter(([minutes]) => minutes * 60 >= soakMs / 2000);
    const slopeAll = slope(points);
    const slopeSecondHalf = slope(secondHalf);
    const peakSample = samples.reduce((highest, s) => (s.rssMb > highest.rssMb ? s : highest));
    const endSample = samples[samples.length - 1]!;
    const peak = peakSample.rssMb;
    const underLimit = peak <= RSS_LIMIT_MB;
    const flat = slopeSecondHalf <= FLAT_SLOPE_MB_PER_MIN;
    log('');
    log(
      markdownTable(
        [
          't (s)',
          'RSS (MB)',
          'anon',
          'file',
          'threads',
          'heap committed',
          'heap used',
          'external',
          'arrayBuffers',
          'authorizations',
        ],
        samples.map((s) => [
          String(s.atS),
          s.rssMb.toFixed(1),
          fixed(s.rssAnonMb),
          fixed(s.rssFileMb),
          String(s.threads ?? 'n/a'),
          fixed(s.heapCommittedMb),
          fixed(s.heapUsedMb),
          fixed(s.externalMb),
          fixed(s.arrayBuffersMb),
          String(s.requests),
        ]),
        [true, true, true, true, true, true, true, true, true, true],
      ),
    );
    log('');
    log(
      `load: ${result.throughput.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms, CPU ${result.cpuMsPerRequest?.toFixed(3) ?? 'n/a'} ms/req, errors ${result.errors}${result.firstError ? ` (${result.firstError})` : ''}`,
    );
    log(
      `RSS: start ${samples[0]!.rssMb.toFixed(1)} MB, peak ${peak.toFixed(1)} MB, end ${samples[samples.length - 1]!.rssMb.toFixed(1)} MB`,
    );
    log(`slope: ${slopeAll.toFixed(2)} MB/min over the run, ${slopeSecondHalf.toFixed(2)} MB/min over the second half`);
    log(`at the peak (t=${peakSample.atS} s): ${breakdown(peakSample)}`);
    log(`at the end (t=${endSample.atS} s): ${breakdown(endSample)}`);
    log(`- [${underLimit ? 'met' : 'NOT MET'}] RSS <= ${RSS_LIMIT_MB} MB: peak ${peak.toFixed(1)} MB`);
    log(
      `- [${flat ? 'met' : 'NOT MET'}] flat (second-half slope <= ${FLAT_SLOPE_MB_PER_MIN} MB/min): ${slopeSecondHalf.toFixed(2)} MB/min`,
    );

    const report = {
      kind: 'switchyard-bench-soak',
      // 2: samples carry the memory breakdown; rss.atPeak and rss.atEnd.
      version: 2,
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      machine,
      settings: {
        soakMs,
        sampleMs,
        clients,
        scenario: 'authorize',
        extraNodeArgs,
        simulatorLedgerCapacity: Number(simulatorLedgerCapacity),
      },
      load: result,
      rss: {
        samples,
        peakMb: peak,
        slopeMbPerMin: slopeAll,
        slopeSecondHalfMbPerMin: slopeSecondHalf,
        atPeak: peakSample,
        atEnd: endSample,
      },
      targets: [
        {
          id: 'soak-rss',
          description: `RSS <= ${RSS_LIMIT_MB} MB under authorize@${clients}`,
          met: underLimit,
          value: peak,
          limit: RSS_LIMIT_MB,
          unit: 'MB',
        },
        {
          id: 'soak-flat',
          description: `second-half RSS slope <= ${FLAT_SLOPE_MB_PER_MIN} MB/min`,
          met: flat,
          value: slopeSecondHalf,
          limit: FLAT_SLOPE_MB_PER_MIN,
          unit: 'MB/min',
        },
      ],
    };
    if (process.env.BENCH_NO_WRITE !== '1') {
      const dir = path.join(repoRoot, 'bench/results');
      mkdirSync(dir, { recursive: true });
      const json = `${JSON.stringify(report, null, 2)}\n`;
      const file = path.join(dir, `soak-${resultFileName(startedAt, machine.hostname)}`);
      writeFileSync(file, json);
      writeFileSync(path.join(dir, 'soak-latest.json'), json);
      log(`results: ${path.relative(repoRoot, file)} and bench/results/soak-latest.json`);
    }
  } finally {
    client.close();
    await service.stop();
    rmSync(probeDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
