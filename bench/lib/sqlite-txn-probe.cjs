// Preload that times every better-sqlite3 transaction on the service's main thread (`npm run bench` loads it into
// the service with BENCH_SQLITE_TXN=<file>; or by hand):
//   SQLITE_TXN_PROBE_FILE=/tmp/txn.md node -r ./bench/lib/sqlite-txn-probe.cjs -r ./scripts/register.cjs services/standalone/src/main.ts
// Per transaction function (the file it writes to, the call site that made it with `db.transaction`, the way it was
// run: default/deferred/immediate/exclusive, and the connection's `PRAGMA synchronous` when it ran): how many ran,
// their time in all, the time of their callback, and the rest — BEGIN and COMMIT, i.e. writing the WAL and, with
// synchronous=FULL (2), its fsync: time the event loop is held for nothing else. A nested transaction (a SAVEPOINT)
// is counted on its own line and inside its outer one. The table is written to SQLITE_TXN_PROBE_FILE when the process
// exits, over its whole life (or, with SQLITE_TXN_PROBE_FROM_MS, from that long after the preload).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const file = process.env.SQLITE_TXN_PROBE_FILE;
if (file) {
  const Database = require(require.resolve('better-sqlite3', { paths: [process.cwd()] }));
  const fromMs = Number(process.env.SQLITE_TXN_PROBE_FROM_MS || 0);
  const loadedAt = performance.now();
  const lines = new Map();
  const counting = () => performance.now() - loadedAt >= fromMs;
  // The code that called `db.transaction`, and its caller.
  const siteOf = (stack) =>
    stack
      .split('\n')
      .slice(2, 4)
      .map((frame) =>
        frame
          .trim()
          .replace(/^at\s+/, '')
          .replaceAll(`${process.cwd()}${path.sep}`, ''),
      )
      .join(' ← ');

  const transaction = Database.prototype.transaction;
  Database.prototype.transaction = function probedTransaction(fn) {
    const db = this;
    const site = siteOf(new Error().stack || '');
    let inner = 0;
    const callback = function (...args) {
      const started = performance.now();
      try {
        return fn.apply(this, args);
      } finally {
        inner += performance.now() - started;
      }
    };
    const made = transaction.call(this, callback);
    const timed = (run, mode) =>
      function (...args) {
        if (!counting()) return run.apply(this, args);
        const innerBefore = inner;
        const sync = db.pragma('synchronous', { simple: true });
        const started = performance.now();
        try {
          return run.apply(this, args);
        } finally {
          const key = `${path.basename(db.name)}\t${mode}\t${sync}\t${site}`;
          const line = lines.get(key) || { n: 0, total: 0, inner: 0 };
          line.n += 1;
          line.total += performance.now() - started;
          line.inner += inner - innerBefore;
          lines.set(key, line);
        }
      };
    const probed = timed(made, 'default');
    for (const mode of ['deferred', 'immediate', 'exclusive']) probed[mode] = timed(made[mode], mode);
    probed.database = made.database;
    return probed;
  };

  process.on('exit', () => {
    const windowMs = performance.now() - loadedAt - fromMs;
    const rows = [...lines]
      .sort((a, b) => b[1].total - a[1].total)
      .map(([key, line]) => {
        const [db, mode, sync, site] = key.split('\t');
        const commit = line.total - line.inner;
        return `| ${db} | ${mode} | ${sync} | ${line.n} | ${line.total.toFixed(0)} | ${line.inner.toFixed(0)} | ${commit.toFixed(0)} | ${((commit * 1000) / line.n).toFixed(0)} | ${site} |`;
      });
    const out = [
      `SQLite transactions on the main thread over ${(windowMs / 1000).toFixed(1)} s (bench/lib/sqlite-txn-probe.cjs)`,
      '',
      '| file | mode | synchronous | transactions | ms in all | ms in the callback | ms to begin and commit | µs to begin and commit, each | made at |',
      '|---|---|---:|---:|---:|---:|---:|---:|---|',
      ...rows,
      '',
    ].join('\n');
    try {
      fs.writeFileSync(file, out);
    } catch {
      // The probe must never fail the process's exit.
    }
  });
}
