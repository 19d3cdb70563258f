/**
 * Which stored cards may get a network token, and what the token service is told about the merchant: pure rules
 * over the payment method and the merchant account's settings (spec, "Network tokenization": Discover cards are
 * eligible, but provisioning needs a Discover requestor id AND app id).
 */
import type { MerchantAccount } from '@switchyard/contracts';

/** What these rules read of a payment method (the lead's `PaymentMethodView` has more). */
export interface TokenizablePaymentMethod {
  readonly id: string;
  readonly merchantAccountId: string;
  readonly status: string;
  readonly method: string;
  readonly scheme: string | null;
}

export type Ineligibility =
  | 'payment_method_not_eligible'
  | 'network_tokens_disabled'
  | 'card_scheme_unknown'
  | 'discover_network_token_settings_missing';

export type Eligibility =
  | { readonly eligible: true; readonly scheme: string; readonly requestorId?: string; readonly appId?: string }
  | { readonly eligible: false; readonly reason: Ineligibility; readonly message: string };

type IdSettings = Pick<
  MerchantAccount,
  `${'visa' | 'mastercard' | 'amex' | 'discover'}_network_tokens_${'requestor_id' | 'app_id'}`
>;

/** The merchant account's token requestor id and app id per scheme that has them. */
const idsByScheme: Readonly<
  Record<string, (account: IdSettings) => { requestorId: string | null; appId: string | null }>
> = {
  visa: (a) => ({ requestorId: a.visa_network_tokens_requestor_id, appId: a.visa_network_tokens_app_id }),
  mastercard: (a) => ({
    requestorId: a.mastercard_network_tokens_requestor_id,
    appId: a.mastercard_network_tokens_app_id,
  }),
  amex: (a) => ({ requestorId: a.amex_network_tokens_requestor_id, appId: a.amex_network_tokens_app_id }),
  discover: (a) => ({ requestorId: a.discover_network_tokens_requestor_id, appId: a.discover_network_tokens_app_id }),
};

const refused = (reason: Ineligibility, message: string): Eligibility => ({ eligible: false, reason, message });

/**
 * Whether the card may be tokenized for its merchant account, and with which requestor ids: a `succeeded` card, an
 * account with `network_tokens_enabled`, a known scheme; a Discover card needs both Discover settings, the other
 * schemes send their ids when set.
 */
export function eligibilityOf(
  paymentMethod: TokenizablePaymentMethod,
  account: (IdSettings & Pick<MerchantAccount, 'id' | 'network_tokens_enabled'>) | null,
): Eligibility {
  if (paymentMethod.method !== 'card' || paymentMethod.status !== 'succeeded') {
    return refused(
      'payment_method_not_eligible',
      `only a stored card in status succeeded can get a network token; this payment method is ${paymentMethod.status}`,
    );
  }
  if (!account?.network_tokens_enabled) {
    return refused(
      'network_tokens_disabled',
      `network tokens are not enabled for merchant account ${paymentMethod.merchantAccountId}: set network_tokens_enabled`,
    );
  }
  const scheme = paymentMethod.scheme;
  if (scheme === null)
    return refused('card_scheme_unknown', "the card's scheme is not known, so no network's token service can be asked");
  const ids = idsByScheme[scheme]?.(account) ?? { requestorId: null, appId: null };
  if (scheme === 'discover' && (!ids.requestorId || !ids.appId)) {
    return refused(
      'discover_network_token_settings_missing',
      'a Discover card needs the merchant account settings discover_network_tokens_requestor_id and discover_network_tokens_app_id to get a network token',
    );
  }
  return {
    eligible: true,
    scheme,
    ...(ids.requestorId ? { requestorId: ids.requestorId } : {}),
    ...(ids.appId ? { appId: ids.appId } : {}),
  };
}
