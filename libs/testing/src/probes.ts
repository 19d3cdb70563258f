/** Helpers for suites that talk to real infrastructure. Reachability probes live beside each adapter's contract. */
import fs from 'node:fs';
import net from 'node:net';

export const kafkaBrokersForTests = (): string[] =>
  (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',').map((b) => b.trim());

const POOL_SLICES = 8;

/**
 * Where `freePort` chooses: below the kernel's ephemeral range, from 10,000 (or 1,000 below the range). Each Vitest
 * worker (`VITEST_POOL_ID`, 1, 2, …) gets a slice of its own: `handedOut` only keeps one process from handing a port
 * out twice, and two workers choosing the same port moments apart collided (seen: a crash suite's own Kafka broker
 * found its port taken by another file's runtime). Outside Vitest (scripts, benchmarks), the whole range.
 */
export function freePortRange(poolId: string | undefined): { readonly from: number; readonly to: number } {
  let low = 32_768;
  try {
    low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || low;
  } catch {
    // not Linux: keep the usual default
  }
  const from = Math.min(10_000, low - 1_000);
  const pool = Number(poolId);
  if (!Number.isInteger(pool) || pool < 1) return { from, to: low };
  const size = Math.floor((low - from) / POOL_SLICES);
  const start = from + ((pool - 1) % POOL_SLICES) * size;
  return { from: start, to: start + size };
}

/** Ports this process handed out already: two servers of one test never get the same one. */
const handedOut = new Set<number>();

/**
 * A free loopback port for a server started LATER (a child process, a broker killed and started again). Chosen BELOW
 * the kernel's ephemeral range (`net.ipv4.ip_local_port_range`): a port inside it (what binding to port 0 gives) is
 * handed by the kernel to any process that binds port 0 or connects out as soon as it is free, so between choosing it
 * and the start another test's server or client can take it (seen: a simulator listening on port 0 got the port a
 * webhooks process was about to bind). Below the range only an explicit bind takes a port.
 */
export async function freePort(): Promise<number> {
  const { from, to } = freePortRange(process.env.VITEST_POOL_ID);
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = from + Math.floor(Math.random() * (to - from));
    if (handedOut.has(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port found in ${from}–${to - 1}`);
}
