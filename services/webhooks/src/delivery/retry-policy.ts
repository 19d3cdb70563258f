/**
 * When a failed delivery is tried again, and when it is given up: exponential backoff with jitter, capped, within
 * a maximum age counted from when the delivery was (last) scheduled — its creation, or its latest replay, so that
 * replaying a week-old delivery does not fail it at once.
 */

export interface RetrySettings {
  /** The wait after the first failure; each next one doubles. */
  readonly baseMs: number;
  /** The longest wait. */
  readonly maxMs: number;
  /** How long after being scheduled a delivery is still tried; then `failed`. */
  readonly maxAgeMs: number;
  /** How long an attempt may take (until the receiver's status line). */
  readonly timeoutMs: number;
}

/** The defaults of `libs/config` (WEBHOOK_RETRY_BASE_MS, …_MAX_MS, WEBHOOK_MAX_AGE_MS, WEBHOOK_TIMEOUT_MS). */
export const defaultRetrySettings: RetrySettings = {
  baseMs: 30_000,
  maxMs: 6 * 60 * 60 * 1000,
  maxAgeMs: 7 * 24 * 60 * 60 * 1000,
  timeoutMs: 5_000,
};

/** ±20 % around the nominal wait, so that deliveries failing together do not all come back together. */
export const JITTER = 0.2;

/** The nominal wait after the `failures`-th failure (1-based): min(maxMs, baseMs·2^(failures-1)). */
export const nominalDelayMs = (failures: number, settings: Pick<RetrySettings, 'baseMs' | 'maxMs'>): number =>
  Math.min(settings.maxMs, settings.baseMs * 2 ** Math.max(0, Math.min(failures - 1, 52)));

/** The nominal wait, jittered: `random` in [0, 1). Never below 1 ms. */
export const retryDelayMs = (
  failures: number,
  settings: Pick<RetrySettings, 'baseMs' | 'maxMs'>,
  random: () => number = Math.random,
): number => Math.max(1, Math.round(nominalDelayMs(failures, settings) * (1 - JITTER + 2 * JITTER * random())));

/**
 * After a failed attempt at `nowMs`: the time of the next attempt, or null when the delivery is given up (the next
 * attempt would come after its maximum age).
 */
export function nextAttemptAfterFailure(options: {
  readonly failures: number;
  readonly scheduledMs: number;
  readonly nowMs: number;
  readonly settings: RetrySettings;
  readonly random?: () => number;
}): number | null {
  const next = options.nowMs + retryDelayMs(options.failures, options.settings, options.random);
  return next > options.scheduledMs + options.settings.maxAgeMs ? null : next;
}
