/**
 * The enumeration rate limit's Redis script: GCRA (the adapter's own script, `GCRA_SCRIPT`) against a sliding-window
 * log (a sorted set of request times: ZREMRANGEBYSCORE, ZCARD, ZADD), both one EVALSHA per request on Redis' clock,
 * on the local Redis. Per cell: requests/s, client-side p50/p99 latency, and Redis' own CPU time per call (from
 * INFO commandstats, so other clients of the same Redis add a little noise). Then memory per key (MEMORY USAGE).
 *
 * Workloads: `many keys` — each request on one of 10,000 tokens (a busy shop: mostly allowed); `one hot key` — every
 * request on one token already over its limit (an enumeration attempt: refused). Limit 50 a minute as in production.
 * Concurrency 1 = one connection, one request at a time; 16 = sixteen connections, each one request at a time.
 *
 *   node -r ./scripts/register.cjs bench/rate-limit.ts [--seconds 1.5] [--rounds 3]
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { GCRA_SCRIPT } from '../libs/kv/src/redis/redis-rate-limiter';

const argValue = (name: string): string | undefined => {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
};
const SECONDS = Number(argValue('--seconds') ?? 1.5);
const ROUNDS = Number(argValue('--rounds') ?? 3);
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const LIMIT = { count: 50, periodMs: 60_000 };
const KEYS = 10_000;
const run = randomBytes(4).toString('hex');
const prefix = `switchyard-bench:rate-limit:${run}:`;

/**
 * The sliding-window log: one sorted-set member per allowed request, scored by its time (µs); members older than the
 * period are dropped first. KEYS[1]; ARGV: count, periodMs, a unique member suffix. Same reply as the GCRA script.
 */
const SLIDING_WINDOW_LOG_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local count = tonumber(ARGV[1])
local period = tonumber(ARGV[2]) * 1000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - period)
local used = redis.call('ZCARD', KEYS[1])
if used >= count then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, math.ceil((tonumber(oldest[2]) + period - now) / 1000), 0}
end
redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, 0, count - used - 1}
`;

interface Scripted extends Redis {
  gcra(key: string, count: number, periodMs: number): Promise<[number, number, number]>;
  slidingWindowLog(key: string, count: number, periodMs: number, member: string): Promise<[number, number, number]>;
}

type Algorithm = 'GCRA' | 'sliding-window log';
type Workload = 'many keys' | 'one hot key';
const algorithms: readonly Algorithm[] = ['GCRA', 'sliding-window log'];
const workloads: readonly Workload[] = ['many keys', 'one hot key'];
const concurrencies = [1, 16] as const;

function connect(): Scripted {
  const redis = new Redis(url, { keyPrefix: prefix, maxRetriesPerRequest: 0, enableOfflineQueue: true });
  redis.defineCommand('gcra', { numberOfKeys: 1, lua: GCRA_SCRIPT });
  redis.defineCommand('slidingWindowLog', { numberOfKeys: 1, lua: SLIDING_WINDOW_LOG_SCRIPT });
  return redis as Scripted;
}

let sequence = 0;
const call = (redis: Scripted, algorithm: Algorithm, key: string): Promise<[number, number, number]> =>
  algorithm === 'GCRA'
    ? redis.gcra(key, LIMIT.count, LIMIT.periodMs)
    : redis.slidingWindowLog(key, LIMIT.count, LIMIT.periodMs, `${process.pid}-${(sequence += 1)}`);

const keyFor = (algorithm: Algorithm, workload: Workload): string =>
  workload === 'one hot key' ? `${algorithm}:hot` : `${algorithm}:token-${Math.floor(Math.random() * KEYS)}`;

async function evalshaStats(admin: Redis): Promise<{ calls: number; usec: number }> {
  const match = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await admin.info('commandstats'));
  return { calls: Number(match?.[1] ?? 0), usec: Number(match?.[2] ?? 0) };
}

interface Cell {
  readonly opsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly serverUsPerCall: number;
  readonly allowedShare: number;
}

async function measure(
  clients: readonly Scripted[],
  admin: Redis,
  algorithm: Algorithm,
  workload: Workload,
  concurrency: number,
): Promise<Cell> {
  const used = clients.slice(0, concurrency);
  // Warm up: scripts loaded, the hot key over its limit.
  for (const client of used) await call(client, algorithm, keyFor(algorithm, workload));
  if (workload === 'one hot key')
    for (let index = 0; index <= LIMIT.count; index += 1) await call(used[0]!, algorithm, keyFor(algorithm, workload));

  const latencies: number[] = [];
  let allowed = 0;
  const before = await evalshaStats(admin);
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  await Promise.all(
    used.map(async (client) => {
      while (performance.now() < deadline) {
        const sent = performance.now();
        const [isAllowed] = await call(client, algorithm, keyFor(algorithm, workload));
        latencies.push(performance.now() - sent);
        if (isAllowed === 1) allowed += 1;
      }
    }),
  );
  const elapsed = performance.now() - started;
  const after = await evalshaStats(admin);
  latencies.sort((a, b) => a - b);
  const at = (quantile: number): number =>
    latencies[Math.min(latencies.length - 1, Math.floor(quantile * latencies.length))]!;
  return {
    opsPerSecond: (latencies.length / elapsed) * 1000,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    serverUsPerCall: (after.usec - before.usec) / Math.max(1, after.calls - before.calls),
    allowedShare: allowed / latencies.length,
  };
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function memoryPerKey(
  client: Scripted,
  admin: Redis,
  algorithm: Algorithm,
  requests: number,
  count: number,
): Promise<number> {
  const key = `${algorithm}:memory-${requests}-${count}`;
  for (let index = 0; index < requests; index += 1) {
    if (algorithm === 'GCRA') await client.gcra(key, count, LIMIT.periodMs);
    else await client.slidingWindowLog(key, count, LIMIT.periodMs, `${process.pid}-${(sequence += 1)}`);
  }
  return Number(await admin.call('MEMORY', 'USAGE', `${prefix}${key}`, 'SAMPLES', '0'));
}

async function main(): Promise<void> {
  const admin = new Redis(url, { maxRetriesPerRequest: 0 });
  const clients = Array.from({ length: Math.max(...concurrencies) }, connect);
  try {
    const info = await admin.info('server');
    const version = /redis_version:(\S+)/.exec(info)?.[1];
    console.log(
      `Redis ${version} at ${url}; ${SECONDS} s per cell, ${ROUNDS} interleaved rounds, median shown; limit ${LIMIT.count} per ${LIMIT.periodMs / 1000} s\n`,
    );

    const results = new Map<string, Cell[]>();
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const workload of workloads) {
        for (const concurrency of concurrencies) {
          for (const algorithm of round % 2 === 0 ? algorithms : [...algorithms].reverse()) {
            const cell = await measure(clients, admin, algorithm, workload, concurrency);
            const name = `${algorithm}|${workload}|${concurrency}`;
            results.set(name, [...(results.get(name) ?? []), cell]);
          }
        }
      }
    }

    console.log('| algorithm | workload | concurrency | requests/s | p50 ms | p99 ms | Redis µs/call | allowed |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const workload of workloads) {
      for (const concurrency of concurrencies) {
        for (const algorithm of algorithms) {
          const cells = results.get(`${algorithm}|${workload}|${concurrency}`)!;
          const pick = (field: keyof Cell) => median(cells.map((cell) => cell[field]));
          console.log(
            `| ${algorithm} | ${workload} | ${concurrency} | ${Math.round(pick('opsPerSecond')).toLocaleString('en-US')} | ${pick('p50Ms').toFixed(3)} | ` +
              `${pick('p99Ms').toFixed(3)} | ${pick('serverUsPerCall').toFixed(2)} | ${Math.round(pick('allowedShare') * 100)} % |`,
          );
        }
      }
    }

    console.log('\n| algorithm | key after 1 request | after 50 (limit 50) | after 500 (limit 500) |');
    console.log('|---|---|---|---|');
    for (const algorithm of algorithms) {
      const sizes = [
        await memoryPerKey(clients[0]!, admin, algorithm, 1, 50),
        await memoryPerKey(clients[0]!, admin, algorithm, 50, 50),
        await memoryPerKey(clients[0]!, admin, algorithm, 500, 500),
      ];
      console.log(`| ${algorithm} | ${sizes.map((bytes) => `${bytes} B`).join(' | ')} |`);
    }
  } finally {
    // Everything of this run (it would expire within a minute anyway).
    let cursor = '0';
    do {
      const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await admin.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    await Promise.all(clients.map((client) => client.quit()));
    await admin.quit();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
