import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  avsForPostalCode,
  cvvForSecurityCode,
  declineAmounts,
  decisionForAmount,
  eciForCard,
  failureAmounts,
  giftCardErrorSuffixes,
  giftCardExpiredNumberSuffix,
  giftCardFailure,
  giftCardOutcomeForPin,
  giftCardPinCategories,
  scenarioAmounts,
  scenarioForAmount,
  slowResponseDelayMs,
  threeDSecureLastDigitOutcomes,
  threeDSecureOutcomeForCard,
  threeDSecureReferenceCards,
} from './simulator-values';

describe('amount → outcome (reference table)', () => {
  it.each([
    [200001, 'canceled_payment_method'],
    [200011, 'insufficient_funds'],
    [200022, 'cancelled_buyer_approval'],
  ])('declines %i with %s', (amount, errorCode) => {
    expect(decisionForAmount(amount)).toEqual({ result: 'declined', errorCode });
  });

  it.each([
    [300001, 'insufficient_service_permissions'],
    [300013, 'service_error'],
    [300015, 'service_rate_limit'],
    [400001, 'internal_error'],
    [400009, 'unknown_error'],
  ])('fails %i with %s', (amount, errorCode) => {
    expect(decisionForAmount(amount)).toEqual({ result: 'failed', errorCode });
  });

  it('has the 22 decline, 15 service and 9 internal amounts of the reference', () => {
    expect(Object.keys(declineAmounts)).toHaveLength(22);
    expect(Object.keys(failureAmounts).filter((a) => a.startsWith('3'))).toHaveLength(15);
    expect(Object.keys(failureAmounts).filter((a) => a.startsWith('4'))).toHaveLength(9);
  });

  it.each([1, 1299, 200000, 200023, 300016, 400010, 4200])('approves %i, an amount outside the tables', (amount) => {
    expect(decisionForAmount(amount)).toEqual({ result: 'approved' });
  });

  it('keeps every scenario amount outside the reference tables, so the reference rule still approves it', () => {
    for (const amount of Object.values(scenarioAmounts))
      expect(decisionForAmount(amount)).toEqual({ result: 'approved' });
    expect(scenarioForAmount(500004)).toBe('duplicateNotification');
    expect(scenarioForAmount(1000)).toBeUndefined();
  });

  it('delays 501000 + n by n × 10 ms', () => {
    expect(slowResponseDelayMs(501_025)).toBe(250);
    expect(slowResponseDelayMs(501_000)).toBe(0);
    expect(slowResponseDelayMs(502_000)).toBe(0);
  });
});

describe('postal code → AVS', () => {
  it.each([
    ['10077', 'no_match'],
    ['77001', 'no_match'],
    ['SW1 88A', 'partial_match_postcode'],
    ['99501', 'partial_match_address'],
    ['10001', 'match'],
    ['7788', 'no_match'],
    [undefined, 'unavailable'],
  ] as const)('%s → %s', (postalCode, avs) => {
    expect(avsForPostalCode(postalCode)).toBe(avs);
  });
});

describe('security code → CVV', () => {
  it.each([
    ['222', 'not_provided'],
    ['333', 'no_match'],
    ['123', 'match'],
    ['2222', 'match'],
    [undefined, 'not_provided'],
  ] as const)('%s → %s', (securityCode, cvv) => {
    expect(cvvForSecurityCode(securityCode)).toBe(cvv);
  });
});

describe('card number → 3-D Secure outcome', () => {
  it('has the five frictionless and five challenge cards of the reference', () => {
    const statuses = Object.values(threeDSecureReferenceCards);
    expect(statuses.filter((s) => s === 'Y')).toHaveLength(5);
    expect(statuses.filter((s) => s === 'C')).toHaveLength(5);
  });

  it.each([
    ['5200000000001203', { transactionStatus: 'Y' }],
    ['340000000082072', { transactionStatus: 'C' }],
    ['4000000000001004', { transactionStatus: 'N', statusReason: '01' }],
    ['4000000000001005', { transactionStatus: 'U', statusReason: '08' }],
    ['4000000000001006', { transactionStatus: 'R', statusReason: '11' }],
    ['4111111111111111', { transactionStatus: 'Y' }],
    ['4000000000010040', { transactionStatus: 'Y' }],
  ])('%s → %o', (number, outcome) => {
    expect(threeDSecureOutcomeForCard(number)).toEqual(outcome);
  });

  it('keeps our last-digit rules off every reference card', () => {
    for (const number of Object.keys(threeDSecureReferenceCards))
      expect(threeDSecureLastDigitOutcomes[number.slice(-4)]).toBeUndefined();
  });

  it.each([
    ['5200000000001203', '02'],
    ['2223000048400011', '02'],
    ['4111111111101203', '05'],
    ['340000000022003', '05'],
    ['8171998927611203', '05'],
  ])('ECI of %s is %s', (number, eci) => {
    expect(eciForCard(number)).toBe(eci);
  });
});

describe('gift card PIN → outcome', () => {
  it('reads a success PIN as the balance', () => {
    expect(giftCardOutcomeForPin('01000')).toEqual({ result: 'succeeded', balance: 1000 });
    expect(giftCardOutcomeForPin('0')).toEqual({ result: 'succeeded', balance: 0 });
  });

  it.each([
    ['10000', 'validation_error', 'invalid_gift_card', 'Validation error: '],
    ['20009', 'server_error', 'service_error', 'Server error: '],
    ['30003', 'client_error', 'invalid_service_credentials', 'Client error: '],
    ['19999', 'validation_error', 'unknown_error', 'Validation error: '],
    ['2000612', 'server_error', 'insufficient_funds', 'Server error: '],
  ])('%s → %s %s', (pin, category, errorCode, message) => {
    const outcome = giftCardOutcomeForPin(pin);
    expect(outcome).toMatchObject({ result: 'failed', category, errorCode, rawErrorCode: pin.slice(0, 5) });
    expect(outcome.result === 'failed' && outcome.rawErrorMessage.startsWith(message)).toBe(true);
  });

  it.each(['', '4000', '9123', '01a00'])('answers a PIN %j the rules do not know with invalid_gift_card', (pin) => {
    expect(giftCardOutcomeForPin(pin)).toMatchObject({
      result: 'failed',
      errorCode: 'invalid_gift_card',
      rawErrorCode: '10000',
    });
  });

  it('codes our own failures as the PIN that spells them', () => {
    expect(giftCardFailure('expired_card')).toMatchObject({ category: 'validation_error', rawErrorCode: '10001' });
    expect(giftCardFailure('insufficient_funds', 'too low.')).toMatchObject({
      rawErrorCode: '10006',
      rawErrorMessage: 'Validation error: too low.',
    });
  });

  it('has the four categories and twelve error codes of the reference', () => {
    expect(Object.keys(giftCardPinCategories)).toEqual(['0', '1', '2', '3']);
    expect(Object.keys(giftCardErrorSuffixes)).toHaveLength(12);
  });
});

describe('docs/simulator.md', () => {
  const doc = readFileSync(join(__dirname, '../../../../docs/simulator.md'), 'utf8');

  it('lists every reference and scenario amount with its error code', () => {
    for (const [amount, code] of Object.entries({ ...declineAmounts, ...failureAmounts })) {
      expect(doc).toMatch(new RegExp(`\\| ${amount} \\| \`${code}\``));
    }
    for (const amount of Object.values(scenarioAmounts)) expect(doc).toContain(`| ${amount} |`);
  });

  it('lists every 3-D Secure test card and last-digit rule with its outcome', () => {
    for (const [number, status] of Object.entries(threeDSecureReferenceCards))
      expect(doc).toMatch(new RegExp(`\\| \`${number}\` \\| ${status} \\|`));
    for (const [digits, outcome] of Object.entries(threeDSecureLastDigitOutcomes)) {
      expect(doc).toMatch(
        new RegExp(`\\| ending \`${digits}\` \\| ${outcome.transactionStatus} \\| \`${outcome.statusReason}\` \\|`),
      );
    }
  });

  it('lists every gift card PIN digit and error code, and the expired-number rule', () => {
    for (const [digit, category] of Object.entries(giftCardPinCategories))
      expect(doc).toMatch(new RegExp(`\\| \`${digit}\` \\| ${category.replace('_', ' ')}`));
    for (const [suffix, code] of Object.entries(giftCardErrorSuffixes))
      expect(doc).toMatch(new RegExp(`\\| \`${suffix}\` \\| \`${code}\` \\|`));
    expect(doc).toContain(`A card number ending in \`${giftCardExpiredNumberSuffix}\` is expired: \`expired_card\``);
  });
});
