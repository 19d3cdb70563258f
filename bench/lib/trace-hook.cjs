/**
 * Diagnostics preload for `npm run bench:distributed -- --trace` (not used otherwise): loaded into each service
 * process with NODE_OPTIONS=--require, it times every hop the process makes or serves and writes a summary when
 * it gets SIGUSR2 (then starts over), to $BENCH_TRACE_DIR/$BENCH_TRACE_NAME-<n>.json. Keys:
 *
 *   http-in <METHOD> /<first segment>   an HTTP request served: 'request' event → response 'finish'
 *   fetch <host:port> /<first segment>  an outgoing fetch(): call → response headers
 *   call <pattern>                      a TCP RPC made (the project's TcpRpcClient.call): call → reply
 *   serve <pattern>                     a NestJS TCP RPC served: handler start → its value
 *   inproc <pattern>                    an in-process RPC (embedded runtime): call → reply
 *   append                              an event store append (SQLite, group commit): call → committed
 *
 * Patches are applied once the entry point's modules are loaded (setImmediate after start-up), by class: Nest's
 * ServerTCP, and the project's TcpRpcClient / InProcessRpc / SqliteEventStore found in the require cache.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const http = require('node:http');
const { performance } = require('node:perf_hooks');

const dir = process.env.BENCH_TRACE_DIR;
const name = process.env.BENCH_TRACE_NAME || String(process.pid);
let samples = new Map();
let seq = 0;

const record = (key, ms) => {
  let list = samples.get(key);
  if (!list) samples.set(key, (list = []));
  list.push(ms);
};

function summary() {
  const out = {};
  for (const [key, list] of samples) {
    list.sort((a, b) => a - b);
    const at = (p) => list[Math.min(list.length - 1, Math.max(0, Math.ceil((p / 100) * list.length) - 1))];
    const total = list.reduce((sum, value) => sum + value, 0);
    out[key] = { count: list.length, meanMs: total / list.length, p50Ms: at(50), p99Ms: at(99), totalMs: total };
  }
  return out;
}

if (dir) {
  process.on('SIGUSR2', () => {
    const file = path.join(dir, `${name}-${seq}.json`);
    seq += 1;
    const data = summary();
    samples = new Map();
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(data));
    fs.renameSync(`${file}.tmp`, file);
  });
}

const firstSegment = (url) => {
  const pathname = String(url ?? '').split('?')[0];
  const segment = pathname.split('/')[1] ?? '';
  return `/${/^[0-9a-f-]{36}$/.test(segment) ? ':id' : segment}`;
};

// ---- HTTP served -------------------------------------------------------------------------------------------------
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (...args) {
  const [event, request, response] = args;
  if (event === 'request' && response && typeof response.once === 'function') {
    const t0 = performance.now();
    const key = `http-in ${request.method} ${firstSegment(request.url)}`;
    response.once('finish', () => record(key, performance.now() - t0));
  }
  return emit.apply(this, args);
};

// ---- fetch -------------------------------------------------------------------------------------------------------
if (typeof globalThis.fetch === 'function') {
  const originalFetch = globalThis.fetch;
  globalThis.fetch = function (input, init) {
    const t0 = performance.now();
    let key = 'fetch';
    try {
      const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
      key = `fetch ${url.host} ${firstSegment(url.pathname)}`;
    } catch {
      // keep 'fetch'
    }
    return originalFetch.call(this, input, init).then((response) => {
      record(key, performance.now() - t0);
      return response;
    });
  };
}

// ---- patches by class, once the modules are loaded ---------------------------------------------------------------
function patchAsync(proto, method, keyOf) {
  const original = proto[method];
  if (typeof original !== 'function' || original.__benchTraced) return;
  const wrapped = function (...args) {
    const t0 = performance.now();
    const result = original.apply(this, args);
    if (result && typeof result.then === 'function') {
      return result.then((value) => {
        record(keyOf(args), performance.now() - t0);
        return value;
      });
    }
    return result;
  };
  wrapped.__benchTraced = true;
  proto[method] = wrapped;
}

function applyPatches() {
  for (const [file, module] of Object.entries(require.cache)) {
    const exports = module?.exports;
    if (!exports) continue;
    if (file.endsWith(path.join('libs', 'rpc', 'src', 'in-process-rpc.ts')) && exports.InProcessRpc) {
      patchAsync(exports.InProcessRpc.prototype, 'call', (args) => `inproc ${args[0]}`);
    }
    if (file.endsWith(path.join('libs', 'rpc', 'src', 'tcp-rpc.ts')) && exports.TcpRpcClient) {
      patchAsync(exports.TcpRpcClient.prototype, 'call', (args) => `call ${args[0]}`);
    }
    if (
      file.endsWith(path.join('libs', 'eventstore', 'src', 'sqlite', 'sqlite-event-store.ts')) &&
      exports.SqliteEventStore
    ) {
      patchAsync(exports.SqliteEventStore.prototype, 'append', () => 'append');
    }
    // Our NestJS TCP server (libs/rpc): @nestjs/microservices 12 is loaded as ES modules, outside require.cache.
    if (file.endsWith(path.join('libs', 'rpc', 'src', 'tcp-rpc.ts')) && exports.StringPatternServerTcp) {
      const proto = exports.StringPatternServerTcp.prototype;
      if (!Object.hasOwn(proto, 'getHandlerByPattern')) {
        const getHandler = proto.getHandlerByPattern;
        proto.getHandlerByPattern = function (pattern) {
          const handler = getHandler.call(this, pattern);
          if (!handler) return handler;
          const wrapped = async (...args) => {
            const t0 = performance.now();
            const value = await handler(...args);
            record(`serve ${pattern}`, performance.now() - t0);
            return value;
          };
          return Object.assign(wrapped, handler);
        };
      }
    }
  }
}

setImmediate(applyPatches);
// Modules loaded later (lazily) are patched too: look again a few times during start-up.
for (const ms of [1_000, 5_000, 15_000]) setTimeout(applyPatches, ms).unref();
