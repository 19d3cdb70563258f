import creditCardType from 'credit-card-type';
import { detectScheme, PATTERN_DIGITS } from './detect-scheme';

/**
 * The answers of the card vault's own `detectScheme` (services/transactions/src/vault/card-vault.ts before it
 * imported this one), recorded with credit-card-type 10.3: the vault now stores what this function answers, so the
 * answers must not change for the cards it already holds.
 */
const vaultAnswers: ReadonlyArray<readonly [string, string | null]> = [
  ['4111111111111111', 'visa'],
  ['4000056655665556', 'visa'],
  ['41111111111111111111', 'visa'],
  ['4111', 'visa'],
  ['5555555555554444', 'mastercard'],
  ['2223000048400011', 'mastercard'],
  ['378282246310005', 'amex'],
  ['340000000022003', 'amex'],
  ['6011111111111117', 'discover'],
  ['6011', 'discover'],
  ['3530111333300000', 'jcb'],
  ['35', 'jcb'],
  ['8171998927611203', 'unionpay'],
  ['6200000000000005', 'unionpay'],
  ['6221260000000000', 'unionpay'],
  ['36227206271667', 'diners-club'],
  ['30', 'diners-club'],
  ['6304000000000000', 'maestro'],
  ['5018000000000009', 'maestro'],
  ['6759649826438453', 'maestro'],
  ['6362970000457013', 'elo'],
  ['4011780000000000', 'elo'],
  ['6062826786276634', 'hipercard'],
  ['2200000000000004', 'mir'],
  ['9792000000000001', null], // troy: not a wire scheme
  ['5061000000000000000', null], // verve: not a wire scheme
  ['4', null], // visa, naranja, maestro, elo
  ['6', null],
  ['62', null],
  ['60', null],
  ['3', null],
  ['', null],
  ['9999999999999999', null],
  ['1234567890123456', null],
];

describe('detectScheme', () => {
  it.each(vaultAnswers)('%j → %s, as the card vault answered', (number, scheme) => {
    expect(detectScheme(number)).toBe(scheme);
  });
});

describe('answers kept by prefix and length', () => {
  it('keeps answers by the first PATTERN_DIGITS digits: no pattern of credit-card-type is longer', () => {
    const longest = Math.max(
      ...Object.values(creditCardType.types).flatMap((type) =>
        (creditCardType.getTypeInfo(type)?.patterns ?? []).map(
          (pattern) => String(Array.isArray(pattern) ? pattern[1] : pattern).length,
        ),
      ),
    );
    expect(longest).toBe(PATTERN_DIGITS);
  });

  it('gives the same answer asked again, and for numbers that differ after the prefix only when it should', () => {
    for (const [number, scheme] of vaultAnswers) {
      expect(detectScheme(number)).toBe(scheme);
      expect(detectScheme(number)).toBe(scheme);
    }
    // Same 8 digits, another length: asked afresh (a length the first candidate does not allow).
    expect(detectScheme('6362970000457013')).toBe('elo');
    expect(detectScheme('63629700')).toBe(detectScheme('63629700'));
    expect(detectScheme('4111111111111111')).toBe('visa');
    expect(detectScheme('41111111')).toBe('visa');
  });
});
