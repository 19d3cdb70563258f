import { MAX_TOKEN_LENGTH, repeatedMemberName, tokenShapeProblem } from './token-shape';

const b64 = (text: string) => Buffer.from(text).toString('base64url');

describe('repeatedMemberName', () => {
  it.each([
    ['{"a":1,"b":2}', null],
    ['{"a":{"a":1},"b":[{"a":1},{"a":2}]}', null],
    ['{"a":"\\"a\\"","b":"a,b:{\\"a\\""}', null],
    ['[{"a":1},{"a":1}]', null],
    ['{}', null],
    ['{"a":1,"a":2}', 'a'],
    ['{ "scopes" : [] , "exp":1, "scopes":["x"] }', 'scopes'],
    ['{"embed":{"amount":1,"amount":2}}', 'amount'],
    ['{"a":[1,{"b":1,"b":2}]}', 'b'],
    ['{"a":1,"\\u0061":2}', 'a'],
  ])('%s → %s', (text, repeated) => {
    expect(repeatedMemberName(text)).toBe(repeated);
  });
});

describe('tokenShapeProblem', () => {
  it('accepts an ordinary token and refuses one past the length limit', () => {
    const token = `${b64('{"alg":"ES512","kid":"k"}')}.${b64('{"scopes":["*.read"],"exp":1}')}.sig`;
    expect(tokenShapeProblem(token)).toBeNull();
    expect(tokenShapeProblem('a'.repeat(MAX_TOKEN_LENGTH))).toBeNull();
    expect(tokenShapeProblem('a'.repeat(MAX_TOKEN_LENGTH + 1))).toMatch(/longer than/);
  });

  it('names the part and the member repeated', () => {
    expect(tokenShapeProblem(`${b64('{"alg":"none","alg":"ES512"}')}.${b64('{}')}.sig`)).toBe(
      'the token header repeats the member "alg"',
    );
    expect(tokenShapeProblem(`${b64('{"alg":"ES512"}')}.${b64('{"exp":1,"exp":2}')}.sig`)).toBe(
      'the token claims repeats the member "exp"',
    );
  });
});
