/**
 * Request validation with zod, failing in the spec's 422 body: `{detail: [{loc, msg, type, input, ctx}]}`.
 * `loc` starts with where the value was found (`body`, `query`, `path`, `header`), as clients of this API expect.
 */
import { z } from 'zod';

export type InputLocation = 'body' | 'query' | 'path' | 'header';

export interface ValidationIssue {
  readonly loc: readonly (string | number)[];
  readonly msg: string;
  readonly type: string;
  readonly input: unknown;
  readonly ctx: Readonly<Record<string, unknown>>;
}

export class RequestValidationError extends Error {
  readonly type = 'request_validation' as const;
  constructor(readonly issues: readonly ValidationIssue[]) {
    super(issues.map((issue) => `${issue.loc.join('.')}: ${issue.msg}`).join('; '));
    this.name = 'RequestValidationError';
  }

  toBody(): { detail: readonly ValidationIssue[] } {
    return { detail: this.issues };
  }
}

export function validate<S extends z.ZodType>(schema: S, value: unknown, location: InputLocation): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new RequestValidationError(
    result.error.issues.flatMap((issue) => toValidationIssues(issue, value, location, schema)),
  );
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

const typeNames: Record<string, string> = {
  string: 'string_type',
  number: 'int_type',
  int: 'int_type',
  boolean: 'bool_type',
  object: 'dict_type',
  array: 'list_type',
};

/** How deep an echoed `input` goes; deeper values are cut (the answer must serialise whatever was sent). */
export const MAX_ECHOED_INPUT_DEPTH = 32;
const CUT = '[nested too deep]';

/**
 * Fields whose values never go back in an error: card and gift card numbers, PINs, security codes. A 422 about
 * them (or about the object holding them, e.g. gift card amounts that do not add up) says where and why, not what.
 */
const SECRET_FIELDS = new Set(['number', 'pin', 'security_code', 'cvv', 'cvc', 'decryption_key', 'password']);
const REDACTED = '[redacted]';
/**
 * Card data where no field name says so: a body sent as a JSON string (`"{\"number\":\"4111…\"}"`), a number in a
 * field of another name. Any run of 12–19 digits (spaces or dashes between them allowed) and any value after a
 * secret field's name is masked in every echoed string.
 */
const DIGIT_RUN = /\d(?:[ -]?\d){11,18}/g;
const SECRET_IN_TEXT =
  /(number|pin|security_?code|securityCode|cvv2?|cvc|decryption_key|password)(\\?["']?\s*[:=]\s*\\?["']?)[^"'\\,}&\s]+/gi;
const masked = (text: string): string => text.replace(SECRET_IN_TEXT, `$1$2${REDACTED}`).replace(DIGIT_RUN, REDACTED);

type Schema = z.core.$ZodType;

/**
 * The schemas a value may have been checked against, wrappers (optional, nullable, default, pipe, lazy) and union
 * options opened up: a value is secret when any of them says so, since the echo cannot know which option matched.
 */
function opened(schemas: readonly Schema[]): Schema[] {
  const seen = new Set<Schema>();
  const pending = [...schemas];
  while (pending.length > 0) {
    const schema = pending.pop()!;
    if (seen.has(schema)) continue;
    seen.add(schema);
    const def = schema._zod.def as unknown as Record<string, unknown>;
    for (const inner of [def.innerType, def.in, def.out, def.left, def.right]) if (inner) pending.push(inner as Schema);
    if (Array.isArray(def.options)) pending.push(...(def.options as Schema[]));
    if (typeof def.getter === 'function') pending.push((def.getter as () => Schema)());
  }
  return [...seen];
}

/** A field marked `.meta({ writeOnly: true })` (OpenAPI's word for "taken, never returned") is never echoed. */
const isWriteOnly = (schemas: readonly Schema[]): boolean =>
  opened(schemas).some((schema) => z.globalRegistry.get(schema)?.writeOnly === true);

/** The schemas the value under `key` was checked against. */
function childSchemas(schemas: readonly Schema[], key: string | number): Schema[] {
  const children: Schema[] = [];
  for (const schema of opened(schemas)) {
    const def = schema._zod.def as unknown as Record<string, unknown>;
    if (def.type === 'object') {
      // Own keys only: a body may name `constructor` or `toString`, which every object inherits.
      const shape = def.shape as Record<string, Schema>;
      const child = (Object.hasOwn(shape, key) ? shape[key] : undefined) ?? def.catchall;
      if (child) children.push(child as Schema);
    } else if (def.type === 'array') children.push(def.element as Schema);
    else if (def.type === 'record' || def.type === 'map') children.push(def.valueType as Schema);
    else if (def.type === 'tuple') {
      const child = typeof key === 'number' ? ((def.items as Schema[])[key] ?? def.rest) : undefined;
      if (child) children.push(child as Schema);
    }
  }
  return children;
}

const schemasAt = (root: Schema, path: readonly PropertyKey[]): Schema[] =>
  path.reduce<Schema[]>((schemas, key) => (typeof key === 'symbol' ? [] : childSchemas(schemas, key)), [root]);

/**
 * The `input` an issue echoes, cut at {@link MAX_ECHOED_INPUT_DEPTH} levels: a body nested 10,000 levels deep
 * parses, but JSON.stringify of it overflows the stack, and the answer would be a 500 instead of a 422. Secret
 * fields (by name, or write-only in the schema the value was checked against) are redacted at any depth.
 */
function echoed(value: unknown, schemas: readonly Schema[], key?: string | number, depth = 0): unknown {
  if (value !== undefined && ((typeof key === 'string' && SECRET_FIELDS.has(key)) || isWriteOnly(schemas)))
    return REDACTED;
  if (typeof value === 'string') return masked(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_ECHOED_INPUT_DEPTH) return CUT;
  if (Array.isArray(value))
    return value.map((item, index) => echoed(item, childSchemas(schemas, index), undefined, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const [field, item] of Object.entries(value))
    copy[field] = echoed(item, childSchemas(schemas, field), field, depth + 1);
  return copy;
}

function toValidationIssues(
  issue: z.core.$ZodIssue,
  root: unknown,
  location: InputLocation,
  schema: Schema,
): ValidationIssue[] {
  const path = issue.path.filter((key): key is string | number => typeof key !== 'symbol');
  const loc = [location, ...path];
  const input = echoed(valueAt(root, issue.path), schemasAt(schema, issue.path), path[path.length - 1]);
  switch (issue.code) {
    case 'invalid_type':
      if (input === undefined) return [{ loc, msg: 'Field required', type: 'missing', input, ctx: {} }];
      return [
        {
          loc,
          msg: issue.message,
          type: typeNames[issue.expected] ?? `${issue.expected}_type`,
          input,
          ctx: { expected: issue.expected },
        },
      ];
    case 'too_small': {
      if (issue.origin === 'string')
        return [
          { loc, msg: issue.message, type: 'string_too_short', input, ctx: { min_length: Number(issue.minimum) } },
        ];
      if (issue.origin === 'array')
        return [{ loc, msg: issue.message, type: 'too_short', input, ctx: { min_length: Number(issue.minimum) } }];
      const bound = issue.inclusive ? 'ge' : 'gt';
      return [
        {
          loc,
          msg: issue.message,
          type: issue.inclusive ? 'greater_than_equal' : 'greater_than',
          input,
          ctx: { [bound]: Number(issue.minimum) },
        },
      ];
    }
    case 'too_big': {
      if (issue.origin === 'string')
        return [
          { loc, msg: issue.message, type: 'string_too_long', input, ctx: { max_length: Number(issue.maximum) } },
        ];
      if (issue.origin === 'array')
        return [{ loc, msg: issue.message, type: 'too_long', input, ctx: { max_length: Number(issue.maximum) } }];
      const bound = issue.inclusive ? 'le' : 'lt';
      return [
        {
          loc,
          msg: issue.message,
          type: issue.inclusive ? 'less_than_equal' : 'less_than',
          input,
          ctx: { [bound]: Number(issue.maximum) },
        },
      ];
    }
    case 'invalid_format':
      if (issue.format === 'regex')
        return [
          { loc, msg: issue.message, type: 'string_pattern_mismatch', input, ctx: { pattern: issue.pattern ?? '' } },
        ];
      return [{ loc, msg: issue.message, type: `${issue.format}_parsing`, input, ctx: { format: issue.format } }];
    case 'invalid_value':
      return [{ loc, msg: issue.message, type: 'enum', input, ctx: { expected: issue.values.map(String).join(', ') } }];
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({
        loc: [...loc, key],
        msg: 'Extra inputs are not permitted',
        type: 'extra_forbidden',
        input: valueAt(input, [key]),
        ctx: {},
      }));
    case 'invalid_union':
      return [{ loc, msg: issue.message, type: 'union_tag_invalid', input, ctx: {} }];
    case 'not_multiple_of':
      return [{ loc, msg: issue.message, type: 'multiple_of', input, ctx: { multiple_of: Number(issue.divisor) } }];
    default:
      return [{ loc, msg: issue.message, type: 'value_error', input, ctx: {} }];
  }
}
