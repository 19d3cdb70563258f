/**
 * `card-details-changed` (spec, Events rule 5): what the digits typed so far say about the card. Under 6 digits the
 * scheme comes from the number's pattern, here, and the country is unknown; from 6 digits on the service's BIN data
 * answers (`GET /checkout/sessions/{id}/card-details?bin=<the first 6 to 8 digits>`), once per prefix. The event fires
 * whenever {country, scheme, cardType, additionalSchemes} differ from what it last fired — so it fires again when a
 * longer number resolves the country, even when nothing else changed. Pure but for the lookup it is given.
 */
import type { CardDetails } from './messages';

export type { CardDetails } from './messages';

/** Shortest and longest prefix sent to the BIN lookup. */
export const BIN_LOOKUP_MIN_DIGITS = 6;
export const BIN_LOOKUP_MAX_DIGITS = 8;

/** Nothing known: no event fires for it until something was known before. */
export const UNKNOWN_CARD: CardDetails = Object.freeze({
  country: null,
  scheme: null,
  cardType: null,
  additionalSchemes: Object.freeze([]) as readonly string[],
});

/** `[prefix length, lowest, highest]`: the number's first `length` digits, read as a number, within the range. */
type PrefixRange = readonly [number, number, number];

/** The schemes told by their first digits (wire names, as the API's `scheme`). The ranges do not overlap. */
const SCHEME_RANGES: ReadonlyArray<readonly [string, readonly PrefixRange[]]> = [
  ['visa', [[1, 4, 4]]],
  [
    'mastercard',
    [
      [2, 51, 55],
      [4, 2221, 2720],
    ],
  ],
  [
    'amex',
    [
      [2, 34, 34],
      [2, 37, 37],
    ],
  ],
  [
    'discover',
    [
      [4, 6011, 6011],
      [2, 65, 65],
      [3, 644, 649],
    ],
  ],
  ['jcb', [[4, 3528, 3589]]],
  [
    'diners-club',
    [
      [2, 36, 36],
      [3, 300, 305],
      [2, 38, 38],
    ],
  ],
  ['unionpay', [[2, 62, 62]]],
];

/** Whether every number starting with `digits` falls within the range (so a short prefix is told only when it is sure). */
function within(digits: string, [length, lowest, highest]: PrefixRange): boolean {
  if (digits.length >= length) {
    const prefix = Number(digits.slice(0, length));
    return prefix >= lowest && prefix <= highest;
  }
  const missing = 10 ** (length - digits.length);
  const first = Number(digits) * missing;
  return first >= lowest && first + missing - 1 <= highest;
}

/**
 * The scheme the digits are sure to belong to, or null: `4` is visa, but `3` (amex, jcb or diners) or `22` (2221 is
 * mastercard, 2220 nothing) is null until more digits tell.
 */
export function detectScheme(digits: string): string | null {
  if (!/^\d+$/.test(digits)) return null;
  for (const [scheme, ranges] of SCHEME_RANGES) {
    if (ranges.some((range) => within(digits, range))) return scheme;
  }
  return null;
}

export const sameCardDetails = (a: CardDetails, b: CardDetails): boolean =>
  a.country === b.country &&
  a.scheme === b.scheme &&
  a.cardType === b.cardType &&
  a.additionalSchemes.length === b.additionalSchemes.length &&
  a.additionalSchemes.every((scheme, index) => scheme === b.additionalSchemes[index]);

/** The service's BIN data for a 6 to 8 digit prefix; rejects when it cannot answer. */
export type CardDetailsLookup = (bin: string) => Promise<CardDetails>;

/**
 * Follows the card number as it is typed: `update(digits)` on every change; `onChange` gets each new value. Lookups
 * are cached per prefix (typing 16 digits asks at most three times: 6, 7 and 8 digits) and an answer that arrives
 * after the number moved to another prefix is dropped. A failed lookup is not cached and leaves the pattern's scheme
 * with an unknown country; the next keystroke asks again.
 */
export class CardDetailsTracker {
  private readonly cache = new Map<string, Promise<CardDetails>>();
  private digits = '';
  private last: CardDetails = UNKNOWN_CARD;

  constructor(
    private readonly lookup: CardDetailsLookup,
    private readonly onChange: (details: CardDetails) => void,
  ) {}

  /** What was fired last (UNKNOWN_CARD before anything was). */
  get current(): CardDetails {
    return this.last;
  }

  /** Resolves once this number's details are applied (or dropped as stale): tests wait on it, the frame need not. */
  async update(digits: string): Promise<void> {
    this.digits = digits;
    if (digits.length < BIN_LOOKUP_MIN_DIGITS) {
      this.apply({ ...UNKNOWN_CARD, scheme: detectScheme(digits) });
      return;
    }
    const prefix = digits.slice(0, BIN_LOOKUP_MAX_DIGITS);
    let details: CardDetails;
    try {
      details = await this.cached(prefix);
    } catch {
      details = UNKNOWN_CARD;
    }
    if (this.digits.length < BIN_LOOKUP_MIN_DIGITS || this.digits.slice(0, BIN_LOOKUP_MAX_DIGITS) !== prefix) return;
    // A BIN the data does not know may still show its scheme in its pattern: no flip back to null at 6 digits.
    this.apply({ ...details, scheme: details.scheme ?? detectScheme(digits) });
  }

  private cached(prefix: string): Promise<CardDetails> {
    let answer = this.cache.get(prefix);
    if (!answer) {
      answer = this.lookup(prefix);
      this.cache.set(prefix, answer);
      answer.catch(() => this.cache.delete(prefix));
    }
    return answer;
  }

  private apply(details: CardDetails): void {
    if (sameCardDetails(details, this.last)) return;
    this.last = {
      country: details.country,
      scheme: details.scheme,
      cardType: details.cardType,
      additionalSchemes: [...details.additionalSchemes],
    };
    this.onChange({ ...this.last, additionalSchemes: [...this.last.additionalSchemes] });
  }
}

/** The service's answer (`country`, `scheme`, `card_type`, `additional_schemes`) as card details; anything else is refused. */
export function cardDetailsFromWire(body: unknown): CardDetails {
  if (body === null || typeof body !== 'object') throw new Error('card details: not an object');
  const {
    country,
    scheme,
    card_type: cardType,
    additional_schemes: additionalSchemes,
  } = body as Record<string, unknown>;
  const text = (value: unknown, name: string): string | null => {
    if (value === null || typeof value === 'string') return value;
    throw new Error(`card details: ${name} is neither a string nor null`);
  };
  if (!Array.isArray(additionalSchemes) || !additionalSchemes.every((value) => typeof value === 'string')) {
    throw new Error('card details: additional_schemes is not a list of strings');
  }
  return {
    country: text(country, 'country'),
    scheme: text(scheme, 'scheme'),
    cardType: text(cardType, 'card_type'),
    additionalSchemes,
  };
}

/** The lookup over HTTP: `GET <base>checkout/sessions/{id}/card-details?bin=`, `base` ending in `/`. */
export function httpCardDetailsLookup(
  base: string,
  sessionId: string,
  fetchFn: typeof fetch = fetch,
): CardDetailsLookup {
  return async (bin) => {
    const url = new URL(`checkout/sessions/${encodeURIComponent(sessionId)}/card-details`, base);
    url.searchParams.set('bin', bin);
    const response = await fetchFn(url.toString(), {
      headers: { accept: 'application/json' },
      credentials: 'omit',
      cache: 'no-store',
    });
    if (response.status !== 200) throw new Error(`card details: HTTP ${response.status}`);
    return cardDetailsFromWire(await response.json());
  };
}
