/**
 * Adyen's standard webhooks as our notifications. Each item is verified with the library's HMAC validator
 * (`additionalData.hmacSignature`, HMAC-SHA256 over the item's fields with the connection's hex key) before
 * anything is read from it. Adyen sends one item per request; its `merchantReference` is our transaction id, or for
 * a modification our operation reference (`<transaction>/<kind>/<operation>`, adyen-codes.ts). Events no
 * transaction tracks (reports, disputes, …) are verified and answered null: acknowledged, nothing applied.
 */
import { hmacValidator, type Types } from '@adyen/api-library';
import type { NotificationHeaders, ProviderNotification } from '../connector';
import { NotificationRejectedError } from '../connector-errors';
import { adyenErrorCode, adyenRefusalCodeOf, parseOperationReference } from './adyen-codes';

type Item = Types.notification.NotificationRequestItem;

export interface AdyenNotificationVerification {
  readonly hmacKey: string;
  readonly merchantAccount: string;
}

const malformed = (message: string) => new NotificationRejectedError('malformed_body', message);

export function parseAdyenNotification(rawBody: string | Uint8Array, _headers: NotificationHeaders, verification: AdyenNotificationVerification): ProviderNotification | null {
  const raw = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8');
  let body: { notificationItems?: unknown };
  try {
    body = JSON.parse(raw) as { notificationItems?: unknown };
  } catch (cause) {
    throw new NotificationRejectedError('malformed_body', 'notification body is not JSON', { cause });
  }
  const items = body.notificationItems;
  if (!Array.isArray(items) || items.length !== 1) throw malformed('notificationItems must hold exactly one item (Adyen sends one per request)');
  const item = (items[0] as { NotificationRequestItem?: Item } | null)?.NotificationRequestItem;
  if (!item || typeof item !== 'object') throw malformed('notificationItems[0].NotificationRequestItem is missing');
  const signature = (item.additionalData as Record<string, unknown> | undefined)?.hmacSignature;
  if (typeof signature !== 'string' || signature === '') throw new NotificationRejectedError('missing_signature', 'no additionalData.hmacSignature');
  if (!validSignature(item, verification.hmacKey)) throw new NotificationRejectedError('bad_signature', 'additionalData.hmacSignature does not verify');
  // Signed by this connection's key, but for another merchant account of the same company: not this connection's.
  if (item.merchantAccountCode !== verification.merchantAccount) return null;
  return toNotification(item);
}

function validSignature(item: Item, hmacKey: string): boolean {
  try {
    return new hmacValidator().validateHMAC(item, hmacKey);
  } catch {
    return false; // a key or signature that is not even well-formed
  }
}

function toNotification(item: Item): ProviderNotification | null {
  const text = (value: unknown, field: string): string => {
    if (typeof value !== 'string' || value === '') throw malformed(`${field} must be a non-empty string`);
    return value;
  };
  const eventCode = text(item.eventCode, 'eventCode');
  const pspReference = text(item.pspReference, 'pspReference');
  const success = item.success === 'true';
  const amount = item.amount?.value;
  const currency = item.amount?.currency;
  if (typeof amount !== 'number' || !Number.isInteger(amount) || typeof currency !== 'string') throw malformed('amount must have an integer value and a currency');
  const occurredAt = text(item.eventDate, 'eventDate');
  const reference = parseOperationReference(text(item.merchantReference, 'merchantReference'));
  const base = {
    // A redelivery repeats the same event; a later event on the same reference differs in code or success.
    providerEventId: `${eventCode}:${pspReference}:${item.success}`,
    reference: reference.transactionId,
    sequence: Number.isNaN(Date.parse(occurredAt)) ? 0 : Date.parse(occurredAt),
    occurredAt,
  };
  const original = item.originalReference ?? pspReference;
  const reason = item.reason || undefined;
  const failure = (fallback: string) => ({ errorCode: fallback, ...(reason ? { rawResponseDescription: reason } : {}) });
  switch (eventCode) {
    case 'AUTHORISATION': {
      if (success) return { ...base, type: 'authorization', providerTransactionId: pspReference, status: 'authorized', amount, currency };
      const code = adyenRefusalCodeOf(reason);
      return { ...base, type: 'authorization', providerTransactionId: pspReference, status: 'declined', amount, currency, errorCode: adyenErrorCode(code, reason), ...(code ? { rawResponseCode: code } : {}), ...(reason ? { rawResponseDescription: reason } : {}) };
    }
    case 'CAPTURE':
    case 'CAPTURE_FAILED': {
      const captured = eventCode === 'CAPTURE' && success;
      return {
        ...base,
        type: 'capture',
        providerTransactionId: original,
        providerCaptureId: pspReference,
        ...(reference.kind === 'c' && reference.operationId ? { captureReference: reference.operationId } : {}),
        status: captured ? 'succeeded' : 'failed',
        amount,
        currency,
        ...(captured ? {} : { errorCode: 'capture_failed' }),
      };
    }
    case 'REFUND':
    case 'REFUND_FAILED': {
      // A refund made outside Switchyard (Adyen's Customer Area) has no refund of ours to settle.
      if (reference.kind !== 'r' || !reference.operationId) return null;
      const refunded = eventCode === 'REFUND' && success;
      return { ...base, type: 'refund', providerTransactionId: original, providerRefundId: pspReference, refundReference: reference.operationId, status: refunded ? 'succeeded' : 'failed', amount, currency, ...(refunded ? {} : { errorCode: 'refund_failed' }) };
    }
    case 'CANCELLATION':
      return { ...base, type: 'void', providerTransactionId: original, status: success ? 'succeeded' : 'failed', ...(success ? {} : failure('void_failed')) };
    case 'AUTHORISATION_ADJUSTMENT':
      return {
        ...base,
        type: 'authorization-increment',
        providerTransactionId: original,
        ...(reference.kind === 'i' && reference.operationId ? { incrementReference: reference.operationId } : {}),
        status: success ? 'succeeded' : 'failed',
        authorizedAmount: amount,
        currency,
        ...(success ? {} : failure('issuer_decline')),
      };
    default:
      return null;
  }
}
