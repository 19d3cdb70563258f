/**
 * The hostile atoms the fuzzer draws from: strings (huge, unicode, NUL, lone surrogates, injections), numbers
 * (negative, zero, huge, fractional, exponent forms, beyond double range), ids for path segments, raw JSON texts
 * (invalid, duplicated keys, deep nesting), content types and header values.
 */
import fc from 'fast-check';

/** Strings a careless parser, validator, database or renderer trips on. None is a URL to anywhere but 127.0.0.1. */
const nastyStrings = [
  '',
  ' ',
  '   \t ',
  '\u0000',
  'a\u0000b',
  '\uD800',
  '\uDFFF',
  'x\uDBFFy',
  '\uDC00\uD800',
  '😀',
  '👨‍👩‍👧‍👦',
  '🏳️‍🌈🇺🇸',
  '\u202Eevil\u202C',
  'مرحبا بالعالم',
  'שלום עולם',
  '\u200B\u200C\u200D\u2060',
  '\uFEFF',
  '\uFFFE\uFFFF',
  'e\u0301\u0301\u0301\u0301',
  'ＡＢＣ１２３',
  'Z̴̡̢͔̦̀͜a̸̧͇̋l̷̰̄g̸͔̈o̴̬͝',
  'ǅǈǋ ß ﬁ İı',
  '%00',
  '%',
  '%zz',
  '%C0%AE%C0%AE%2F',
  '../../../../etc/passwd',
  '..\\..\\..\\windows\\win.ini',
  '/etc/passwd\u0000.png',
  "' OR '1'='1",
  '"; DROP TABLE events; --',
  '1; SELECT * FROM vault_cards --',
  '<script>alert(1)</script>',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a Log4Shell lookup, sent as the literal text it is.
  '${jndi:ldap://127.0.0.1:1/a}',
  '{{7*7}}',
  '#{7*7}',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-0',
  '1e309',
  'true',
  '[]',
  '{}',
  '\r\n',
  '\r\nSet-Cookie: a=b',
  '\t',
  '\\',
  '\\u0000',
  '"',
  "'",
  '`',
  'USD',
  'usd',
  'US',
  // Not Luhn-valid: a test card number in a free-text field would be stored, and the data-protection scan of the
  // CI artifacts would rightly report it.
  '4111111111111112',
  '00000000-0000-0000-0000-000000000000',
  'http://127.0.0.1:1/',
  'javascript:alert(1)',
  'file:///etc/passwd',
  'data:text/html,<b>x</b>',
] as const;

/** Any code points but surrogates (fc.string's `binary` unit maps all of Unicode up front: seconds of start-up). */
const anyCodePoints = fc
  .array(fc.oneof(fc.integer({ min: 0, max: 0xd7ff }), fc.integer({ min: 0xe000, max: 0x10ffff })), { maxLength: 40 })
  .map((points) => String.fromCodePoint(...points));

const loneSurrogates = fc
  .array(fc.integer({ min: 0xd800, max: 0xdfff }), { minLength: 1, maxLength: 4 })
  .map((units) => String.fromCharCode(...units));

/** A huge string: up to `max` characters of one (possibly multi-byte or unpaired) character. */
const hugeString = (max: number) =>
  fc
    .tuple(
      fc.constantFrom('x', 'é', '😀', '\u0000', '\uD800', '\u202E', '"', '\\', '%'),
      fc.integer({ min: 1_000, max }),
    )
    .map(([c, n]) => c.repeat(Math.max(1, Math.floor(n / c.length))));

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...nastyStrings) },
  { weight: 3, arbitrary: anyCodePoints },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 300 }) },
  { weight: 2, arbitrary: loneSurrogates },
  { weight: 1, arbitrary: hugeString(30_000) },
);

/** Numbers that JSON can carry. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    -1,
    1,
    -99_999_999,
    99_999_999,
    100_000_000,
    2 ** 31,
    2 ** 31 - 1,
    -(2 ** 31),
    2 ** 32,
    2 ** 53,
    2 ** 53 + 2,
    -(2 ** 53),
    1e21,
    1e308,
    -1e308,
    5e-324,
    0.1,
    0.5,
    1.5,
    99.99,
    99_999_999.5,
    1e-7,
  ),
  fc.integer(),
  fc.integer({ min: -1_000, max: 1_000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Number literals only raw JSON text can carry: exponents, beyond double range or precision, negative zero. */
export const rawNumberLiterals = [
  '1e400',
  '-1e400',
  '1e-400',
  '1E2',
  '1e2',
  '1.0e2',
  '100.0',
  '1e+2',
  '0.0000001e9',
  '9007199254740993',
  '123456789012345678901234567890',
  '-0',
  '-0.0',
  '0e0',
  '1e21',
  '2.5e-3',
] as const;

/** Values of any JSON type, for type confusion. */
export const anyJsonValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 3, arbitrary: hostileNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(hostileString, hostileString, { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>([], {}, [[]], [{}], { '': '' }) },
);

/** JSON text `depth` levels deep, as an array or object chain, around `inner`. */
export function deeplyNested(depth: number, kind: 'array' | 'object', inner = '1'): string {
  return kind === 'array'
    ? `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}${inner}${'}'.repeat(depth)}`;
}

export const nestingDepth = fc.constantFrom(32, 100, 1_000, 10_000, 10_000, 10_000, 30_000, 100_000);

/** Texts that are not JSON, or JSON that is not an object, or JSON a careless parser mishandles. */
export const hostileJsonText = fc.constantFrom(
  '{',
  '}',
  '{"amount":}',
  "{'amount': 1}",
  '{"amount": 1,}',
  '[1, 2,, 3]',
  'NaN',
  '{"amount": NaN}',
  '{"amount": Infinity}',
  '{"amount": undefined}',
  '// comment\n{}',
  '{"amount": 1} /* trailing */',
  '\uFEFF{}',
  '{"a": "\\x41"}',
  '{"a": "\\u00"}',
  '{"a": "\\uD800"}',
  '{"a": "\\uDFFF\\uD800"}',
  '{"a": "\u0000"}',
  'nul',
  'tru',
  '"unterminated',
  '\u0000',
  '{"__proto__": {"polluted": true}}',
  '{"constructor": {"prototype": {"polluted": true}}}',
  '{"a": {"__proto__": {"polluted": true}}}',
  '{"a": 1}{"b": 2}',
  '[]',
  '[{}]',
  '""',
  '0',
  'null',
  'true',
  '"a string"',
  '123',
  '-',
  '01',
  '{"a": 01}',
  '{"a": 1e}',
  '{"a": .5}',
  '{"a": +1}',
  '{"a": 0x10}',
  '{a: 1}',
  '{"a" 1}',
  '{"a": [}',
  '{"a": "b"',
  ' \n\t ',
  '\n\n\n{}\n\n',
);

/** Path segments: traversal, NUL, invalid percent-encoding, very long, uuid-ish, other kinds' ids. Sent as is. */
export const hostileSegment = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.constantFrom(
      '..%2F..%2Fetc%2Fpasswd',
      '..%2f..%2f..%2fetc%2fpasswd',
      '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
      '..%5C..%5Cwindows',
      '%2E%2E',
      '..',
      '.',
      '%00',
      'a%00b',
      '%zz',
      '%',
      '%25',
      '%E0%A4%A',
      '%ED%A0%80',
      '%C0%AF',
      '%F0%9F%98%80',
      '%E2%80%AE',
      '%D8%B4%D9%85',
      '%0D%0ASet-Cookie:%20a=b',
      '%20',
      '+',
      ';',
      ',',
      '@',
      '$',
      '~',
      "'",
      '-1',
      '0',
      '1e3',
      'null',
      'undefined',
      '__proto__',
      'constructor',
      '00000000-0000-0000-0000-000000000000',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
      '00000000-0000-0000-0000-00000000000',
      '00000000-0000-0000-0000-0000000000000',
      '{00000000-0000-0000-0000-000000000000}',
      'urn:uuid:00000000-0000-0000-0000-000000000000',
      '00000000000000000000000000000000',
      'x'.repeat(101),
      'x'.repeat(1_000),
      'x'.repeat(8_000),
    ),
  },
  { weight: 2, arbitrary: fc.uuid().map((id) => id.toUpperCase()) },
  { weight: 2, arbitrary: fc.uuid().map((id) => id.replace(/-/g, '')) },
  {
    weight: 3,
    arbitrary: hostileString
      .filter((s) => s.length < 3_000 && s !== '' && s !== '.' && s !== '..')
      .map((s) => encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, '\uFFFD'))),
  },
);

export const hostileContentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'APPLICATION/JSON',
  'application/json;;;',
  'application/json, text/plain',
  'application/vnd.api+json',
  'application/problem+json',
  'text/plain',
  'text/plain; charset=utf-8',
  'text/html',
  'text/csv',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=----x',
  'application/octet-stream',
  '*/*',
  'a/b/c',
  'json',
  '',
  ' ',
  'application/json\u00ff',
);

/** A header value the Node client can send (tab, visible ASCII, latin-1); anything else goes through the raw cases. */
export const toHeaderValue = (value: string): string => value.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
