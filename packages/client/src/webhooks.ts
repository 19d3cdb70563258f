/**
 * Webhook verification for receivers: the same check the service's own `cli webhooks verify` makes
 * (`@switchyard/webhook-signature`, bundled into this package's build). HMAC-SHA256 keyed with the secret's UTF-8
 * bytes over `"{x-service-webhook-timestamp}.{raw body}"`, lower-case hex, one per active secret, comma separated.
 */
import { verifyWebhook as verifyWithSecrets } from '@switchyard/webhook-signature';

export type WebhookHeaders = Readonly<Record<string, string | readonly string[] | undefined>> | Headers;

export type WebhookVerification =
  | { readonly ok: true; readonly webhookId: string; readonly timestamp: number }
  | {
      readonly ok: false;
      readonly reason: 'missing_headers' | 'bad_timestamp' | 'stale_timestamp' | 'no_matching_signature';
    };

export interface WebhookVerifyOptions {
  /** How far the signed timestamp may be from this machine's clock (default 300 s). */
  readonly toleranceSeconds?: number;
  readonly now?: () => Date;
}

/**
 * Checks a received delivery: its headers, the raw body exactly as received (not re-serialized JSON) and the
 * subscription's signing secrets (any one matching signature is enough, so secrets can be rotated).
 */
export function verifyWebhook(
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
  secrets: string | readonly string[],
  options: WebhookVerifyOptions = {},
): WebhookVerification {
  const plainHeaders = headers instanceof Headers ? Object.fromEntries(headers.entries()) : headers;
  return verifyWithSecrets({
    headers: plainHeaders,
    rawBody,
    secrets: typeof secrets === 'string' ? [secrets] : secrets,
    ...(options.toleranceSeconds !== undefined ? { toleranceSeconds: options.toleranceSeconds } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
}
