/**
 * Retries as the API's specification suggests: reads on a 5xx or a connection error, at a fixed interval (200 ms),
 * until 1,000 ms have gone by; writes the same way only when they carry an `Idempotency-Key` (the server replays the
 * first answer to a retry with the same key), and also on 409 `concurrent_request` (the first attempt still runs).
 */
export interface RetryPolicy {
  /** Wait between attempts (default 200 ms). */
  readonly intervalMs?: number;
  /** No attempt starts later than this after the first (default 1,000 ms). */
  readonly maxElapsedMs?: number;
}

export const DEFAULT_RETRY: Required<RetryPolicy> = { intervalMs: 200, maxElapsedMs: 1_000 };

type Fetch = (request: Request) => Promise<Response>;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether a request may be sent again: reads, and writes with an `Idempotency-Key`. */
export const isRetryable = (request: Request): boolean =>
  SAFE_METHODS.has(request.method) || request.headers.has('idempotency-key');

async function isConcurrentRequest(response: Response): Promise<boolean> {
  if (response.status !== 409) return false;
  try {
    return ((await response.clone().json()) as { code?: unknown }).code === 'concurrent_request';
  } catch {
    return false;
  }
}

export function retryingFetch(
  baseFetch: Fetch,
  policy: RetryPolicy | false,
  sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms)),
): Fetch {
  if (policy === false) return baseFetch;
  const { intervalMs, maxElapsedMs } = { ...DEFAULT_RETRY, ...policy };
  return async (request) => {
    if (!isRetryable(request)) return baseFetch(request);
    const started = Date.now();
    for (;;) {
      // Each attempt sends a copy: a body can be read once.
      const attempt = request.clone();
      let outcome: { response: Response } | { error: unknown };
      try {
        outcome = { response: await baseFetch(attempt) };
      } catch (error) {
        if (request.signal.aborted) throw error;
        outcome = { error };
      }
      const failed =
        'error' in outcome ||
        outcome.response.status >= 500 ||
        (!SAFE_METHODS.has(request.method) && (await isConcurrentRequest(outcome.response)));
      if (!failed || Date.now() - started + intervalMs > maxElapsedMs) {
        if ('error' in outcome) throw outcome.error;
        return outcome.response;
      }
      // Not awaited: cancelling one branch of a teed body (a clone) settles only when the other is done too.
      if ('response' in outcome) void outcome.response.body?.cancel().catch(() => undefined);
      await sleep(intervalMs);
    }
  };
}
