// The preload (`-r`) of the Node.js 20 side of bench/node-ab.ts, in place of scripts/register.cjs (which refuses
// Node < 22): better-sqlite3 13 crashes Node 20 on load, so `require('better-sqlite3')` answers the 12.x copy that
// node-ab.ts built for Node 20 (BENCH_NODE20_BETTER_SQLITE3, its package directory) — the SQLite binding the
// project ran on Node 20 with. Everything else is the same source, compiled by SWC as scripts/register.cjs does.
const Module = require('node:module');
const path = require('node:path');

const betterSqlite3 = process.env.BENCH_NODE20_BETTER_SQLITE3;
if (!betterSqlite3)
  throw new Error('bench/lib/node20-compat.cjs needs BENCH_NODE20_BETTER_SQLITE3 (set by bench/node-ab.ts)');
const entry = path.join(betterSqlite3, 'lib', 'index.js');
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function resolveBetterSqlite3(request, ...rest) {
  return request === 'better-sqlite3' ? entry : resolveFilename.call(this, request, ...rest);
};

process.env.SWC_NODE_PROJECT = process.env.SWC_NODE_PROJECT || path.join(__dirname, '..', '..', 'tsconfig.base.json');
require('@swc-node/register');
