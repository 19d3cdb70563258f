import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  isDiscoverNumber,
  networkTokenLongerExpirySuffix,
  networkTokenRefusalSuffixes,
  networkTokenSchemes,
  passesLuhn,
  provisionRefusal,
  tokenExpiryFor,
  tokenNumberFor,
  type WireNetworkTokenProvisionRequest,
} from './simulator-network-tokens';

const request = (
  number: string,
  overrides: Partial<WireNetworkTokenProvisionRequest> = {},
): WireNetworkTokenProvisionRequest => ({
  reference: 'ref-1',
  card: { number, expiration_date: '11/30' },
  scheme: 'visa',
  merchant_initiated: false,
  is_subsequent_payment: false,
  ...overrides,
});

describe('token numbers', () => {
  it.each(['4111111111111111', '5555555555554444', '378282246310005', '6011111111111117', '2223003122003222'])(
    'keep the first four digits and the length of %s, and pass Luhn',
    (card) => {
      for (let i = 0; i < 50; i++) {
        const token = tokenNumberFor(card);
        expect(token).toHaveLength(card.length);
        expect(token.slice(0, 4)).toBe(card.slice(0, 4));
        expect(passesLuhn(token)).toBe(true);
      }
    },
  );

  it('takes its middle digits from the random source', () => {
    expect(tokenNumberFor('4111111111111111', () => 0)).toBe('4111000000000008');
  });
});

describe('token expiry', () => {
  it("is the card's, or 3 years more for a card ending in 0003 (across the century)", () => {
    expect(tokenExpiryFor('4111111111111111', '11/30')).toBe('11/30');
    expect(tokenExpiryFor('4000000000000003', '04/29')).toBe('04/32');
    expect(tokenExpiryFor('4000000000000003', '12/98')).toBe('12/01');
  });
});

describe('provision refusals', () => {
  it('refuses a card ending in 0002 first, then an unsupported scheme, then Discover without both ids', () => {
    expect(provisionRefusal(request('6011000000000002', { scheme: 'jcb' }))?.error).toBe('card_not_eligible');
    expect(provisionRefusal(request('3530111333300000', { scheme: 'jcb' }))?.error).toBe('unsupported_card_scheme');
    expect(provisionRefusal(request('6011111111111117', { scheme: 'discover', app_id: 'app' }))?.error).toBe(
      'missing_requestor_id',
    );
    expect(
      provisionRefusal(request('6011111111111117', { scheme: 'discover', requestor_id: 'req', app_id: 'app' })),
    ).toBeUndefined();
    expect(provisionRefusal(request('4111111111111111'))).toBeUndefined();
  });

  it.each([
    ['6011111111111117', true],
    ['6500000000000004', true],
    ['6440000000000008', true],
    ['6490000000000003', true],
    ['6430000000000001', false],
    ['6012000000000000', false],
    ['4111111111111111', false],
  ])('%s is a Discover number: %s', (number, discover) => expect(isDiscoverNumber(number)).toBe(discover));
});

describe('docs/simulator.md', () => {
  const doc = readFileSync(join(__dirname, '../../../../docs/simulator.md'), 'utf8');

  it('lists every refusal, the longer-expiry rule and the schemes', () => {
    for (const [suffix, code] of Object.entries(networkTokenRefusalSuffixes))
      expect(doc).toContain(`| card number ending \`${suffix}\` | \`${code}\` |`);
    expect(doc).toContain(
      `A card number ending \`${networkTokenLongerExpirySuffix}\` gets a token expiring **3 years after the card**`,
    );
    expect(doc).toContain(networkTokenSchemes.map((scheme) => `\`${scheme}\``).join(', '));
  });
});
