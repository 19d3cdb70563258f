/**
 * A call to a service that may start after the caller (a key hand-over at start): asked again every `retryMs` until
 * it answers. A refusal (403: a certificate the service does not admit for the pattern) is not retried.
 */
import { ApiError } from '@switchyard/api';
import type { RpcClient } from './rpc';

export interface CallUntilAnsweredOptions {
  readonly retryMs: number;
  /** Told of each failed ask before the wait (log that the other side is not there yet; never the answer). */
  readonly onRetry?: (error: unknown) => void;
  readonly signal?: AbortSignal;
}

export async function callUntilAnswered<T>(
  rpc: RpcClient,
  pattern: string,
  payload: unknown,
  options: CallUntilAnsweredOptions,
): Promise<T> {
  for (;;) {
    try {
      return await rpc.call<T>(pattern, payload);
    } catch (error) {
      if (error instanceof ApiError && error.status === 403) throw error;
      options.onRetry?.(error);
      options.signal?.throwIfAborted();
      await new Promise((resolve) => setTimeout(resolve, options.retryMs));
    }
  }
}
