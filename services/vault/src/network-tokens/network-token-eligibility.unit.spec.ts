import type { MerchantAccount } from '@switchyard/contracts';
import { eligibilityOf, type TokenizablePaymentMethod } from './network-token-eligibility';

type Settings = Parameters<typeof eligibilityOf>[1] & object;
const none = { requestor_id: null, app_id: null };
const account = (overrides: Partial<MerchantAccount> = {}): Settings =>
  ({
    id: 'shop',
    network_tokens_enabled: true,
    ...Object.fromEntries(
      ['visa', 'mastercard', 'amex', 'discover'].flatMap((scheme) =>
        Object.entries(none).map(([key, value]) => [`${scheme}_network_tokens_${key}`, value]),
      ),
    ),
    ...overrides,
  }) as Settings;
const card = (overrides: Partial<TokenizablePaymentMethod> = {}): TokenizablePaymentMethod => ({
  id: 'pm-1',
  merchantAccountId: 'shop',
  status: 'succeeded',
  method: 'card',
  scheme: 'visa',
  ...overrides,
});

describe('eligibility of a stored card for a network token', () => {
  it('takes a succeeded card of an account with network tokens on, without ids when none are set', () =>
    expect(eligibilityOf(card(), account())).toEqual({ eligible: true, scheme: 'visa' }));

  it.each([
    [
      'visa',
      { visa_network_tokens_requestor_id: 'v-req', visa_network_tokens_app_id: 'v-app' },
      { requestorId: 'v-req', appId: 'v-app' },
    ],
    ['mastercard', { mastercard_network_tokens_requestor_id: 'm-req' }, { requestorId: 'm-req' }],
    ['amex', { amex_network_tokens_app_id: 'a-app', visa_network_tokens_requestor_id: 'v-req' }, { appId: 'a-app' }],
    [
      'discover',
      { discover_network_tokens_requestor_id: 'd-req', discover_network_tokens_app_id: 'd-app' },
      { requestorId: 'd-req', appId: 'd-app' },
    ],
    ['jcb', { visa_network_tokens_requestor_id: 'v-req' }, {}],
  ])('sends %s its own ids when set, never another scheme’s', (scheme, settings, ids) =>
    expect(eligibilityOf(card({ scheme }), account(settings))).toEqual({ eligible: true, scheme, ...ids }),
  );

  it.each([
    ['no Discover setting', {}],
    ['the requestor id only', { discover_network_tokens_requestor_id: 'd-req' }],
    ['the app id only', { discover_network_tokens_app_id: 'd-app' }],
    ['an empty requestor id', { discover_network_tokens_requestor_id: '', discover_network_tokens_app_id: 'd-app' }],
  ])('refuses a Discover card with %s, naming both settings', (_, settings) => {
    const verdict = eligibilityOf(card({ scheme: 'discover' }), account(settings));
    expect(verdict).toMatchObject({ eligible: false, reason: 'discover_network_token_settings_missing' });
    expect(verdict.eligible === false && verdict.message).toMatch(
      /discover_network_tokens_requestor_id and discover_network_tokens_app_id/,
    );
  });

  it.each([
    ['a processing card', card({ status: 'processing' }), account(), 'payment_method_not_eligible'],
    ['a failed card', card({ status: 'failed' }), account(), 'payment_method_not_eligible'],
    ['another method', card({ method: 'paypal' }), account(), 'payment_method_not_eligible'],
    [
      'an account with network tokens off',
      card(),
      account({ network_tokens_enabled: false }),
      'network_tokens_disabled',
    ],
    ['an unknown account', card(), null, 'network_tokens_disabled'],
    ['an unknown scheme', card({ scheme: null }), account(), 'card_scheme_unknown'],
  ])('refuses %s', (_, paymentMethod, settings, reason) =>
    expect(eligibilityOf(paymentMethod, settings)).toMatchObject({ eligible: false, reason }),
  );
});
