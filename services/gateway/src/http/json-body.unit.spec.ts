import { parseJsonBody } from './json-body';

describe('the JSON body parser', () => {
  it.each(['', '   ', '\n'])('reads an empty body (%j) as {}', (text) => expect(parseJsonBody(text)).toEqual({}));
  it('parses JSON', () =>
    expect(parseJsonBody('{"amount": 1299, "items": [1, 2]}')).toEqual({ amount: 1299, items: [1, 2] }));
  it.each(['{', '{"a": }', 'undefined', "{'a': 1}"])('refuses %j with a 400', (text) =>
    expect(() => parseJsonBody(text)).toThrow(
      expect.objectContaining({ statusCode: 400, message: 'The request body is not valid JSON' }),
    ),
  );
  it('refuses prototype pollution instead of dropping it silently', () => {
    expect(() => parseJsonBody('{"__proto__": {"admin": true}}')).toThrow(expect.objectContaining({ statusCode: 400 }));
    expect(() => parseJsonBody('{"constructor": {"prototype": {"admin": true}}}')).toThrow(
      expect.objectContaining({ statusCode: 400 }),
    );
  });
});
