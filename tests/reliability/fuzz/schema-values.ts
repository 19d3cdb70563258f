/**
 * Values for a JSON schema of the OpenAPI document: mostly valid (so that requests get past validation into the
 * services, with ids that exist), then mutated at one random place — a hostile value, a wrong type, a missing
 * required field, an unknown field.
 */
import fc from 'fast-check';
import type { JsonSchema, OpenApiModel } from './openapi-model';
import { anyJsonValue, hostileNumber, hostileString } from './hostile-values';

export interface ValueContext {
  readonly model: OpenApiModel;
  /** Ids that exist, by the property or parameter name that holds them (`transaction_id`, `payment_service_id`, ...). */
  readonly idsByName: Readonly<Record<string, readonly string[]>>;
  /** Every id that exists. */
  readonly allIds: readonly string[];
  /** Card numbers the simulator knows (Luhn-valid). */
  readonly cardNumbers: readonly string[];
}

/**
 * Amounts that stay clear of the simulator's scenario amounts (500001–501999: pending, timeouts of 30 s, slow
 * answers): the fuzz is about input handling, the fault suite covers the provider's misbehaviour.
 */
const ordinaryAmount = fc.oneof(
  fc.integer({ min: 1, max: 199_999 }),
  fc.integer({ min: 502_000, max: 99_999_999 }),
  fc.constantFrom(1, 100, 1_000, 1_299, 5_000, 99_999_999),
);

const ABSENT = Symbol('absent');

/** Values the fixtures' connections take, most of the time: a random currency or country is refused at once. */
const likelyValues: Readonly<Record<string, fc.Arbitrary<string>>> = {
  currency: fc.constantFrom('USD', 'USD', 'EUR'),
  country: fc.constantFrom('US', 'DE'),
};

const typesOf = (schema: JsonSchema): readonly string[] =>
  schema.type === undefined ? [] : typeof schema.type === 'string' ? [schema.type] : schema.type;

/** A valid value of `schema` (as far as a schema can tell: the services check more). */
export function validValue(context: ValueContext, schema: JsonSchema, name = '', depth = 0): fc.Arbitrary<unknown> {
  const resolved = context.model.resolve(schema);
  if (depth > 8) return fc.constant(null);
  const alternatives = resolved.oneOf ?? resolved.anyOf;
  // The first alternative three times as often as each other one: it is the common case (a card payment method).
  if (alternatives)
    return fc.oneof(
      ...alternatives.map((alternative, index) => ({
        weight: index === 0 ? 3 : 1,
        arbitrary: validValue(context, alternative, name, depth + 1),
      })),
    );
  if (resolved.allOf?.[0]) return validValue(context, resolved.allOf[0], name, depth + 1);
  if (resolved.const !== undefined) return fc.constant(resolved.const);
  if (resolved.enum) return fc.constantFrom(...resolved.enum);
  const types = typesOf(resolved);
  if (types.length > 1)
    return fc.oneof(...types.map((type) => validValue(context, { ...resolved, type }, name, depth + 1)));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number': {
      if (/amount/.test(name) && (resolved.maximum ?? Infinity) >= 1_000_000) return ordinaryAmount;
      const min = resolved.minimum ?? -1_000_000;
      const max = resolved.maximum ?? 1_000_000;
      return types[0] === 'integer' ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true });
    }
    case 'string':
      return validString(context, resolved, name);
    case 'array': {
      const item = resolved.items ? validValue(context, resolved.items, singular(name), depth + 1) : anyJsonValue;
      const minLength = resolved.minItems ?? 0;
      return fc.array(item, { minLength, maxLength: Math.max(minLength, Math.min(resolved.maxItems ?? 3, 3)) });
    }
    case 'object': {
      const properties = resolved.properties ?? {};
      const keys = Object.keys(properties);
      if (keys.length === 0) {
        const additional =
          typeof resolved.additionalProperties === 'object'
            ? validValue(context, resolved.additionalProperties, name, depth + 1)
            : anyJsonValue;
        return fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), additional, { maxKeys: 3 });
      }
      // Optional fields one time in four: every one of them is a chance for the services to refuse, and valid
      // bodies should reach as deep as they can.
      const required = new Set(resolved.required ?? []);
      const fields = keys.map((key) => {
        const value = validValue(context, properties[key]!, key, depth + 1);
        return required.has(key)
          ? value
          : fc.oneof({ weight: 3, arbitrary: fc.constant(ABSENT) }, { weight: 1, arbitrary: value });
      });
      return fc
        .tuple(...fields)
        .map((values) =>
          Object.fromEntries(keys.map((key, i) => [key, values[i]]).filter(([, value]) => value !== ABSENT)),
        );
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

const singular = (name: string) => (name.endsWith('_ids') ? name.slice(0, -1) : name);

function validString(context: ValueContext, schema: JsonSchema, name: string): fc.Arbitrary<string> {
  const ids = context.idsByName[name];
  if (schema.format === 'uuid')
    return ids ? fc.oneof(fc.constantFrom(...ids), fc.uuid()) : fc.oneof(fc.constantFrom(...context.allIds), fc.uuid());
  if (ids) return fc.constantFrom(...ids);
  const likely = likelyValues[name];
  if (likely && schema.pattern)
    return fc.oneof(
      { weight: 4, arbitrary: likely },
      { weight: 1, arbitrary: fc.stringMatching(new RegExp(schema.pattern)) },
    );
  // Loopback only: no request may make the service call anything else (webhook targets, redirect and return URLs).
  if (schema.format === 'uri') {
    const loopback = ['http://127.0.0.1:9/return', 'https://127.0.0.1/hooks/a?b=c', 'http://127.0.0.1:1/'];
    // A webhook target (`url`) may also point off this machine (192.0.2.0/24 is TEST-NET-1, never routed) in forms
    // the service refuses whatever WEBHOOK_ALLOW_PRIVATE_URLS says, so that the check that every stored target is on
    // 127.0.0.1 has something to catch. Redirect and return URLs stay on loopback.
    if (name !== 'url') return fc.constantFrom(...loopback);
    return fc.constantFrom(
      ...loopback,
      'ftp://192.0.2.1/hooks',
      'http://user:secret@192.0.2.1/hooks',
      'file:///etc/passwd',
      'javascript:alert(1)',
    );
  }
  if (schema.format === 'date-time')
    return fc
      .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
      .map((date) => date.toISOString());
  if (schema.pattern === '^\\d{12,19}$' && name === 'number') return fc.constantFrom(...context.cardNumbers);
  if (name === 'security_code') return fc.constantFrom('123', '1234', '222', '333');
  if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern));
  const minLength = schema.minLength ?? 0;
  return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(schema.maxLength ?? 30, 30)) });
}

type Path = readonly (string | number)[];

/** Every place in a JSON value (the root too), depth first. */
function placesIn(value: unknown, path: Path = [], out: Path[] = []): Path[] {
  out.push(path);
  if (Array.isArray(value)) value.forEach((item, index) => placesIn(item, [...path, index], out));
  else if (value !== null && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) placesIn(item, [...path, key], out);
  return out;
}

function setAt(
  root: unknown,
  path: Path,
  update: (container: Record<string | number, unknown>, key: string | number) => void,
): unknown {
  if (path.length === 0) return root;
  const copy = structuredClone(root);
  let container = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) container = container[key] as Record<string | number, unknown>;
  update(container, path[path.length - 1]!);
  return copy;
}

export type Mutation = 'replace' | 'delete' | 'extra-field' | 'wrong-type-root';

/** `value` with one mutation at the `index`-th place (modulo the number of places). */
export function mutate(value: unknown, mutation: Mutation, index: number, hostile: unknown): unknown {
  const places = placesIn(value);
  const place = places[index % places.length]!;
  switch (mutation) {
    case 'wrong-type-root':
      return hostile;
    case 'replace':
      return place.length === 0 ? hostile : setAt(value, place, (container, key) => (container[key] = hostile));
    case 'delete':
      return place.length === 0
        ? value
        : setAt(value, place, (container, key) =>
            Array.isArray(container) ? container.splice(Number(key), 1) : delete container[key],
          );
    case 'extra-field': {
      const objects = places.filter((candidate) => {
        const target = candidate.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], value);
        return target !== null && typeof target === 'object' && !Array.isArray(target);
      });
      const target = objects[index % Math.max(1, objects.length)];
      if (target === undefined) return value;
      const key = typeof hostile === 'string' && hostile.length < 100 ? hostile : 'unexpected_field';
      if (target.length === 0) return { ...(value as object), [key]: hostile };
      return setAt(value, target, (container, k) => (container[k] = { ...(container[k] as object), [key]: hostile }));
    }
  }
}

/** A value of `schema`: valid about one time in five, else mutated at one place. */
export function fuzzedValue(context: ValueContext, schema: JsonSchema, name = ''): fc.Arbitrary<unknown> {
  const valid = validValue(context, schema, name);
  const hostile = fc.oneof(
    { weight: 3, arbitrary: hostileString },
    { weight: 3, arbitrary: hostileNumber },
    { weight: 2, arbitrary: anyJsonValue },
  );
  return fc.oneof(
    { weight: 1, arbitrary: valid },
    {
      weight: 4,
      arbitrary: fc
        .tuple(
          valid,
          fc.constantFrom<Mutation>('replace', 'replace', 'replace', 'delete', 'extra-field', 'wrong-type-root'),
          fc.nat(),
          hostile,
        )
        .map(([value, mutation, index, replacement]) => mutate(value, mutation, index, replacement)),
    },
  );
}
