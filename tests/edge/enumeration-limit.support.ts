/**
 * What the enumeration-limit acceptance specs share (embedded and distributed): sending requests until the limit
 * refuses one, and the one assertion every such run must satisfy.
 *
 * The limiter is GCRA (docs/rate-limits.md): a fresh bucket lets LIMIT requests through at once, then gives one back
 * every 60 s / LIMIT (1.2 s at 50). The requests of a test take time, so by its last one up to
 * floor(elapsed / interval) requests may have come back. The assertion allows exactly that many more: on a machine
 * where the 50 requests take less than 1.2 s (a few hundred ms here) it is "50 pass, the 51st is 429" exactly, and
 * on a slower one it still holds the limiter to its rate, in both directions, without asserting how long anything took.
 */
import { expectErrorBody } from '@switchyard/testing';

export const LIMIT = 50;
export const INTERVAL_MS = 60_000 / LIMIT;

export interface Answer {
  readonly status: number;
  readonly retryAfter: string | null;
  readonly body: unknown;
  /** Which endpoint or gateway answered, for failure messages. */
  readonly label: string;
}

export interface Run {
  /** Every answer, in order. */
  readonly answers: readonly Answer[];
  /** How many were let through before the first 429 (the limiter's decision, whatever the endpoint answered). */
  readonly passed: number;
  /** From before the first request to after the last answer: an upper bound of the time the limiter counted over. */
  readonly elapsedMs: number;
}

export async function fetchAnswer(label: string, url: string, init: RequestInit): Promise<Answer> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text for the failure message
  }
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body, label };
}

/**
 * Sends `send(0)`, `send(1)`, … one after another until `refusals` answers have been 429 — or, with `until`, until it
 * holds for the answers so far — (at most `max` requests), so a spec can also see that the next request to another
 * endpoint or gateway is refused as well.
 */
export async function sendUntilRefused(
  send: (index: number) => Promise<Answer>,
  options: { refusals?: number; max?: number; until?: (answers: readonly Answer[]) => boolean } = {},
): Promise<Run> {
  const refusals = options.refusals ?? 1;
  const max = options.max ?? 3 * LIMIT;
  const answers: Answer[] = [];
  const started = performance.now();
  let refused = 0;
  const done = () => (options.until ? options.until(answers) : refused >= refusals);
  while (!done() && answers.length < max) {
    const answer = await send(answers.length);
    answers.push(answer);
    if (answer.status === 429) refused += 1;
  }
  const elapsedMs = performance.now() - started;
  const firstRefusal = answers.findIndex((answer) => answer.status === 429);
  return { answers, passed: firstRefusal === -1 ? answers.length : firstRefusal, elapsedMs };
}

const describeRun = (run: Run): string =>
  `${run.answers.length} requests in ${Math.round(run.elapsedMs)} ms: ` +
  run.answers.map((answer, index) => `#${index + 1} ${answer.label} ${answer.status}`).join(', ');

/**
 * LIMIT requests pass the limiter (their own answers are the endpoints' business, but never a 5xx), then every
 * request is refused with 429 `too_many_requests` in the spec's body and a Retry-After of whole seconds — allowing
 * only the requests GCRA gives back while the test ran (see above).
 */
export function expectLimited(run: Run, processes?: () => string): void {
  const comeBack = Math.floor(run.elapsedMs / INTERVAL_MS);
  const context = describeRun(run) + (processes ? `\n${processes()}` : '');
  expect(run.passed, context).toBeGreaterThanOrEqual(LIMIT);
  const refusals = run.answers.filter((answer) => answer.status === 429);
  expect(refusals.length, context).toBeGreaterThan(0);
  // Over the whole run (before and after the first refusal), at most what came back passes beyond the burst.
  expect(run.answers.length - refusals.length, context).toBeLessThanOrEqual(LIMIT + comeBack);
  for (const answer of run.answers) expect(answer.status, context).toBeLessThan(500);
  for (const refusal of refusals) {
    expectErrorBody(refusal.body, 429, 'too_many_requests');
    expect(refusal.retryAfter, context).toMatch(/^\d+$/);
    // One request comes back within one emission interval: 1.2 s, rounded up to 2.
    expect(Number(refusal.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(refusal.retryAfter)).toBeLessThanOrEqual(Math.ceil(INTERVAL_MS / 1000));
  }
}

/** Every answer went through the limiter untouched: no 429, no 5xx. */
export function expectNeverLimited(answers: readonly Answer[]): void {
  const limited = answers.filter((answer) => answer.status === 429 || answer.status >= 500);
  expect(limited.map((answer) => `${answer.label} ${answer.status}`)).toEqual([]);
}
