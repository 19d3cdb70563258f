import { loadBinData } from '@switchyard/bin-data';
import {
  CardDetailsTracker,
  cardDetailsFromWire,
  detectScheme,
  httpCardDetailsLookup,
  UNKNOWN_CARD,
  type CardDetails,
  type CardDetailsLookup,
} from './card-details';

const details = (
  country: string | null,
  scheme: string | null,
  cardType: string | null = null,
  additionalSchemes: string[] = [],
): CardDetails => ({
  country,
  scheme,
  cardType,
  additionalSchemes,
});

/** Types `number` into the tracker one digit at a time, waiting for each keystroke's details like the frame would see them. */
async function typeDigits(tracker: CardDetailsTracker, number: string): Promise<void> {
  for (let i = 1; i <= number.length; i += 1) await tracker.update(number.slice(0, i));
}

function recorder(lookup: CardDetailsLookup) {
  const fired: CardDetails[] = [];
  const asked: string[] = [];
  const tracker = new CardDetailsTracker(
    async (bin) => {
      asked.push(bin);
      return lookup(bin);
    },
    (value) => fired.push(value),
  );
  return { tracker, fired, asked };
}

describe('detectScheme (under 6 digits: the number’s pattern, client side)', () => {
  it.each([
    ['4', 'visa'],
    ['41', 'visa'],
    ['51', 'mastercard'],
    ['55', 'mastercard'],
    ['2221', 'mastercard'],
    ['23', 'mastercard'],
    ['2720', 'mastercard'],
    ['34', 'amex'],
    ['37', 'amex'],
    ['6011', 'discover'],
    ['65', 'discover'],
    ['644', 'discover'],
    ['649', 'discover'],
    ['3528', 'jcb'],
    ['353', 'jcb'],
    ['3589', 'jcb'],
    ['36', 'diners-club'],
    ['300', 'diners-club'],
    ['305', 'diners-club'],
    ['38', 'diners-club'],
    ['62', 'unionpay'],
  ])('%s is %s', (digits, scheme) => {
    expect(detectScheme(digits)).toBe(scheme);
  });

  it.each([
    '',
    '5',
    '50',
    '56',
    '2',
    '22',
    '222',
    '2220',
    '27',
    '272',
    '2721',
    '3',
    '35',
    '352',
    '3527',
    '359',
    '30',
    '306',
    '6',
    '60',
    '601',
    '6012',
    '64',
    '643',
    '1',
    '9',
    'abc',
    '4a',
  ])('%j tells nothing yet (or never)', (digits) => {
    expect(detectScheme(digits)).toBeNull();
  });
});

describe('CardDetailsTracker (card-details-changed)', () => {
  it('typing 4111111111111111 fires once for visa with no country, then again when the country resolves at 8 digits', async () => {
    const { tracker, fired, asked } = recorder(async (bin) =>
      bin.length < 8 ? details(null, 'visa') : details('US', 'visa'),
    );
    await typeDigits(tracker, '4111111111111111');
    expect(fired).toEqual([details(null, 'visa'), details('US', 'visa')]);
    // The second differs in the country alone: it still fires (spec, Events rule 5).
    // One lookup per prefix: 6, 7 and 8 digits; longer numbers ask again for nothing.
    expect(asked).toEqual(['411111', '4111111', '41111111']);
  });

  it('over the shipped sample BIN data, 4455667711111110 fires at 1 digit (visa), 6 (credit) and 8 (US, nothing else changed)', async () => {
    const binData = loadBinData({});
    const { tracker, fired } = recorder(async (bin) => {
      const info = binData.lookup(bin);
      return details(info.issuerCountry, info.scheme, info.cardType);
    });
    await typeDigits(tracker, '4455667711111110');
    expect(fired).toEqual([details(null, 'visa'), details(null, 'visa', 'credit'), details('US', 'visa', 'credit')]);
  });

  it('over the shipped sample, 4111111111111111 fires for visa, then once more at 6 digits with its US credit issuer', async () => {
    const binData = loadBinData({});
    const { tracker, fired } = recorder(async (bin) => {
      const info = binData.lookup(bin);
      return details(info.issuerCountry, info.scheme, info.cardType);
    });
    await typeDigits(tracker, '4111111111111111');
    expect(fired).toEqual([details(null, 'visa'), details('US', 'visa', 'credit')]);
  });

  it('fires when additional schemes change, and hands out copies a handler cannot change', async () => {
    const { tracker, fired } = recorder(async (bin) =>
      bin.length === 6 ? details('FR', 'visa', 'debit') : details('FR', 'visa', 'debit', ['carte-bancaire']),
    );
    await typeDigits(tracker, '4970101');
    expect(fired.map((value) => value.additionalSchemes)).toEqual([[], [], ['carte-bancaire']]);
    (fired[2]!.additionalSchemes as string[]).push('tampered');
    expect(tracker.current.additionalSchemes).toEqual(['carte-bancaire']);
  });

  it('fires nothing for digits that tell nothing, and fires "unknown" when a known number is deleted back', async () => {
    const { tracker, fired } = recorder(async () => details('US', 'visa', 'credit'));
    await tracker.update('3');
    await tracker.update('');
    expect(fired).toEqual([]);
    await typeDigits(tracker, '411111');
    await tracker.update('41111');
    await tracker.update('');
    expect(fired).toEqual([
      details(null, 'visa'),
      details('US', 'visa', 'credit'),
      details(null, 'visa'),
      UNKNOWN_CARD,
    ]);
  });

  it('drops an answer that arrives after the number moved to another prefix', async () => {
    const pending = new Map<string, (value: CardDetails) => void>();
    const fired: CardDetails[] = [];
    const tracker = new CardDetailsTracker(
      (bin) => new Promise((resolve) => pending.set(bin, resolve)),
      (value) => fired.push(value),
    );
    await tracker.update('4');
    const six = tracker.update('411111');
    const seven = tracker.update('4111112');
    pending.get('4111112')!(details('IE', 'visa', 'debit'));
    await seven;
    pending.get('411111')!(details('US', 'visa', 'credit'));
    await six;
    expect(fired).toEqual([details(null, 'visa'), details('IE', 'visa', 'debit')]);
  });

  it('asks once for a pasted number: its first 8 digits', async () => {
    const { tracker, fired, asked } = recorder(async () => details('GB', 'mastercard', 'credit'));
    await tracker.update('5200000000001203');
    expect(asked).toEqual(['52000000']);
    expect(fired).toEqual([details('GB', 'mastercard', 'credit')]);
  });

  it('keeps the pattern’s scheme when the BIN data knows none, rather than flipping back to null', async () => {
    const { tracker, fired } = recorder(async () => details(null, null));
    await typeDigits(tracker, '4000056655665556');
    expect(fired).toEqual([details(null, 'visa')]);
  });

  it('does not cache a failed lookup: the pattern stands meanwhile, the next keystroke asks again', async () => {
    let failures = 1;
    const { tracker, fired, asked } = recorder(async () => {
      if (failures-- > 0) throw new Error('HTTP 429');
      return details('US', 'visa', 'credit');
    });
    await typeDigits(tracker, '411111');
    expect(fired).toEqual([details(null, 'visa')]);
    await tracker.update('411111');
    expect(asked).toEqual(['411111', '411111']);
    expect(fired).toEqual([details(null, 'visa'), details('US', 'visa', 'credit')]);
  });
});

describe('the lookup over HTTP', () => {
  it('asks GET checkout/sessions/{id}/card-details?bin= under the service’s base and reads the answer', async () => {
    const urls: string[] = [];
    const fetchFn = (async (url: string) => {
      urls.push(url);
      return new Response(
        JSON.stringify({ country: 'US', scheme: 'visa', card_type: 'credit', additional_schemes: [] }),
        { status: 200 },
      );
    }) as unknown as typeof fetch;
    const lookup = httpCardDetailsLookup(
      'https://pay.example/switchyard/',
      '6f1c1f64-8c1e-4a55-9a0c-3f3e0c7b2a10',
      fetchFn,
    );
    expect(await lookup('41111111')).toEqual(details('US', 'visa', 'credit'));
    expect(urls).toEqual([
      'https://pay.example/switchyard/checkout/sessions/6f1c1f64-8c1e-4a55-9a0c-3f3e0c7b2a10/card-details?bin=41111111',
    ]);
  });

  it('rejects any other status and any other shape', async () => {
    const answering = (status: number, body: unknown) =>
      (async () => new Response(JSON.stringify(body), { status })) as unknown as typeof fetch;
    await expect(httpCardDetailsLookup('https://pay.example/', 'id', answering(404, {}))('411111')).rejects.toThrow(
      'HTTP 404',
    );
    await expect(
      httpCardDetailsLookup('https://pay.example/', 'id', answering(200, { country: 1 }))('411111'),
    ).rejects.toThrow();
    expect(() => cardDetailsFromWire({ country: null, scheme: null, card_type: null })).toThrow('additional_schemes');
    expect(() => cardDetailsFromWire(null)).toThrow();
  });
});
