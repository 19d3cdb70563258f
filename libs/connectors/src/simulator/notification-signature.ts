import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The simulator's notification signature: header `x-mock-card-signature: t=<unix seconds>,v1=<hex>` where v1 is
 * HMAC-SHA256(secret, `${t}.${rawBody}`). Timestamp in the signed text so an old notification cannot be replayed
 * outside the tolerance window.
 */
export const signatureHeader = 'x-mock-card-signature';
export const eventIdHeader = 'x-mock-card-event-id';

export function signNotification(secret: string, rawBody: string, timestampSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${timestampSeconds}.${rawBody}`).digest('hex');
  return `t=${timestampSeconds},v1=${mac}`;
}

export type SignatureCheck = 'valid' | 'malformed' | 'mismatch' | 'stale';

export function checkSignature(
  secret: string,
  rawBody: string,
  header: string,
  nowSeconds: number,
  toleranceSeconds: number,
): SignatureCheck {
  const parts = new Map(header.split(',').map((part) => part.trim().split('=', 2) as [string, string | undefined]));
  const timestamp = Number(parts.get('t'));
  const given = parts.get('v1');
  if (!Number.isInteger(timestamp) || given === undefined || !/^[0-9a-f]{64}$/.test(given)) return 'malformed';
  const expected = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest();
  if (!timingSafeEqual(expected, Buffer.from(given, 'hex'))) return 'mismatch';
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return 'stale';
  return 'valid';
}
