/**
 * The embedded runtime's side of the vault's worker thread (`vault-thread.ts`): starts it, serves what it asks (the
 * runtime's in-process RPC), publishes its events on the runtime's bus, writes its log lines to the runtime's logger,
 * and stops it. The thread has its own V8 heap and event loop: the card hand-over, the card store and the forwarded
 * provider calls run beside the main thread, on the machine's other core (issue 21, docs/performance.md "Stop 45").
 */
import path from 'node:path';
import { MessageChannel, Worker } from 'node:worker_threads';
import type { MessageBus } from '@switchyard/bus';
import { settingsForThread, type Settings } from '@switchyard/config';
import { MessagePortRpc, type InProcessRpc } from '@switchyard/rpc';
import type { Logger } from 'pino';
import {
  errorFromThread,
  threadError,
  type FromVaultThread,
  type ToVaultThread,
  type VaultThreadData,
} from './vault-thread-messages';

/** The thread's compiled TypeScript comes from the same loader as the process's (`npm start` runs with it). */
const register = path.resolve(__dirname, '../../../scripts/register.cjs');

export interface VaultThread {
  /** The vault's patterns, served on the thread. */
  readonly patterns: readonly string[];
  /** Calls to the vault on its thread (the transactions service's `vaultOverRpc`). */
  readonly rpc: MessagePortRpc;
  stop(): Promise<void>;
}

export interface VaultThreadOptions {
  readonly settings: Settings;
  /** The simulator's URL and time limit, when the runtime runs one. */
  readonly mockCard: { readonly baseUrl: string; readonly timeoutMs: number } | null;
  /** What the vault asks (identity's merchant accounts, the transactions service's card connections). */
  readonly rpc: InProcessRpc;
  /** Where the vault's events go (`vault.events`). */
  readonly bus: Pick<MessageBus, 'publish'>;
  readonly log: Logger;
  /** The thread ended before `stop` (a crash): every vault call fails from then on. */
  readonly onExit: (error: Error) => void;
}

export async function startVaultThread(options: VaultThreadOptions): Promise<VaultThread> {
  const channel = new MessageChannel();
  const data: VaultThreadData = {
    settings: settingsForThread(options.settings),
    mockCard: options.mockCard,
    rpcPort: channel.port2,
  };
  const worker = new Worker(path.join(__dirname, 'vault-thread.ts'), {
    execArgv: ['-r', register],
    workerData: data,
    transferList: [channel.port2],
    // The vault's live heap is small (its key cache is bounded): a cap keeps the thread's memory near it. Its young
    // generation is 12 MB (8 MB of new space, the main thread's is 33.5): it allocates a fraction of what the main
    // thread does, and the main thread is the bound (npm start releases its flag for workers: worker-heap.ts).
    resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 12 },
  });
  const rpc = new MessagePortRpc(channel.port1, options.rpc);
  const tell = (message: ToVaultThread) => worker.postMessage(message);

  let stopping: ((error?: Error) => void) | undefined;
  let started: { resolve: (patterns: readonly string[]) => void; reject: (error: Error) => void } | undefined;
  const patterns = new Promise<readonly string[]>((resolve, reject) => {
    started = { resolve, reject };
  });
  worker.on('message', (message: FromVaultThread) => {
    switch (message.kind) {
      case 'ready':
        started?.resolve(message.patterns);
        return;
      case 'failed': {
        const error = errorFromThread(message.error);
        started?.reject(error);
        stopping?.(error);
        return;
      }
      case 'log':
        options.log[message.level](message.fields, message.msg);
        return;
      case 'publish':
        options.bus.publish(message.topic, message.messages).then(
          () => tell({ kind: 'published', id: message.id, error: null }),
          (error: unknown) => tell({ kind: 'published', id: message.id, error: threadError(error) }),
        );
        return;
      case 'stopped':
        stopping?.();
        return;
    }
  });
  let exited = false;
  worker.on('error', (error) => {
    started?.reject(error);
    options.log.error({ err: error }, 'the vault thread failed');
  });
  worker.on('exit', (code) => {
    exited = true;
    void rpc.close();
    const error = new Error(`the vault thread exited (code ${code})`);
    started?.reject(error);
    if (stopping) stopping();
    else options.onExit(error);
  });

  try {
    const served = await patterns;
    started = undefined;
    return {
      patterns: served,
      rpc,
      stop: async () => {
        if (exited) return;
        const stopped = new Promise<void>((resolve, reject) => {
          stopping = (error) => (error ? reject(error) : resolve());
        });
        tell({ kind: 'stop' });
        try {
          await stopped;
        } finally {
          await rpc.close();
          await worker.terminate();
        }
      },
    };
  } catch (error) {
    stopping = () => undefined;
    await rpc.close();
    await worker.terminate();
    throw error;
  }
}
