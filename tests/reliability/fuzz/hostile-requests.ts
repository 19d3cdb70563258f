/**
 * Whole hostile requests, generated with fast-check over every operation of the OpenAPI document: path parameters
 * (real ids, traversal, odd ids), query strings, headers (tokens, merchant account, Idempotency-Key, content type,
 * huge values) and bodies (schema-guided and mutated, any JSON, invalid JSON, duplicated keys, deep nesting, raw
 * number literals, oversized). A small share are raw HTTP/1.1 bytes the Node client refuses to send.
 */
import fc from 'fast-check';
import type { Operation } from './openapi-model';
import { fuzzedValue, validValue, type ValueContext } from './schema-values';
import {
  anyJsonValue,
  deeplyNested,
  hostileContentType,
  hostileJsonText,
  hostileNumber,
  hostileSegment,
  hostileString,
  nestingDepth,
  rawNumberLiterals,
  toHeaderValue,
} from './hostile-values';

export const ACCOUNT_HEADER = 'x-service-merchant-account-id';

/** One request as sent: through the keep-alive client (`http`) or as raw bytes on a fresh connection (`raw`). */
export interface FuzzRequest {
  readonly kind: 'http' | 'raw';
  /** What was generated, for the per-category counts: e.g. `body:deep-nesting`. */
  readonly category: string;
  /** `METHOD /path/{template}` of the operation aimed at. */
  readonly operation: string;
  readonly method: string;
  /** Path and query exactly as sent. */
  readonly target: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Buffer;
  /** Send the body in chunks without a content-length. */
  readonly chunked?: boolean;
  /** The raw bytes (kind `raw`). */
  readonly raw?: Buffer;
  /** The status the request must get, when the generator knows it (an oversized body: 413). */
  readonly expectStatus?: number;
}

export interface RequestContext extends ValueContext {
  readonly operations: readonly Operation[];
  /** The merchant account the fixtures live in. */
  readonly account: string;
  /** Other merchant accounts that exist. */
  readonly otherAccounts: readonly string[];
  /** A token of an administrator key with every scope. */
  readonly token: string;
  /** Tokens that must not get in: none, garbage, forged, expired, read-only, another key's. */
  readonly hostileAuthorizations: readonly string[];
  /** Ids the fuzzer may delete (DELETE requests take only these, or hostile ids). */
  readonly deletableIdsByName: Readonly<Record<string, readonly string[]>>;
  /** Body limit of an operation, in bytes. */
  bodyLimitOf(operation: Operation): number;
}

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

const weighted = <T>(...entries: [number, fc.Arbitrary<T>][]): fc.Arbitrary<T> =>
  fc.oneof(...entries.map(([weight, arbitrary]) => ({ weight, arbitrary })));

/** A path parameter: an id of its kind, any id, or a hostile segment. DELETE takes only the decoys of its kind. */
function pathSegment(context: RequestContext, operation: Operation, name: string): fc.Arbitrary<string> {
  const deleting = operation.method === 'DELETE';
  const pool = deleting ? context.deletableIdsByName[name] : context.idsByName[name];
  const real = pool && pool.length > 0 ? fc.constantFrom(...pool) : fc.uuid();
  return weighted(
    [6, real],
    [1, fc.uuid()],
    [1, deleting ? fc.uuid() : fc.constantFrom(...context.allIds)],
    [4, hostileSegment],
  );
}

const encodeQueryValue = (value: unknown): string => {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return encodeURIComponent(text.replace(/[\uD800-\uDFFF]/g, '\uFFFD'));
};

/** A cursor: base64url JSON of `{after|before}` with hostile sort keys, or garbage. */
const hostileCursor = weighted<string>(
  [
    3,
    fc
      .tuple(fc.constantFrom('after', 'before'), fc.oneof(hostileString, hostileNumber, anyJsonValue))
      .map(([side, key]) => Buffer.from(JSON.stringify({ [side]: key })).toString('base64url')),
  ],
  [1, fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString('base64url'))],
  [1, hostileString.map((s) => s.slice(0, 2_000))],
);

function queryString(context: RequestContext, operation: Operation): fc.Arbitrary<string> {
  const params = operation.queryParams;
  const structured =
    params.length === 0
      ? fc.constant('')
      : fc
          .array(
            fc.oneof(
              ...params.map((param) =>
                fc
                  .tuple(
                    param.name === 'cursor'
                      ? hostileCursor
                      : weighted<unknown>(
                          [2, validValue(context, param.schema, param.name)],
                          [3, fuzzedValue(context, param.schema, param.name)],
                          [1, anyJsonValue],
                        ),
                    fc.boolean(),
                  )
                  .map(([value, repeat]) => {
                    const values = Array.isArray(value) ? value : [value];
                    const pairs = values.map((item) => `${encodeURIComponent(param.name)}=${encodeQueryValue(item)}`);
                    return (repeat ? [...pairs, ...pairs] : pairs).join('&');
                  }),
              ),
            ),
            { minLength: 1, maxLength: Math.min(4, params.length + 1) },
          )
          .map((pairs) => pairs.join('&'));
  const raw = fc.constantFrom(
    'limit=-1',
    'limit=0',
    'limit=1.5',
    'limit=1e1',
    'limit=101',
    'limit=99999999999999999999',
    'limit=%00',
    'limit=',
    'limit',
    'limit=1&limit=2',
    'cursor=',
    'cursor=%zz',
    '%zz=1',
    '&&&',
    '=',
    '==&==',
    'a[b][c]=1',
    '__proto__[polluted]=1',
    '__proto__.polluted=1',
    'constructor[prototype][polluted]=1',
    'status[]=processing',
    'status[0]=processing&status[1]=refunded',
    `status=${'processing&status='.repeat(500)}processing`,
    `currency=${'USD,'.repeat(2_000)}USD`,
    `search=${'%F0%9F%98%80'.repeat(500)}`,
    'amount_gte=1e400',
    'amount_gte=-0',
    'amount_lte=NaN',
    'created_at_gte=2024-02-30T25:61:61Z',
    'created_at_gte=0000-00-00T00:00:00Z',
    'created_at_gte=99999-01-01T00:00:00Z',
    'buyer_id=../../etc/passwd',
    'id=00000000-0000-0000-0000-000000000000',
    'sort_by=%3BDROP%20TABLE%20gift_cards',
    'order_by=desc;--',
    'token=%00',
  );
  return weighted([6, structured], [3, raw], [1, fc.constant('')]).map((query) => (query === '' ? '' : `?${query}`));
}

function authorization(context: RequestContext, operation: Operation): fc.Arbitrary<string | undefined> {
  const valid = fc.constant<string | undefined>(`Bearer ${context.token}`);
  if (operation.public)
    return weighted([8, fc.constant(undefined)], [2, fc.constantFrom(...context.hostileAuthorizations)]);
  return weighted<string | undefined>(
    [85, valid],
    [5, fc.constant(undefined)],
    [8, fc.constantFrom(...context.hostileAuthorizations)],
    [2, hostileString.map((s) => toHeaderValue(s).slice(0, 10_000))],
  );
}

function merchantAccount(context: RequestContext): fc.Arbitrary<string | undefined> {
  return weighted<string | undefined>(
    [75, fc.constant(context.account)],
    [8, fc.constant(undefined)],
    [5, fc.constantFrom(...context.otherAccounts)],
    [2, fc.constantFrom('no-such-account', 'DEFAULT', ' default', '', ' ', '../default', 'default\u00ff')],
    [10, hostileString.map((s) => toHeaderValue(s).slice(0, 12_000))],
  );
}

function idempotencyKey(operation: Operation): fc.Arbitrary<string | undefined> {
  if (operation.method !== 'POST') return fc.constant(undefined);
  return weighted<string | undefined>(
    [6, fc.constant(undefined)],
    [2, fc.uuid()],
    [1, fc.constantFrom('fuzz-reused-key', '', ' ', 'k'.repeat(255), 'k'.repeat(256), 'k'.repeat(10_000))],
    [1, hostileString.map((s) => toHeaderValue(s).slice(0, 400))],
  );
}

const extraHeaders = weighted<Record<string, string>>(
  [20, fc.constant({})],
  [
    1,
    fc.constantFrom<Record<string, string>>(
      { prefer: 'resource=transaction-capture' },
      { prefer: 'resource=transaction-void' },
      { prefer: 'resource=nonsense; respond-async' },
      { 'x-forwarded-for': '127.0.0.1, 10.0.0.1, garbage' },
      { 'x-forwarded-host': 'evil.invalid' },
      { 'x-http-method-override': 'DELETE' },
      { 'x-original-url': '/api-key-pairs' },
      { 'accept-encoding': 'gzip, deflate, br, zstd, *;q=0' },
      { accept: 'application/xml' },
      { 'accept-version': '99' },
      { origin: 'https://evil.invalid' },
      { expect: '100-continue' },
      { cookie: `${'a=b; '.repeat(200)}c=d` },
      { 'x-big': 'y'.repeat(12_000) },
      { 'x-huge': 'z'.repeat(70_000) },
    ),
  ],
  [
    1,
    fc.dictionary(
      fc.stringMatching(/^x-[a-z0-9-]{1,20}$/),
      hostileString.map((s) => toHeaderValue(s).slice(0, 2_000)),
      { maxKeys: 5 },
    ),
  ],
);

/** Replaces `"__raw_<n>__"` placeholders with raw JSON text (number literals JSON.stringify cannot produce). */
const withRawLiterals = (text: string, literals: readonly string[]): string =>
  text.replace(/"__raw_(\d+)__"/g, (_match, index: string) => literals[Number(index) % literals.length]!);

interface GeneratedBody {
  readonly category: string;
  readonly text?: string;
  readonly contentType?: string;
}

function body(context: RequestContext, operation: Operation): fc.Arbitrary<GeneratedBody> {
  const schema = operation.body;
  const json = 'application/json';
  const none = fc.constant<GeneratedBody>({ category: 'body:none' });
  if (!schema && !METHODS_WITH_BODY.has(operation.method)) {
    return weighted(
      [8, none],
      [
        1,
        anyJsonValue.map((value) => ({ category: 'body:unexpected', text: JSON.stringify(value), contentType: json })),
      ],
      [1, hostileJsonText.map((text) => ({ category: 'body:unexpected-invalid', text, contentType: json }))],
    );
  }
  const shaped = schema ? fuzzedValue(context, schema) : anyJsonValue;
  const valid = schema ? validValue(context, schema) : fc.constant({});
  const stringify = (value: unknown) => JSON.stringify(value) ?? 'null';
  return weighted<GeneratedBody>(
    [45, shaped.map((value) => ({ category: 'body:schema-mutated', text: stringify(value), contentType: json }))],
    [8, anyJsonValue.map((value) => ({ category: 'body:any-json', text: stringify(value), contentType: json }))],
    [8, hostileJsonText.map((text) => ({ category: 'body:invalid-json', text, contentType: json }))],
    [
      5,
      fc
        .tuple(valid, fc.constantFrom('first', 'last'), fc.oneof(hostileString, hostileNumber, anyJsonValue))
        .map(([value, where, hostile]) => {
          // Duplicated keys: the same key twice, the hostile value before or after the valid one.
          const text = stringify(value);
          const keys = value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value) : [];
          const key = keys[0] ?? 'amount';
          const duplicate = `${JSON.stringify(key)}:${stringify(hostile)}`;
          const dupText =
            text.startsWith('{') && text !== '{}'
              ? where === 'first'
                ? `{${duplicate},${text.slice(1)}`
                : `${text.slice(0, -1)},${duplicate}}`
              : `{${duplicate},${duplicate}}`;
          return { category: 'body:duplicate-keys', text: dupText, contentType: json };
        }),
    ],
    [
      3,
      fc
        .tuple(nestingDepth, fc.constantFrom<'array' | 'object'>('array', 'object'), fc.constantFrom('root', 'field'))
        .map(([depth, kind, where]) => {
          const nested = deeplyNested(depth, kind);
          const field = Object.keys(schema ? (context.model.resolve(schema).properties ?? {}) : {})[0] ?? 'amount';
          return {
            category: 'body:deep-nesting',
            text: where === 'root' ? nested : `{${JSON.stringify(field)}:${nested}}`,
            contentType: json,
          };
        }),
    ],
    [
      5,
      fc
        .tuple(valid, fc.nat(), fc.array(fc.constantFrom(...rawNumberLiterals), { minLength: 1, maxLength: 3 }))
        .map(([value, index, literals]) => {
          // Every number of a valid body replaced by raw literals (1e400, 9007199254740993, -0, 1E2, ...).
          let n = index;
          const replaced =
            JSON.stringify(value, (_key, item: unknown) => (typeof item === 'number' ? `__raw_${n++}__` : item)) ??
            'null';
          const text = replaced.includes('__raw_')
            ? withRawLiterals(replaced, literals)
            : `{"amount":${literals[0]},"currency":"USD"}`;
          return { category: 'body:raw-numbers', text, contentType: json };
        }),
    ],
    [4, valid.map((value) => ({ category: 'body:valid', text: stringify(value), contentType: json }))],
    [
      4,
      fc
        .tuple(shaped, hostileContentType)
        .map(([value, contentType]) => ({ category: 'body:content-type', text: stringify(value), contentType })),
    ],
    [
      3,
      fc
        .tuple(shaped, fc.constantFrom('form', 'xml', 'csv', 'binary'))
        .map(([value, form]) => ({ category: 'body:not-json', text: notJson(value, form), contentType: json })),
    ],
    [
      4,
      fc.constantFrom<GeneratedBody>(
        { category: 'body:empty', text: '', contentType: json },
        { category: 'body:empty', text: '' },
        { category: 'body:none' },
      ),
    ],
  );
}

/** Text of any value (fast-check's dictionaries have no prototype, so no toString). */
const textOf = (value: unknown): string =>
  value !== null && typeof value === 'object' ? (JSON.stringify(value) ?? '') : String(value);

function notJson(value: unknown, form: string): string {
  const flat = value !== null && typeof value === 'object' ? Object.entries(value) : [['value', value]];
  const pairs = flat.map(
    ([k, v]) => [textOf(k).replace(/[\uD800-\uDFFF]/g, '?'), textOf(v).replace(/[\uD800-\uDFFF]/g, '?')] as const,
  );
  if (form === 'form') return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
  if (form === 'xml')
    return `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;${pairs.map(([k]) => `<${k}/>`).join('')}</x>`;
  if (form === 'csv') return pairs.map(([k, v]) => `${k},${v}`).join('\n');
  return '\u0000\u0001\u0002\uFFFD\u00ff\u00fe';
}

const wrongMethod = fc.constantFrom(
  'GET',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'HEAD',
  'PROPFIND',
  'TRACE',
  'SEARCH',
  'LOCK',
);

/** One structured request to `operation`. */
function structuredRequest(context: RequestContext, operation: Operation): fc.Arbitrary<FuzzRequest> {
  const segments = operation.pathParams.map((param) => pathSegment(context, operation, param.name));
  return fc
    .record({
      segments: fc.tuple(...segments),
      query: queryString(context, operation),
      method: weighted([92, fc.constant(operation.method)], [8, wrongMethod]),
      authorization: authorization(context, operation),
      merchant: merchantAccount(context),
      idempotencyKey: idempotencyKey(operation),
      extra: extraHeaders,
      body: body(context, operation),
      pathShape: weighted(
        [30, fc.constant('plain')],
        [1, fc.constantFrom('trailing-slash', 'double-slash', 'dot-segment', 'upper-case', 'encoded-slash')],
      ),
    })
    .map(
      ({
        segments: values,
        query,
        method,
        authorization: auth,
        merchant,
        idempotencyKey: key,
        extra,
        body: generated,
        pathShape,
      }) => {
        let index = 0;
        let path = operation.path.replace(/\{[^}]+\}/g, () => values[index++] ?? '');
        if (pathShape === 'trailing-slash') path = `${path}/`;
        else if (pathShape === 'double-slash') path = path.replace('/', '//');
        else if (pathShape === 'dot-segment') path = `/./${path.slice(1).replace('/', '/x/../')}`;
        else if (pathShape === 'upper-case') path = path.toUpperCase();
        else if (pathShape === 'encoded-slash')
          path = path.replace(/\//g, (slash, offset: number) => (offset === 0 ? slash : '%2F'));
        const headers: Record<string, string> = { ...extra };
        if (auth !== undefined) headers.authorization = auth;
        if (merchant !== undefined) headers[ACCOUNT_HEADER] = merchant;
        if (key !== undefined) headers['idempotency-key'] = key;
        if (generated.contentType !== undefined) headers['content-type'] = generated.contentType;
        const shape = pathShape === 'plain' ? [] : [`path:${pathShape}`];
        const category = [method === operation.method ? generated.category : 'method:other', ...shape].join(' ');
        return {
          kind: 'http' as const,
          category,
          operation: `${operation.method} ${operation.path}`,
          method,
          target: `${path}${query}`,
          headers,
          ...(generated.text !== undefined ? { body: Buffer.from(generated.text, 'utf8') } : {}),
        };
      },
    );
}

/** A body over the operation's limit: always a 413, whoever sends it, with or without a content-length. */
function oversizedRequest(context: RequestContext, operation: Operation): fc.Arbitrary<FuzzRequest> {
  const limit = context.bodyLimitOf(operation);
  return fc
    .record({
      extra: fc.integer({ min: 1, max: 64 * 1024 }),
      chunked: fc.boolean(),
      authorized: fc.boolean(),
      filler: fc.constantFrom('x', 'é', '😀', '['),
    })
    .map(({ extra, chunked, authorized, filler }) => {
      const size = limit + extra;
      const head = '{"padding":"';
      const unit = Buffer.from(filler);
      const body = Buffer.alloc(size, unit);
      body.write(head, 0);
      return {
        kind: 'http' as const,
        category: `oversized${chunked ? ' chunked' : ''}`,
        operation: `${operation.method} ${operation.path}`,
        method: operation.method,
        target: operation.path.replace(/\{[^}]+\}/g, () => context.allIds[0]!),
        headers: {
          'content-type': 'application/json',
          ...(authorized ? { authorization: `Bearer ${context.token}`, [ACCOUNT_HEADER]: context.account } : {}),
        },
        body,
        chunked,
        expectStatus: 413,
      };
    });
}

/** Raw HTTP/1.1 the Node client refuses to produce: broken request lines, header bytes, framing, huge headers. */
function rawRequest(context: RequestContext): fc.Arbitrary<FuzzRequest> {
  const auth = `Authorization: Bearer ${context.token}\r\n`;
  const cases: [string, string | Buffer][] = [
    ['garbage request line', 'HELLO\r\n\r\n'],
    ['unknown method', `FOO /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\n`],
    ['lower-case method', `get /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\n`],
    ['HTTP/9.9', `GET /transactions HTTP/9.9\r\nHost: 127.0.0.1\r\n${auth}\r\n`],
    ['HTTP/2 preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'],
    ['HTTP/1.0 without Host', `GET /transactions HTTP/1.0\r\n${auth}\r\n`],
    ['absolute-form target', `GET http://127.0.0.1/transactions HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\n`],
    ['asterisk target', 'OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'],
    ['space in path', `GET /transactions/a b HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\n`],
    ['NUL in path', `GET /transactions/\u0000 HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\n`],
    ['raw traversal', `GET /transactions/../../../../etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\n`],
    ['backslash traversal', `GET /transactions\\..\\..\\etc\\passwd HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\n`],
    ['NUL in header value', `GET /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\u0000b\r\n${auth}\r\n`],
    ['CR in header value', `GET /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\rb\r\n${auth}\r\n`],
    ['bare LF line endings', `GET /transactions HTTP/1.1\nHost: 127.0.0.1\n${auth.replace('\r\n', '\n')}\n`],
    ['obs-fold header', `GET /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\r\n  folded\r\n${auth}\r\n`],
    ['header without colon', `GET /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\nNoColonHere\r\n${auth}\r\n`],
    ['space before colon', `GET /transactions HTTP/1.1\r\nHost : 127.0.0.1\r\n${auth}\r\n`],
    ['header overflow', `GET /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n${auth}\r\n`],
    [
      'too many headers',
      `GET /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\n${Array.from({ length: 3_000 }, (_, i) => `X-H${i}: v`).join('\r\n')}\r\n${auth}\r\n`,
    ],
    [
      'content-length not a number',
      `POST /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n${auth}\r\n`,
    ],
    ['negative content-length', `POST /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n${auth}\r\n`],
    [
      'two content-lengths',
      `POST /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n${auth}\r\n{}`,
    ],
    [
      'content-length and chunked',
      `POST /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n${auth}\r\n0\r\n\r\n`,
    ],
    [
      'bad chunk size',
      `POST /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n${auth}\r\nzz\r\n{}\r\n0\r\n\r\n`,
    ],
    [
      'unknown transfer-encoding',
      `POST /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n${auth}\r\n2\r\n{}\r\n0\r\n\r\n`,
    ],
    [
      'content-length 2^64',
      `POST /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 18446744073709551616\r\n${auth}\r\n`,
    ],
    [
      'content-length over the limit, no body',
      `POST /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n${auth}\r\n`,
    ],
  ];
  const bytesCases: [string, Buffer][] = [
    [
      'invalid UTF-8 in path',
      Buffer.concat([
        Buffer.from('GET /transactions/'),
        Buffer.from([0xed, 0xa0, 0x80, 0xff, 0xfe]),
        Buffer.from(` HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\n`),
      ]),
    ],
    [
      'invalid UTF-8 in merchant header',
      Buffer.concat([
        Buffer.from(`GET /payment-services HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}${ACCOUNT_HEADER}: `),
        Buffer.from([0xc3, 0x28, 0xed, 0xa0, 0x80]),
        Buffer.from('\r\n\r\n'),
      ]),
    ],
    [
      'invalid UTF-8 in authorization',
      Buffer.concat([
        Buffer.from('GET /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer '),
        Buffer.from([0xff, 0xfe, 0x80, 0x2e, 0xc0, 0xaf]),
        Buffer.from('\r\n\r\n'),
      ]),
    ],
    [
      'invalid UTF-8 in JSON body',
      postBytes(
        auth,
        context.account,
        Buffer.concat([
          Buffer.from('{"amount":1000,"currency":"USD","external_identifier":"'),
          Buffer.from([0xed, 0xa0, 0x80, 0xc0, 0xaf, 0xff]),
          Buffer.from('"}'),
        ]),
      ),
    ],
    [
      'UTF-16 JSON body',
      postBytes(auth, context.account, Buffer.from('\uFEFF{"amount":1000,"currency":"USD"}', 'utf16le')),
    ],
  ];
  const all = [
    ...cases.map(([name, text]) => [name, Buffer.from(text as string, 'latin1')] as [string, Buffer]),
    ...bytesCases,
  ];
  return fc.constantFrom(...all).map(([name, bytes]) => ({
    kind: 'raw' as const,
    category: `raw:${name}`,
    operation: 'raw',
    method: 'RAW',
    target: '',
    headers: {},
    raw: bytes,
  }));
}

function postBytes(auth: string, account: string, body: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(
      `POST /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${auth}${ACCOUNT_HEADER}: ${account}\r\nContent-Length: ${body.length}\r\n\r\n`,
    ),
    body,
  ]);
}

/** Any hostile request: 96.75 % structured, 0.25 % oversized bodies, 3 % raw bytes. Every operation equally likely. */
export function hostileRequest(context: RequestContext): fc.Arbitrary<FuzzRequest> {
  const perOperation = context.operations.map((operation) => structuredRequest(context, operation));
  // Every operation that takes a body; settlement files (24 MiB) get their one oversized body in a focused test.
  const withBody = context.operations.filter(
    (operation) => METHODS_WITH_BODY.has(operation.method) && context.bodyLimitOf(operation) <= 2 * 1024 * 1024,
  );
  return weighted<FuzzRequest>(
    [387, fc.oneof(...perOperation)],
    [1, fc.oneof(...withBody.map((operation) => oversizedRequest(context, operation)))],
    [12, rawRequest(context)],
  );
}
