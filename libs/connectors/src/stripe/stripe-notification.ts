/**
 * Stripe's events as our notifications. The `Stripe-Signature` header is checked by the library
 * (`webhooks.constructEvent`: HMAC-SHA256 of `<t>.<body>` with the endpoint's secret, within the tolerance) before
 * anything is read. PaymentIntents and refunds carry our references in their metadata (stripe-codes.ts); an event
 * about anything else (customers, payouts, disputes, …) is verified and answered null: acknowledged, nothing applied.
 */
import type Stripe from 'stripe';
import type { NotificationHeaders, ProviderNotification } from '../connector';
import { NotificationRejectedError } from '../connector-errors';
import { referenceKey, refundKey, stripeAvs, stripeCvc, stripeErrorCode } from './stripe-codes';

export interface StripeNotificationVerification {
  readonly secret: string;
  readonly toleranceSeconds: number;
}

export function parseStripeNotification(
  stripe: Stripe,
  rawBody: string | Uint8Array,
  headers: NotificationHeaders,
  verification: StripeNotificationVerification,
): ProviderNotification | null {
  const raw = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8');
  const signature = headerValue(headers, 'stripe-signature');
  if (!signature) throw new NotificationRejectedError('missing_signature', 'no Stripe-Signature header');
  let event: Stripe.Event;
  try {
    event = stripe.webhooks.constructEvent(raw, signature, verification.secret, verification.toleranceSeconds);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const signatureError = (error as { type?: unknown }).type === 'StripeSignatureVerificationError';
    if (signatureError && /tolerance/i.test(message))
      throw new NotificationRejectedError('stale_timestamp', 'Stripe-Signature timestamp is outside the tolerance', {
        cause: error,
      });
    if (signatureError)
      throw new NotificationRejectedError('bad_signature', 'Stripe-Signature does not verify', { cause: error });
    throw new NotificationRejectedError('malformed_body', 'the event is not JSON', { cause: error });
  }
  const base = {
    providerEventId: event.id,
    sequence: event.created,
    occurredAt: new Date(event.created * 1000).toISOString(),
  };
  switch (event.type) {
    case 'payment_intent.amount_capturable_updated':
    case 'payment_intent.succeeded':
    case 'payment_intent.payment_failed':
    case 'payment_intent.canceled': {
      const intent = event.data.object;
      const reference = intent.metadata?.[referenceKey];
      if (!reference) return null; // not a payment Switchyard made
      const common = {
        ...base,
        type: 'authorization' as const,
        reference,
        providerTransactionId: intent.id,
        currency: intent.currency.toUpperCase(),
      };
      if (event.type === 'payment_intent.amount_capturable_updated')
        return { ...common, status: 'authorized', amount: intent.amount_capturable, ...codesOf(intent) };
      if (event.type === 'payment_intent.succeeded')
        return { ...common, status: 'captured', amount: intent.amount_received, ...codesOf(intent) };
      if (event.type === 'payment_intent.canceled') return { ...common, status: 'voided', amount: intent.amount };
      const error = intent.last_payment_error;
      return {
        ...common,
        status: 'declined',
        amount: intent.amount,
        errorCode: stripeErrorCode(error?.decline_code, error?.code),
        ...(error?.decline_code || error?.code ? { rawResponseCode: error.decline_code ?? error.code } : {}),
        ...(error?.message ? { rawResponseDescription: error.message } : {}),
      };
    }
    case 'refund.created':
    case 'refund.updated':
    case 'refund.failed': {
      const refund = event.data.object;
      const reference = refund.metadata?.[referenceKey];
      const refundReference = refund.metadata?.[refundKey];
      const intentId = typeof refund.payment_intent === 'string' ? refund.payment_intent : refund.payment_intent?.id;
      // Refunds made outside Switchyard, and ones still pending, settle nothing.
      if (!reference || !refundReference || !intentId) return null;
      if (refund.status !== 'succeeded' && refund.status !== 'failed' && refund.status !== 'canceled') return null;
      const succeeded = refund.status === 'succeeded';
      return {
        ...base,
        type: 'refund',
        reference,
        providerTransactionId: intentId,
        providerRefundId: refund.id,
        refundReference,
        status: succeeded ? 'succeeded' : 'failed',
        amount: refund.amount,
        currency: refund.currency.toUpperCase(),
        ...(succeeded ? {} : { errorCode: 'refund_failed' }),
      };
    }
    default:
      return null;
  }
}

function codesOf(intent: Stripe.PaymentIntent) {
  const charge = typeof intent.latest_charge === 'object' ? intent.latest_charge : null;
  const checks = charge?.payment_method_details?.card?.checks;
  const avs = stripeAvs(checks);
  const cvv = stripeCvc(checks);
  return { ...(avs ? { avsResponseCode: avs } : {}), ...(cvv ? { cvvResponseCode: cvv } : {}) };
}

function headerValue(headers: NotificationHeaders, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    return typeof value === 'string' ? value : value?.[0];
  }
  return undefined;
}
