import { fieldsBody, frameParams, isOrigin, refusalMessage, storedMethodBody } from './frame';

const session = '6f1c1f64-8c1e-4a55-9a0c-3f3e0c7b2a10';
const channel = '0123456789abcdef0123456789abcdef';
const query = (params: Record<string, string>) => `?${new URLSearchParams(params).toString()}`;
const now = new Date(2026, 4, 15);

describe('the frame’s parameters', () => {
  it('are the field, the session, the merchant page’s origin and the channel', () => {
    expect(frameParams(query({ field: 'number', session, parent: 'https://shop.example', channel }))).toEqual({
      field: 'number',
      session,
      parent: 'https://shop.example',
      channel,
      placeholder: null,
    });
    expect(
      frameParams(
        query({ field: 'security_code', session, parent: 'http://localhost:3000', channel, placeholder: 'CVV' }),
      )?.placeholder,
    ).toBe('CVV');
  });

  it.each([
    { field: 'pan', session, parent: 'https://shop.example', channel },
    { session, parent: 'https://shop.example', channel },
    { field: 'number', session: 'not-a-session', parent: 'https://shop.example', channel },
    { field: 'number', session, parent: '*', channel },
    { field: 'number', session, parent: 'https://shop.example/checkout', channel },
    { field: 'number', session, parent: 'javascript:alert(1)', channel },
    { field: 'number', session, parent: 'https://shop.example', channel: 'short' },
    { field: 'number', session, parent: 'https://shop.example', channel: `${channel}<script>` },
  ])('refuse %j', (params) => {
    expect(frameParams(query(params as Record<string, string>))).toBeNull();
  });

  it('take only an origin as the parent: scheme, host and port', () => {
    expect(isOrigin('https://shop.example')).toBe(true);
    expect(isOrigin('http://127.0.0.1:8080')).toBe(true);
    expect(isOrigin('https://shop.example/')).toBe(false);
    expect(isOrigin('null')).toBe(false);
    expect(isOrigin('file:///tmp')).toBe(false);
  });
});

describe('the fields body the card number frame posts', () => {
  it('holds the number’s digits, the expiry as MM/YY and the security code', () => {
    expect(fieldsBody({ number: '4111 1111 1111 1111', expiry: '12/28', securityCode: '123' }, 'visa', now)).toEqual({
      ok: true,
      body: {
        payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/28', security_code: '123' },
      },
    });
  });

  it('leaves the security code out when the page added no such field', () => {
    expect(fieldsBody({ number: '4111111111111111', expiry: '12/28', securityCode: undefined }, 'visa', now)).toEqual({
      ok: true,
      body: { payment_method: { method: 'card', number: '4111111111111111', expiration_date: '12/28' } },
    });
  });

  it('is not sent when a field is not valid, and the reason names the field, never its value', () => {
    expect(fieldsBody({ number: '4111 1111 1111 1112', expiry: '12/28', securityCode: '123' }, 'visa', now)).toEqual({
      ok: false,
      message: 'The card number is not valid',
    });
    expect(fieldsBody({ number: '4111111111111111', expiry: '04/26', securityCode: '123' }, 'visa', now)).toEqual({
      ok: false,
      message: 'The expiry date is not valid',
    });
    expect(fieldsBody({ number: '4111111111111111', expiry: undefined, securityCode: '123' }, 'visa', now)).toEqual({
      ok: false,
      message: 'The expiry date field is missing',
    });
    expect(fieldsBody({ number: '378282246310005', expiry: '12/28', securityCode: '123' }, 'amex', now)).toEqual({
      ok: false,
      message: 'The security code is not valid',
    });
  });
});

describe('the fields body the security code frame posts for a stored payment method', () => {
  const paymentMethodId = '0b7c1a52-31f4-4d8e-9a5b-2c6d8e9f0a1b';

  it('holds the method’s id and the security code typed again', () => {
    expect(storedMethodBody(paymentMethodId, '123', null)).toEqual({
      ok: true,
      body: { payment_method: { method: 'id', id: paymentMethodId, security_code: '123' } },
    });
    expect(storedMethodBody(paymentMethodId, '1234', null)).toMatchObject({ ok: true });
  });

  it('is not sent with a code not valid (for the scheme, when told) or an id that is not one', () => {
    const invalidCode = { ok: false, message: 'The security code is not valid' };
    expect(storedMethodBody(paymentMethodId, '12', null)).toEqual(invalidCode);
    expect(storedMethodBody(paymentMethodId, '1234', 'visa')).toEqual(invalidCode);
    const invalidId = { ok: false, message: 'The payment method is not valid' };
    expect(storedMethodBody('not-an-id', '123', null)).toEqual(invalidId);
  });
});

describe('a refusal, told to the merchant’s page', () => {
  it('is the spec error body’s message', () => {
    expect(
      refusalMessage(400, {
        type: 'error',
        code: 'bad_request',
        status: 400,
        message: 'The checkout session has expired',
        details: [],
      }),
    ).toBe('The checkout session has expired');
    expect(
      refusalMessage(404, {
        type: 'error',
        code: 'not_found',
        status: 404,
        message: 'The resource could not be found',
        details: [],
      }),
    ).toBe('The resource could not be found');
    expect(
      refusalMessage(429, { type: 'error', code: 'too_many_requests', status: 429, message: 'x', details: [] }),
    ).toMatch(/^Too many attempts/);
    expect(refusalMessage(502, null)).toBe('The service answered HTTP 502');
  });

  it('of a 422 names the fields and problems but never echoes the input', () => {
    const message = refusalMessage(422, {
      detail: [
        {
          loc: ['body', 'payment_method', 'number'],
          msg: 'must be 12 to 19 digits',
          type: 'string_pattern_mismatch',
          input: '41111111111111111111',
          ctx: {},
        },
      ],
    });
    expect(message).toBe('The card data was refused (payment_method.number: must be 12 to 19 digits)');
    expect(message).not.toContain('4111');
  });
});
