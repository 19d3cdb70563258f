/**
 * What the embedded runtime's main thread and the vault's worker thread (`vault-thread.ts`, `startVaultThread`) say to
 * each other on the worker's own port; the RPC both ways has a MessagePort of its own (`MessagePortRpc`).
 */
import type { MessagePort } from 'node:worker_threads';
import type { OutgoingMessage } from '@switchyard/bus';

export interface VaultThreadData {
  /** `settingsForThread` of the runtime's settings. */
  readonly settings: Record<string, unknown>;
  /** The simulator's network token and account updater services, when the runtime runs one. */
  readonly mockCard: { readonly baseUrl: string; readonly timeoutMs: number } | null;
  /** The RPC port (`MessagePortRpc`): the vault's patterns served, identity's and the transactions' asked. */
  readonly rpcPort: MessagePort;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** From the vault's thread. */
export type FromVaultThread =
  | { readonly kind: 'ready'; readonly patterns: readonly string[] }
  | { readonly kind: 'failed'; readonly error: ThreadError }
  | { readonly kind: 'log'; readonly level: LogLevel; readonly fields: Record<string, unknown>; readonly msg: string }
  | {
      readonly kind: 'publish';
      readonly id: number;
      readonly topic: string;
      readonly messages: readonly OutgoingMessage[];
    }
  | { readonly kind: 'stopped' };

/** To the vault's thread. */
export type ToVaultThread =
  | { readonly kind: 'published'; readonly id: number; readonly error: ThreadError | null }
  | { readonly kind: 'stop' };

/** An error as it crosses threads (its class does not). */
export interface ThreadError {
  readonly type: string;
  readonly message: string;
  readonly stack?: string;
}

export const threadError = (error: unknown): ThreadError =>
  error instanceof Error
    ? { type: error.name, message: error.message, ...(error.stack ? { stack: error.stack } : {}) }
    : { type: 'Error', message: String(error) };

export const errorFromThread = (error: ThreadError): Error =>
  Object.assign(new Error(error.message), { name: error.type, ...(error.stack ? { stack: error.stack } : {}) });
