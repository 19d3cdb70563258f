/** TransactionCreated 1 → 2: the vault card and its use, read from the details version 1 kept them in. */
import { transactionCreatedV1toV2 } from './transaction-upcasters';

const v1 = (details: Record<string, unknown> | undefined) => ({
  transactionId: 't1',
  merchantAccountId: 'm1',
  paymentServiceId: 'ps1',
  intent: 'authorize',
  amount: 100,
  currency: 'USD',
  isAmountEstimated: false,
  ...(details ? { details } : {}),
  at: '2026-01-01T00:00:00.000Z',
});
const card = (id: string | null) => ({
  paymentMethod: {
    id,
    method: 'card',
    scheme: 'visa',
    last4: '1111',
    bin: '411111',
    expirationDate: '12/30',
    fingerprint: 'f',
  },
});

it.each([
  [
    'a card for this payment only',
    { ...card('c1'), instrumentType: 'pan', store: false },
    { id: 'c1', use: 'one_off' },
  ],
  ['a card the payment stores', { ...card('c1'), instrumentType: 'pan', store: true }, { id: 'c1', use: 'stored' }],
  [
    "a checkout session's card",
    { ...card('c1'), instrumentType: 'pan', store: false, checkoutSessionId: 's1' },
    { id: 'c1', use: 'checkout_session' },
  ],
  ['a stored payment method', { ...card('c1'), instrumentType: 'card_token' }, { id: 'c1', use: 'stored' }],
  ["a stored method's network token", { ...card('c1'), instrumentType: 'network_token' }, { id: 'c1', use: 'stored' }],
  ['Paze (a network token without a vault card)', { ...card(null), instrumentType: 'network_token' }, null],
  ['a redirect method', { paymentMethod: { id: null, method: 'paypal' }, instrumentType: 'redirect' }, null],
  ['gift cards alone', { instrumentType: 'gift_card' }, null],
])('%s', (_case, details, vaultCard) => {
  expect(transactionCreatedV1toV2(v1(details))).toEqual({ ...v1(details), vaultCard });
});

it('reads version 1 without details as no vault card', () =>
  expect(transactionCreatedV1toV2(v1(undefined)).vaultCard).toBeNull());
