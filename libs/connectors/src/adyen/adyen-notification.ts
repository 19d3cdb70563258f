/**
 * Adyen's standard webhooks as our notifications. A request holds one or more items (the Webhooks-v1 document's
 * `notificationItems` is an array): each is verified with the library's HMAC validator (`additionalData.hmacSignature`,
 * HMAC-SHA256 over the item's fields with the connection's hex key) before anything is read from any of them, so one
 * bad signature refuses the whole request. An item's `merchantReference` is the payment's reference — our transaction
 * id — also on a modification (the document: "Your reference to uniquely identify the payment"); a capture or refund
 * is named by Adyen's `pspReference` of it, which its `/captures` or `/refunds` answer gave us. Where Adyen echoes our
 * operation reference instead (`<transaction>/<kind>/<operation>`, adyen-codes.ts), our operation id is taken too.
 * Events no transaction tracks (reports, disputes, …) are verified and left out: acknowledged, nothing applied.
 */
import type { Types } from '@adyen/api-library';
// Not the library's index, which loads every API it has (adyen-connector.ts).
import hmacValidator from '@adyen/api-library/lib/src/utils/hmacValidator';
import type { NotificationHeaders, ProviderNotification } from '../connector';
import { NotificationRejectedError } from '../connector-errors';
import { adyenErrorCode, adyenRefusalCodeOf, parseOperationReference } from './adyen-codes';

type Item = Types.notification.NotificationRequestItem;

export interface AdyenNotificationVerification {
  readonly hmacKey: string;
  readonly merchantAccount: string;
}

const malformed = (message: string) => new NotificationRejectedError('malformed_body', message);

/** Every item of the request this connection's payments are concerned by, in the order Adyen listed them. */
export function parseAdyenNotification(
  rawBody: string | Uint8Array,
  _headers: NotificationHeaders,
  verification: AdyenNotificationVerification,
): ProviderNotification[] {
  const raw = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8');
  let body: { notificationItems?: unknown };
  try {
    body = JSON.parse(raw) as { notificationItems?: unknown };
  } catch (cause) {
    throw new NotificationRejectedError('malformed_body', 'notification body is not JSON', { cause });
  }
  const wrappers = body?.notificationItems;
  if (!Array.isArray(wrappers) || wrappers.length === 0) {
    throw malformed('notificationItems must hold at least one item');
  }
  const items = wrappers.map((wrapper: unknown, index) => {
    const item = (wrapper as { NotificationRequestItem?: Item } | null)?.NotificationRequestItem;
    const at = `notificationItems[${index}]`;
    if (!item || typeof item !== 'object') throw malformed(`${at}.NotificationRequestItem is missing`);
    const signature = (item.additionalData as Record<string, unknown> | undefined)?.hmacSignature;
    if (typeof signature !== 'string' || signature === '') {
      throw new NotificationRejectedError('missing_signature', `${at} has no additionalData.hmacSignature`);
    }
    if (!validSignature(item, verification.hmacKey)) {
      throw new NotificationRejectedError('bad_signature', `${at}: additionalData.hmacSignature does not verify`);
    }
    return item;
  });
  // Signed by this connection's key, but for another merchant account of the same company: not this connection's.
  return items
    .filter((item) => item.merchantAccountCode === verification.merchantAccount)
    .flatMap((item) => toNotification(item) ?? []);
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
  if (typeof amount !== 'number' || !Number.isInteger(amount) || typeof currency !== 'string')
    throw malformed('amount must have an integer value and a currency');
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
  const failure = (fallback: string) => ({
    errorCode: fallback,
    ...(reason ? { rawResponseDescription: reason } : {}),
  });
  switch (eventCode) {
    case 'AUTHORISATION': {
      if (success)
        return {
          ...base,
          type: 'authorization',
          providerTransactionId: pspReference,
          status: 'authorized',
          amount,
          currency,
        };
      const code = adyenRefusalCodeOf(reason);
      return {
        ...base,
        type: 'authorization',
        providerTransactionId: pspReference,
        status: 'declined',
        amount,
        currency,
        errorCode: adyenErrorCode(code, reason),
        ...(code ? { rawResponseCode: code } : {}),
        ...(reason ? { rawResponseDescription: reason } : {}),
      };
    }
    case 'CAPTURE':
    case 'CAPTURE_FAILED': {
      // CAPTURE_FAILED comes with success "true" (the document's example): the event itself is the failure.
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
      // Ours is found by Adyen's reference of it; one made outside Switchyard (the Customer Area) matches none.
      const refunded = eventCode === 'REFUND' && success;
      return {
        ...base,
        type: 'refund',
        providerTransactionId: original,
        providerRefundId: pspReference,
        ...(reference.kind === 'r' && reference.operationId ? { refundReference: reference.operationId } : {}),
        status: refunded ? 'succeeded' : 'failed',
        amount,
        currency,
        ...(refunded ? {} : { errorCode: 'refund_failed' }),
      };
    }
    case 'CANCELLATION':
      return {
        ...base,
        type: 'void',
        providerTransactionId: original,
        status: success ? 'succeeded' : 'failed',
        ...(success ? {} : failure('void_failed')),
      };
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
