import { z } from 'zod';
import { MAX_ECHOED_INPUT_DEPTH, RequestValidationError, validate } from './validation';

const issuesOf = (schema: z.ZodType, value: unknown) => {
  try {
    validate(schema, value, 'body');
  } catch (error) {
    return (error as RequestValidationError).toBody().detail;
  }
  throw new Error('valid');
};

describe('the input a validation issue echoes', () => {
  it(`is cut below ${MAX_ECHOED_INPUT_DEPTH} levels, so that any parsed body renders (10,000 levels deep: a 422, not a stack overflow)`, () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    const [issue] = issuesOf(z.object({ amount: z.number() }), { amount: deep });
    expect(() => JSON.stringify(issue)).not.toThrow();
    let level = issue!.input;
    for (let i = 0; i < MAX_ECHOED_INPUT_DEPTH; i++) level = (level as unknown[])[0];
    expect(level).toBe('[nested too deep]');
  });

  it('never carries a card or gift card number, a PIN or a security code back, at any depth', () => {
    const card = z.object({ number: z.string().regex(/^\d{16}$/), security_code: z.string().max(4) });
    const [number, code] = issuesOf(card, { number: '411111111111111', security_code: '12345' });
    expect(number?.input).toBe('[redacted]');
    expect(code?.input).toBe('[redacted]');
    const gifts = z.object({
      gift_cards: z
        .array(z.object({ number: z.string(), pin: z.string(), amount: z.number() }))
        .refine(() => false, 'amounts do not add up'),
    });
    const [total] = issuesOf(gifts, { gift_cards: [{ number: '6060601234567890', pin: '05000', amount: 100 }] });
    expect(total?.input).toEqual([{ number: '[redacted]', pin: '[redacted]', amount: 100 }]);
    expect(JSON.stringify(total)).not.toContain('6060601234567890');
  });

  it('masks card data inside echoed strings: a body sent as a JSON string, a number under another name', () => {
    const fields = z.object({ payment_method: z.object({ number: z.string() }) });
    const doubleEncoded = JSON.stringify({
      payment_method: { method: 'card', number: '5200000000001203', expiration_date: '02/14', security_code: '123' },
    });
    const [root] = issuesOf(fields, doubleEncoded);
    expect(root?.input).toBe(
      '{"payment_method":{"method":"card","number":"[redacted]","expiration_date":"02/14","security_code":"[redacted]"}}',
    );
    const [other] = issuesOf(z.object({ reference: z.string().max(5) }), {
      reference: 'card 4111 1111 1111 1111 and 4111-1111-1111-1111',
    });
    expect(other?.input).toBe('card [redacted] and [redacted]');
    const [short] = issuesOf(z.object({ reference: z.string().max(5) }), { reference: 'order 12345678901' });
    expect(short?.input).toBe('order 12345678901'); // 11 digits: not a card number
  });
});

describe('fields the schema marks write-only (passwords, keys, credentials)', () => {
  const secret = z.string().min(8).meta({ writeOnly: true });
  const schema = z.object({
    auth: z.object({ username: z.string(), password: secret }).strict().nullish(),
    fields: z.array(z.object({ key: z.string(), value: z.string().max(3).meta({ writeOnly: true }) })),
  });

  it('are never echoed: not their own issue, not inside a parent object the issue is about', () => {
    const issues = issuesOf(schema, {
      auth: { username: 'ops', password: 'hunter2', extra: 1 },
      fields: [{ key: 'api_key', value: 'sk_live_1' }],
    });
    expect(JSON.stringify(issues)).not.toContain('hunter2');
    expect(JSON.stringify(issues)).not.toContain('sk_live_1');
    expect(issues.find((issue) => issue.loc.join('.') === 'body.auth.password')?.input).toBe('[redacted]');
    expect(issues.find((issue) => issue.loc.join('.') === 'body.fields.0.value')?.input).toBe('[redacted]');
    const [parent] = issuesOf(z.object({ auth: schema.shape.auth.refine(() => false, 'no') }), {
      auth: { username: 'ops', password: 'longenough' },
    });
    expect(parent?.input).toEqual({ username: 'ops', password: '[redacted]' });
  });

  it('are redacted by where they are in the schema, whatever their name', () => {
    const [issue] = issuesOf(z.object({ credentials: z.object({ token: secret, n: z.number() }) }), {
      credentials: { token: 'abcdefghij', n: 'x' },
    });
    expect(issue?.input).toBe('x');
    const [whole] = issuesOf(z.object({ credentials: z.object({ token: secret }).refine(() => false) }), {
      credentials: { token: 'abcdefghij' },
    });
    expect(whole?.input).toEqual({ token: '[redacted]' });
  });
});

it("echoes a body whose keys are Object.prototype's names (constructor, toString) without throwing", () => {
  // Found by the hostile-input suite: `shape[key]` read the prototype's `constructor` as a schema (500, not 422).
  const [issue] = issuesOf(z.object({ name: z.string() }), { constructor: 'x', toString: 1, name: 3 });
  expect(issue).toMatchObject({ loc: ['body', 'name'], input: 3 });
  const [nested] = issuesOf(z.object({ a: z.object({ n: z.number() }) }), { a: { constructor: 'x', n: 'y' } });
  expect(nested).toMatchObject({ loc: ['body', 'a', 'n'], input: 'y' });
});
