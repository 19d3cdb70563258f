import { crossOriginProblem, originOf } from './same-origin';
import { sessionIdOf, SESSION_COOKIE } from './session-cookie';

const own = ['http://127.0.0.1:8080', 'https://pay.example.com'];

describe('a state-changing request', () => {
  it.each([
    [{ origin: 'http://127.0.0.1:8080' }],
    [{ origin: 'HTTPS://pay.example.com' }],
    [{ 'sec-fetch-site': 'same-origin' }],
    [{ 'sec-fetch-site': 'same-origin', origin: 'https://pay.example.com' }],
  ])('from the dashboard itself passes: %j', (headers) => expect(crossOriginProblem(headers, own)).toBeNull());

  it.each([
    [{ origin: 'https://evil.example' }, /another origin/],
    [{ origin: 'http://127.0.0.1:8081' }, /another origin/],
    [{ origin: 'null' }, /another origin/],
    [{ 'sec-fetch-site': 'cross-site' }, /another site/],
    [{ 'sec-fetch-site': 'same-site', origin: 'https://pay.example.com' }, /another site/],
    [{ 'sec-fetch-site': 'none' }, /another site/],
    [{ 'sec-fetch-site': 'same-origin', origin: 'https://evil.example' }, /another origin/],
    [{}, /must carry Origin or Sec-Fetch-Site/],
  ])('from elsewhere, or from nowhere it says, is refused: %j', (headers, reason) =>
    expect(crossOriginProblem(headers, own)).toMatch(reason),
  );
});

it('takes the origin of a URL, lower-cased, and nothing of what is not one', () => {
  expect(originOf('https://Pay.Example.com/base/')).toBe('https://pay.example.com');
  expect(originOf('not a url')).toBeUndefined();
});

it('reads the session id among other cookies', () => {
  expect(sessionIdOf(`a=1; ${SESSION_COOKIE}=abc; b=2`)).toBe('abc');
  expect(sessionIdOf('a=1')).toBeUndefined();
  expect(sessionIdOf(undefined)).toBeUndefined();
});
