import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  accountUpdaterExamplePans,
  accountUpdaterOutcomeForCard,
  accountUpdaterOutcomeSuffixes,
  extendedExpiry,
  passesLuhn,
  replacementNumber,
  replacementNumberSuffix,
} from './simulator-account-updater-values';

const examples = Object.entries(accountUpdaterExamplePans).flatMap(([outcome, pans]) =>
  pans.map((pan) => [pan, outcome] as const),
);

describe('card number → account updater outcome', () => {
  it.each(examples)('example PAN %s passes the Luhn check and gives %s', (pan, outcome) => {
    expect(passesLuhn(pan)).toBe(true);
    expect(accountUpdaterOutcomeForCard(pan)).toBe(outcome);
  });

  it('gives no_change to every ending outside the table', () => {
    for (const ending of ['0000', '0002', '0018', '1111', '4444', '0005'])
      expect(accountUpdaterOutcomeForCard(`411111111111${ending}`)).toBe('no_change');
  });

  it('has endings that add the same to the Luhn sum, so swapping one for another keeps a card valid', () => {
    const base = '411111111115';
    for (const ending of Object.keys(accountUpdaterOutcomeSuffixes)) expect(passesLuhn(`${base}${ending}`)).toBe(true);
  });
});

describe('a new expiry', () => {
  it.each([
    ['11/25', '11/28'],
    ['01/30', '01/33'],
    ['12/98', '12/01'],
  ])('%s → %s (three years on)', (from, to) => {
    expect(extendedExpiry(from)).toBe(to);
  });
});

describe('a replacement number', () => {
  it.each(accountUpdaterExamplePans.updated_number)(
    'for %s keeps the BIN and length, passes Luhn, differs, and updates to no_change',
    (pan) => {
      const replaced = replacementNumber(pan);
      expect(replaced).toHaveLength(pan.length);
      expect(replaced.slice(0, 6)).toBe(pan.slice(0, 6));
      expect(replaced.endsWith(replacementNumberSuffix)).toBe(true);
      expect(replaced).not.toBe(pan);
      expect(passesLuhn(replaced)).toBe(true);
      expect(accountUpdaterOutcomeForCard(replaced)).toBe('no_change');
    },
  );

  it('is the same every time (deterministic)', () => {
    expect(replacementNumber('4111111111150028')).toBe('4111118888860002');
    expect(replacementNumber('4111111111150028')).toBe(replacementNumber('4111111111150028'));
  });

  it.each(['411111111128', '4111111111111111128'])('works for the shortest and longest numbers (%s)', (pan) => {
    const replaced = replacementNumber(pan);
    expect(replaced).toHaveLength(pan.length);
    expect(passesLuhn(replaced)).toBe(true);
  });
});

describe('docs/simulator.md "Account updater"', () => {
  const docs = readFileSync(join(__dirname, '../../../../docs/simulator.md'), 'utf8');
  const section = docs.slice(docs.indexOf('## Account updater'));

  it.each(Object.entries(accountUpdaterOutcomeSuffixes))('lists ending %s → %s', (ending, outcome) => {
    expect(section).toMatch(new RegExp(`\\| \`${ending}\` \\| \`${outcome}\` \\|`));
  });

  it.each(examples)('lists example PAN %s', (pan) => {
    expect(section).toContain(pan);
  });
});
