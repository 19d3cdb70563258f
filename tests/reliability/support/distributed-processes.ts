/**
 * kill -9 and restart of the distributed runtime's pieces (tests/distributed.fixture.ts) for the crash suites:
 * one service process at a time — started again from the same entry point with the same environment (DATA_DIR,
 * ports; the second gateway's own PORT) — and a Kafka broker started by `scripts/kafka.sh` (its JVM's pid is in
 * `$KAFKA_HOME/kafka.pid`). "Serving again" means both gateways answer `/readyz` 200: its checks cover identity,
 * transactions, vault, gift-cards and webhooks (RPC pings), the bus (Kafka) and the cache (Redis).
 */
import fs from 'node:fs';
import path from 'node:path';
import { freePort, startTsProcess, waitFor, type RunningProcess } from '@switchyard/testing';
import type { DistributedRuntime } from '../../distributed.fixture';
import { sleep } from './random';

export type ServiceProcessName =
  | 'identity'
  | 'transactions'
  | 'vault'
  | 'gift-cards'
  | 'webhooks'
  | 'gateway'
  | 'second-gateway';

const entries: Readonly<Record<ServiceProcessName, string>> = {
  identity: 'services/identity/src/main.ts',
  transactions: 'services/transactions/src/main.ts',
  vault: 'services/vault/src/main.ts',
  'gift-cards': 'services/gift-cards/src/main.ts',
  webhooks: 'services/webhooks/src/main.ts',
  gateway: 'services/gateway/src/main.ts',
  'second-gateway': 'services/gateway/src/main.ts',
};

export interface ProcessControl {
  /** SIGKILL to the named process; waits for its exit. Its output is kept under `<name> (killed <n>)`. */
  kill9(name: ServiceProcessName): Promise<void>;
  /** Starts it again with the same entry point and environment. */
  restart(name: ServiceProcessName): Promise<void>;
  /** Resolves once both gateways answer `/readyz` 200. */
  serving(timeoutMs?: number): Promise<void>;
}

export function processControl(runtime: DistributedRuntime): ProcessControl {
  // The fixture's record of processes: replaced entries keep the runtime's `describe` and `stop` accurate.
  const processes = runtime.processes as Record<string, RunningProcess>;
  const kills = new Map<string, number>();
  const envOf = (name: ServiceProcessName) =>
    name === 'second-gateway' ? { ...runtime.env, PORT: new URL(runtime.secondUrl).port } : { ...runtime.env };
  return {
    kill9: async (name) => {
      const current = processes[name];
      if (!current) throw new Error(`no ${name} process to kill`);
      await current.kill('SIGKILL');
      const n = (kills.get(name) ?? 0) + 1;
      kills.set(name, n);
      processes[`${name} (killed ${n})`] = current;
      delete processes[name];
    },
    restart: async (name) => {
      processes[name] = startTsProcess(entries[name], envOf(name));
    },
    serving: async (timeoutMs = 60_000) => {
      for (const url of [runtime.baseUrl, runtime.secondUrl]) {
        await waitFor(
          `${url}/readyz 200`,
          async () =>
            (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3_000) })).status === 200 ? true : undefined,
          timeoutMs,
          runtime.describe,
        );
      }
    },
  };
}

/** The ports a restarted server gets again and again: `freePort` chooses below the ephemeral range. */
export const freePortBelowEphemeralRange = freePort;

/** Whether the process runs (a zombie, killed but not yet reaped, does not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/s.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * SIGKILL to the broker that `scripts/kafka.sh start` ran with this KAFKA_HOME, and wait until it is gone;
 * resolves with its pid. Start it again with the same script (its data directory survives; the broker recovers
 * its logs after the unclean stop).
 */
export async function kill9Broker(kafkaHome: string, timeoutMs = 30_000): Promise<number> {
  const pid = Number(fs.readFileSync(path.join(kafkaHome, 'kafka.pid'), 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no broker pid in ${kafkaHome}/kafka.pid`);
  // Only this broker: its command line names its own KAFKA_HOME's configuration (never another broker, never a
  // recycled pid).
  const commandLine = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  if (!commandLine.includes('kafka.Kafka') || !commandLine.includes(path.join(kafkaHome, 'server.properties'))) {
    throw new Error(`pid ${pid} is not the broker of ${kafkaHome}: ${commandLine.join(' ')}`);
  }
  process.kill(pid, 'SIGKILL');
  const deadline = Date.now() + timeoutMs;
  while (running(pid)) {
    if (Date.now() > deadline) throw new Error(`the broker (pid ${pid}) still runs ${timeoutMs} ms after SIGKILL`);
    await sleep(25);
  }
  return pid;
}
