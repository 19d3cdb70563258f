/**
 * `webhooks verify`: checks a received webhook request the way a receiver should (docs/events.md), from its raw
 * body and its headers, with `verifyWebhook` of `@switchyard/webhook-signature`.
 */
import { InvalidArgumentError } from 'commander';
import {
  verifyWebhook,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURES_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  type VerificationFailure,
} from '@switchyard/webhook-signature';

export const DEFAULT_TOLERANCE_SECONDS = 300;

export type ReceivedHeaders = Readonly<Record<string, readonly string[]>>;

/** `--header 'name: value'`, repeatable; a header given twice keeps both values (as a receiver would see them). */
export function collectHeader(value: string, previous: ReceivedHeaders = {}): ReceivedHeaders {
  const colon = value.indexOf(':');
  const name = colon > 0 ? value.slice(0, colon).trim().toLowerCase() : '';
  if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name))
    throw new InvalidArgumentError(`expected 'name: value', got ${JSON.stringify(value)}`);
  return { ...previous, [name]: [...(previous[name] ?? []), value.slice(colon + 1).trim()] };
}

/** `--tolerance-seconds N`: a whole number of seconds, 0 or more. */
export function parseToleranceSeconds(value: string): number {
  if (!/^\d{1,10}$/.test(value.trim())) throw new InvalidArgumentError('expected a whole number of seconds');
  return Number(value.trim());
}

export interface VerifyInput {
  readonly secrets: readonly string[];
  readonly rawBody: Uint8Array | string;
  readonly headers: ReceivedHeaders;
  readonly toleranceSeconds?: number;
  readonly now?: () => Date;
}

export type VerifyOutcome =
  | { readonly valid: true; readonly webhookId: string; readonly message: string }
  | { readonly valid: false; readonly reason: VerificationFailure | 'no_secret'; readonly message: string };

export function verifyReceivedWebhook(input: VerifyInput): VerifyOutcome {
  const toleranceSeconds = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (input.secrets.length === 0 || input.secrets.some((secret) => secret === '')) {
    return {
      valid: false,
      reason: 'no_secret',
      message: 'invalid: no_secret (give the signing secret with --secret; repeat it for several)',
    };
  }
  const result = verifyWebhook({
    rawBody: input.rawBody,
    headers: input.headers,
    secrets: input.secrets,
    toleranceSeconds,
    ...(input.now ? { now: input.now } : {}),
  });
  if (result.ok) return { valid: true, webhookId: result.webhookId, message: `valid (webhook id ${result.webhookId})` };
  return {
    valid: false,
    reason: result.reason,
    message: `invalid: ${result.reason} (${explain(result.reason, input, toleranceSeconds)})`,
  };
}

function explain(reason: VerificationFailure, input: VerifyInput, toleranceSeconds: number): string {
  switch (reason) {
    case 'missing_headers': {
      const missing = [WEBHOOK_ID_HEADER, WEBHOOK_TIMESTAMP_HEADER, WEBHOOK_SIGNATURES_HEADER].filter(
        (name) => !(input.headers[name] ?? []).some((value) => value !== ''),
      );
      return `missing ${missing.join(', ')}: pass each received header with --header 'name: value'`;
    }
    case 'bad_timestamp':
      return `${WEBHOOK_TIMESTAMP_HEADER} is not a number of unix seconds`;
    case 'stale_timestamp': {
      const timestamp = Number(input.headers[WEBHOOK_TIMESTAMP_HEADER]?.[0]);
      const age = Math.floor((input.now?.() ?? new Date()).getTime() / 1000) - timestamp;
      return `signed at ${new Date(timestamp * 1000).toISOString()}, ${Math.abs(age)} s ${age >= 0 ? 'ago' : 'in the future'}, beyond the tolerance of ${toleranceSeconds} s; raise --tolerance-seconds to check an older request`;
    }
    case 'no_matching_signature':
      return 'no signature matches the secrets given: a wrong or revoked secret, or a body that is not byte for byte the one received';
  }
}
