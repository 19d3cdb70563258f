/** Gift cards as the API shows them: a stored card (`GiftCard`), and the summary of a card with or without a balance. */
import type { GiftCardBalance, GiftCardDigits, GiftCardFailure } from '@switchyard/connectors';
import type { GiftCard, GiftCardSummary } from '@switchyard/contracts';
import type { GiftCardServiceRef } from './gift-card';
import type { GiftCardUsage, GiftCardView } from './gift-cards.read-model';

export const noUsage: GiftCardUsage = { usageCount: 0, citUsageCount: 0, lastUsedAt: null, citLastUsedAt: null };

const usageOf = (usage: GiftCardUsage) => ({
  usage_count: usage.usageCount,
  cit_usage_count: usage.citUsageCount,
  last_used_at: usage.lastUsedAt,
  cit_last_used_at: usage.citLastUsedAt,
});

/** What a summary shows of a card besides its digits: a stored card's id, currency and expiry, and its uses. */
export interface SummaryBase extends GiftCardUsage {
  readonly id: string | null;
  readonly currency: string | null;
  readonly expirationDate: string | null;
}

export const unstored: SummaryBase = { id: null, currency: null, expirationDate: null, ...noUsage };

/**
 * The summary of a card: with the gift card service's answer when one was asked for (balance, or the error codes),
 * else as stored (balance null).
 */
export function toSummary(
  merchantAccountId: string,
  digits: GiftCardDigits,
  base: SummaryBase,
  answer?: GiftCardBalance | GiftCardFailure,
): GiftCardSummary {
  const succeeded = answer?.outcome === 'succeeded' ? answer : null;
  const failed = answer?.outcome === 'failed' ? answer : null;
  return {
    type: 'gift-card',
    id: base.id,
    merchant_account_id: merchantAccountId,
    bin: digits.bin,
    sub_bin: digits.subBin,
    last4: digits.last4,
    currency: succeeded?.currency ?? base.currency,
    expiration_date: succeeded ? succeeded.expiresAt : base.expirationDate,
    balance: succeeded?.balance ?? null,
    balance_error_code: failed?.errorCode ?? null,
    balance_raw_error_code: failed?.rawErrorCode ?? null,
    balance_raw_error_message: failed?.rawErrorMessage ?? null,
    ...usageOf(base),
  };
}

export const storedSummary = (card: GiftCardView, answer?: GiftCardBalance | GiftCardFailure): GiftCardSummary =>
  toSummary(card.merchantAccountId, card, card, answer);

/** A stored card; its gift card service as it is now when the connection still exists, else as it was. */
export function toGiftCard(card: GiftCardView, service: GiftCardServiceRef): GiftCard {
  const hasBuyer = card.buyerId !== null || card.buyerExternalIdentifier !== null;
  return {
    type: 'gift-card',
    id: card.id,
    merchant_account_id: card.merchantAccountId,
    gift_card_service: {
      type: 'gift-card-service',
      id: service.id,
      gift_card_service_definition_id: service.definitionId,
      display_name: service.displayName,
    },
    bin: card.bin,
    sub_bin: card.subBin,
    last4: card.last4,
    currency: card.currency,
    expiration_date: card.expirationDate,
    // No buyers resource yet: the buyer as given when the card was stored.
    buyer: hasBuyer
      ? {
          type: 'buyer',
          id: card.buyerId,
          merchant_account_id: card.merchantAccountId,
          display_name: null,
          external_identifier: card.buyerExternalIdentifier,
          inquiries: [],
          created_at: card.createdAt,
          updated_at: card.createdAt,
        }
      : null,
    ...usageOf(card),
    created_at: card.createdAt,
    updated_at: card.updatedAt,
  };
}
