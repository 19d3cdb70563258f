/**
 * Webhook signatures, for the sender (the webhooks service) and for receivers to copy: lower-case hex
 * HMAC-SHA256 over `"{timestamp}.{raw body}"`, one per active secret, comma separated in one header, so a secret
 * can be rotated without a moment where the receiver cannot verify.
 *
 *   x-service-webhook-id          the same on every attempt of one delivery: deduplicate on it
 *   x-service-webhook-timestamp   unix seconds of this attempt
 *   x-service-webhook-signatures  hex,hex,...
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const WEBHOOK_ID_HEADER = 'x-service-webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'x-service-webhook-timestamp';
export const WEBHOOK_SIGNATURES_HEADER = 'x-service-webhook-signatures';

export const signPayload = (secret: string, timestamp: number, rawBody: string | Uint8Array): string =>
  createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');

/** The three headers of one attempt. */
export function signatureHeaders(options: {
  webhookId: string;
  secrets: readonly string[];
  rawBody: string;
  timestamp: number;
}): Record<string, string> {
  return {
    [WEBHOOK_ID_HEADER]: options.webhookId,
    [WEBHOOK_TIMESTAMP_HEADER]: String(options.timestamp),
    [WEBHOOK_SIGNATURES_HEADER]: options.secrets
      .map((secret) => signPayload(secret, options.timestamp, options.rawBody))
      .join(','),
  };
}

export type VerificationFailure = 'missing_headers' | 'bad_timestamp' | 'stale_timestamp' | 'no_matching_signature';

export type VerificationResult =
  | { readonly ok: true; readonly webhookId: string; readonly timestamp: number }
  | { readonly ok: false; readonly reason: VerificationFailure };

const header = (
  headers: Readonly<Record<string, string | readonly string[] | undefined>>,
  name: string,
): string | undefined => {
  const found = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(found) ? found.join(',') : (found as string | undefined);
};

/**
 * Checks a received webhook: the raw body exactly as received, its headers, and the receiver's secrets (any one
 * matching signature is enough). A timestamp further than `toleranceSeconds` (default 300) from now is refused, so
 * a captured request cannot be replayed later.
 */
export function verifyWebhook(options: {
  readonly rawBody: string | Uint8Array;
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  readonly secrets: readonly string[];
  readonly toleranceSeconds?: number;
  readonly now?: () => Date;
}): VerificationResult {
  const webhookId = header(options.headers, WEBHOOK_ID_HEADER);
  const timestampText = header(options.headers, WEBHOOK_TIMESTAMP_HEADER);
  const signatures = header(options.headers, WEBHOOK_SIGNATURES_HEADER);
  if (!webhookId || !timestampText || !signatures) return { ok: false, reason: 'missing_headers' };
  if (!/^\d{1,12}$/.test(timestampText)) return { ok: false, reason: 'bad_timestamp' };
  const timestamp = Number(timestampText);
  const nowSeconds = Math.floor((options.now?.() ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - timestamp) > (options.toleranceSeconds ?? 300))
    return { ok: false, reason: 'stale_timestamp' };
  const received = signatures
    .split(',')
    .map((value) => value.trim())
    .filter((value) => /^[0-9a-f]{64}$/.test(value))
    .map((value) => Buffer.from(value, 'hex'));
  for (const secret of options.secrets) {
    const expected = Buffer.from(signPayload(secret, timestamp, options.rawBody), 'hex');
    if (received.some((candidate) => timingSafeEqual(candidate, expected))) return { ok: true, webhookId, timestamp };
  }
  return { ok: false, reason: 'no_matching_signature' };
}
