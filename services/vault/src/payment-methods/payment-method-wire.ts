/** A stored payment method as the wire shows it (reference: PaymentMethod, PaymentMethodSummary): never its number. */
import type { PaymentMethod, PaymentMethodSummary } from '@switchyard/contracts';
import type { PaymentMethodView } from './payment-methods.read-model';

export function toPaymentMethodSummary(view: PaymentMethodView): PaymentMethodSummary {
  return {
    type: 'payment-method',
    id: view.id,
    merchant_account_id: view.merchantAccountId,
    method: view.method,
    mode: 'card',
    scheme: view.scheme,
    label: view.last4,
    expiration_date: view.expirationDate,
    fingerprint: view.fingerprint,
    details: { bin: view.bin, card_type: view.cardType, card_issuer_name: view.cardIssuerName },
    approval_url: null,
    country: view.country,
    currency: null,
    additional_schemes: null,
    has_replacement: view.hasReplacement,
    last_replaced_at: view.lastReplacedAt,
    usage_count: view.usageCount,
    cit_usage_count: view.citUsageCount,
    last_used_at: view.lastUsedAt,
    cit_last_used_at: view.citLastUsedAt,
  };
}

export function toPaymentMethod(view: PaymentMethodView, buyer: Record<string, unknown> | null): PaymentMethod {
  return {
    ...toPaymentMethodSummary(view),
    status: view.status,
    buyer,
    external_identifier: view.externalIdentifier,
    created_at: view.createdAt,
    updated_at: view.updatedAt,
  };
}
