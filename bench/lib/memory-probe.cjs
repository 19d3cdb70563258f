// Preload for memory investigations of a service under load (bench/soak.ts loads it into the service it measures):
//   node --expose-gc -r ./bench/lib/memory-probe.cjs -r ./scripts/register.cjs services/standalone/src/main.ts
// With MEMORY_PROBE_FIGURES_FILE set, every MEMORY_PROBE_INTERVAL_MS (default 2000) it replaces that file (written
// beside it, then renamed, so a reader never sees half of it) with one JSON object: the time, process.memoryUsage()
// and v8.getHeapStatistics(), in bytes. The timer is unref'd: it never keeps the process alive.
// On SIGUSR2 it runs a full GC (when --expose-gc is given) and appends one JSON line to MEMORY_PROBE_FILE
// (default /tmp/memory-probe.jsonl): process.memoryUsage() before and after the GC, and V8's heap spaces. With
// MEMORY_PROBE_SNAPSHOT_DIR set it also writes a heap snapshot there (after the GC).
'use strict';
const fs = require('node:fs');
const v8 = require('node:v8');

const file = process.env.MEMORY_PROBE_FILE || '/tmp/memory-probe.jsonl';
const mb = (bytes) => Math.round((bytes / 1048576) * 10) / 10;
const usage = () => Object.fromEntries(Object.entries(process.memoryUsage()).map(([key, value]) => [key, mb(value)]));

const figuresFile = process.env.MEMORY_PROBE_FIGURES_FILE;
if (figuresFile) {
  const intervalMs = Number(process.env.MEMORY_PROBE_INTERVAL_MS || 2000);
  const writeFigures = () => {
    try {
      const figures = {
        at: new Date().toISOString(),
        memoryUsage: process.memoryUsage(),
        heap: v8.getHeapStatistics(),
      };
      fs.writeFileSync(`${figuresFile}.tmp`, JSON.stringify(figures));
      fs.renameSync(`${figuresFile}.tmp`, figuresFile);
    } catch {
      // A full disk or a removed directory must not take the service down; the reader sees older figures.
    }
  };
  writeFigures();
  setInterval(writeFigures, intervalMs).unref();
}

process.on('SIGUSR2', () => {
  const before = usage();
  if (typeof global.gc === 'function') global.gc();
  const after = usage();
  const spaces = Object.fromEntries(
    v8.getHeapSpaceStatistics().map((s) => [s.space_name, { usedMb: mb(s.space_used_size), sizeMb: mb(s.space_size) }]),
  );
  const dir = process.env.MEMORY_PROBE_SNAPSHOT_DIR;
  const snapshot = dir
    ? v8.writeHeapSnapshot(require('node:path').join(dir, `heap-${process.pid}-${Date.now()}.heapsnapshot`))
    : null;
  fs.appendFileSync(
    file,
    `${JSON.stringify({ at: new Date().toISOString(), before, afterGc: after, spaces, snapshot })}\n`,
  );
});
