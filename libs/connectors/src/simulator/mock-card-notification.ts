import type { NotificationHeaders, ProviderNotification } from '../connector';
import { NotificationRejectedError } from '../connector-errors';
import { checkSignature, signatureHeader } from './notification-signature';
import type { WireNotification } from './simulator-wire';

export interface NotificationVerification {
  readonly secret: string;
  readonly toleranceSeconds: number;
  readonly nowSeconds: number;
}

/** Verifies the signature over the raw bytes first, then decodes: nothing unsigned is ever parsed into a value. */
export function parseMockCardNotification(
  rawBody: string | Uint8Array,
  headers: NotificationHeaders,
  verification: NotificationVerification,
): ProviderNotification {
  const raw = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8');
  const header = headerValue(headers, signatureHeader);
  if (header === undefined) throw new NotificationRejectedError('missing_signature', `no ${signatureHeader} header`);
  const check = checkSignature(
    verification.secret,
    raw,
    header,
    verification.nowSeconds,
    verification.toleranceSeconds,
  );
  if (check === 'malformed' || check === 'mismatch')
    throw new NotificationRejectedError('bad_signature', `${signatureHeader} does not verify`);
  if (check === 'stale')
    throw new NotificationRejectedError('stale_timestamp', `${signatureHeader} timestamp is outside the tolerance`);

  let body: WireNotification;
  try {
    body = JSON.parse(raw) as WireNotification;
  } catch (cause) {
    throw new NotificationRejectedError('malformed_body', 'notification body is not JSON', { cause });
  }
  const base = {
    providerEventId: text(body.event_id, 'event_id'),
    reference: text(body.reference, 'reference'),
    providerTransactionId: text(body.transaction_id, 'transaction_id'),
    sequence: integer(body.sequence, 'sequence'),
    occurredAt: text(body.occurred_at, 'occurred_at'),
  };
  const codes = {
    ...(typeof body.error_code === 'string' && { errorCode: body.error_code }),
  };
  switch (body.type) {
    case 'authorization':
      return {
        ...base,
        type: 'authorization',
        status: oneOf(
          body.status,
          ['pending', 'authorized', 'captured', 'declined', 'failed', 'voided', 'cancelled'] as const,
          'status',
        ),
        amount: integer(body.amount, 'amount'),
        currency: text(body.currency, 'currency'),
        ...codes,
        ...(typeof body.raw_response_code === 'string' && { rawResponseCode: body.raw_response_code }),
        ...(typeof body.raw_response_description === 'string' && {
          rawResponseDescription: body.raw_response_description,
        }),
        ...(typeof body.avs_response_code === 'string' && { avsResponseCode: body.avs_response_code }),
        ...(typeof body.cvv_response_code === 'string' && { cvvResponseCode: body.cvv_response_code }),
      };
    case 'capture':
      return {
        ...base,
        type: 'capture',
        providerCaptureId: text(body.capture_id, 'capture_id'),
        status: oneOf(body.status, ['succeeded', 'declined', 'failed'] as const, 'status'),
        amount: integer(body.amount, 'amount'),
        currency: text(body.currency, 'currency'),
        ...codes,
      };
    case 'refund':
      return {
        ...base,
        type: 'refund',
        providerRefundId: text(body.refund_id, 'refund_id'),
        refundReference: text(body.refund_reference, 'refund_reference'),
        status: oneOf(body.status, ['succeeded', 'failed'] as const, 'status'),
        amount: integer(body.amount, 'amount'),
        currency: text(body.currency, 'currency'),
        ...codes,
      };
    case 'vault_token':
      return {
        ...base,
        type: 'vault-token',
        token: text(body.token, 'token'),
        cardLast4: text(body.card_last4, 'card_last4'),
        expirationDate: text(body.expiration_date, 'expiration_date'),
      };
    default:
      throw new NotificationRejectedError(
        'malformed_body',
        `unknown notification type ${JSON.stringify((body as { type?: unknown }).type)}`,
      );
  }
}

function headerValue(headers: NotificationHeaders, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    return typeof value === 'string' ? value : value?.[0];
  }
  return undefined;
}

function text(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '')
    throw new NotificationRejectedError('malformed_body', `${field} must be a non-empty string`);
  return value;
}

function integer(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw new NotificationRejectedError('malformed_body', `${field} must be an integer`);
  return value;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], field: string): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new NotificationRejectedError('malformed_body', `${field} must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}
