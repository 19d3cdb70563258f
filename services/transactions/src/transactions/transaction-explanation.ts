/**
 * Why a step of a transaction happened, for `GET /transactions/{id}/events` (`context.explanation`): who caused it
 * (the actor recorded in the event's metadata), the connection it concerns, the flow rule that decided it and the
 * provider's codes the event holds. Pure: the read model calls it with the view after the event.
 */
import type { TransactionActor, TransactionEventExplanation, TransactionProviderResponse } from '@switchyard/contracts';
import type { TransactionEvent } from './transaction';
import type { TransactionView } from './transactions.read-model';

const actorTypes = new Set<string>(['api-key-pair', 'dashboard-user', 'system']);

/** The actor of an event's metadata; null when none was recorded (events older than actors, or a caller that did not say). */
export function actorOf(metadata: Readonly<Record<string, unknown>>): TransactionActor | null {
  const actor = metadata.actor as { type?: unknown; id?: unknown } | undefined;
  if (!actor || typeof actor.type !== 'string' || !actorTypes.has(actor.type) || typeof actor.id !== 'string')
    return null;
  return { type: actor.type, id: actor.id } as TransactionActor;
}

/** The event data's fields that are the provider's word, under their wire names. */
const providerFields: readonly (readonly [string, keyof TransactionProviderResponse])[] = [
  ['errorCode', 'error_code'],
  ['rawResponseCode', 'raw_response_code'],
  ['responseCode', 'raw_response_code'],
  ['rawResponseDescription', 'raw_response_description'],
  ['avsResponseCode', 'avs_response_code'],
  ['cvvResponseCode', 'cvv_response_code'],
  ['paymentServiceTransactionId', 'payment_service_transaction_id'],
  ['schemeTransactionId', 'scheme_transaction_id'],
  ['providerOperationId', 'provider_operation_id'],
  ['providerRedemptionId', 'provider_redemption_id'],
  ['rawErrorCode', 'raw_error_code'],
  ['rawErrorMessage', 'raw_error_message'],
];

function providerResponseOf(data: Readonly<Record<string, unknown>>): TransactionProviderResponse | null {
  // A failover attempt and a held failure nest the provider's error.
  const sources = [data, (data.error ?? {}) as Readonly<Record<string, unknown>>];
  const response: Record<string, string> = {};
  for (const source of sources) {
    for (const [field, wireName] of providerFields) {
      const value = source[field];
      if (typeof value === 'string' && response[wireName] === undefined) response[wireName] = value;
    }
  }
  return Object.keys(response).length > 0 ? (response as TransactionProviderResponse) : null;
}

function paymentServiceOf(event: TransactionEvent, view: TransactionView): string | null {
  const t = view.state;
  switch (event.type) {
    case 'TransactionCreated':
    case 'AuthorizationAttemptFailed':
      // The attempt's own connection: the state has moved on to the next one.
      return event.data.paymentServiceId;
    case 'GiftCardRedemptionSucceeded':
    case 'GiftCardRedemptionFailed':
    case 'GiftCardRedemptionsSkipped':
    case 'GiftCardRedemptionReversed':
    case 'GiftCardPaymentCompleted':
      return t.giftCards?.serviceId ?? t.paymentServiceId;
    case 'RefundRequested':
    case 'RefundSucceeded':
    case 'RefundDeclined':
    case 'RefundFailed': {
      const refundId = event.data.refundId;
      const target = t.refunds.find((refund) => refund.id === refundId)?.target;
      return target && t.giftCards ? t.giftCards.serviceId : t.paymentServiceId;
    }
    default:
      return t.paymentServiceId;
  }
}

function flowRuleOf(event: TransactionEvent, view: TransactionView): string | null {
  if (event.type === 'TransactionCreated') {
    // A route rule bypassed by `payment_service_id` matched but did not decide.
    const route = (event.data.flowActions ?? []).find(
      (action) => action.action === 'route-transaction' && action.outcome.bypassed_by === undefined,
    );
    return route?.ruleId ?? null;
  }
  if (event.type === 'AuthorizationDeclined' && event.data.errorCode === 'flow_decline') {
    return view.flowActions.find((action) => action.action === 'decline-early')?.ruleId ?? null;
  }
  return null;
}

export function explainEvent(
  event: TransactionEvent,
  metadata: Readonly<Record<string, unknown>>,
  view: TransactionView,
): TransactionEventExplanation {
  const flowRuleId = flowRuleOf(event, view);
  return {
    actor: actorOf(metadata),
    payment_service_id: paymentServiceOf(event, view),
    flow_rule_id: flowRuleId,
    // A decline by a flow rule never reached the provider.
    provider_response:
      flowRuleId && event.type === 'AuthorizationDeclined'
        ? null
        : providerResponseOf(event.data as Readonly<Record<string, unknown>>),
  };
}
