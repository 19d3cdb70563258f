/**
 * A small HTTP client for the reliability suites. `send` makes exactly one attempt and tells a connection error
 * (no answer: never an acknowledgement) from an answer; `read` retries reads through restarts and outages until
 * an answer comes, for the checks that run after the load.
 */
import { sleep } from './random';

export interface HttpAnswer {
  readonly status: number;
  /** The body parsed as JSON, or null when it is not JSON. */
  readonly body: any;
  readonly text: string;
}

export type Attempt =
  | { readonly kind: 'answer'; readonly answer: HttpAnswer }
  | { readonly kind: 'no-answer'; readonly error: string };

export interface SendOptions {
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** Default 30 s: far above any answer of a live service, so that only a dead one gives no answer. */
  readonly timeoutMs?: number;
}

export class ServiceApi {
  /**
   * @param baseUrl where the gateway is (a function: a test may move it between restarts)
   * @param token the bearer token (a function: a test may renew it)
   * @param merchantAccountId sent as `x-service-merchant-account-id`
   */
  constructor(
    private readonly baseUrl: () => string,
    private readonly token: () => string,
    private readonly merchantAccountId = 'default',
  ) {}

  /** One attempt. A connection refused or reset, or a timeout, is `no-answer`. */
  async send(method: string, path: string, options: SendOptions = {}): Promise<Attempt> {
    try {
      const response = await fetch(`${this.baseUrl()}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.token()}`,
          'x-service-merchant-account-id': this.merchantAccountId,
          ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...options.headers,
        },
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      });
      const text = await response.text();
      let body: unknown = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = null;
      }
      return { kind: 'answer', answer: { status: response.status, body, text } };
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      return { kind: 'no-answer', error: cause?.code ?? cause?.message ?? (error as Error).message ?? String(error) };
    }
  }

  /** A read that waits through restarts: retries no-answers and 5xx until `timeoutMs`; any other answer returns. */
  async read(path: string, timeoutMs = 60_000): Promise<HttpAnswer> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      const attempt = await this.send('GET', path);
      if (attempt.kind === 'answer' && attempt.answer.status < 500) return attempt.answer;
      last =
        attempt.kind === 'answer' ? `${attempt.answer.status} ${attempt.answer.text.slice(0, 200)}` : attempt.error;
      await sleep(100);
    }
    throw new Error(`GET ${path}: no usable answer within ${timeoutMs} ms (last: ${last})`);
  }

  /** A read that must answer 200; its body. */
  async get<T>(path: string): Promise<T> {
    const answer = await this.read(path);
    if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status}: ${answer.text.slice(0, 500)}`);
    return answer.body as T;
  }

  /** Every item of a paged list (`limit`, `next_cursor`). */
  async listAll<T>(path: string, limit = 100): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | null = null;
    do {
      const separator = path.includes('?') ? '&' : '?';
      const page: { items: T[]; next_cursor: string | null } = await this.get(
        `${path}${separator}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      items.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor);
    return items;
  }

  /** A write during set-up, which must succeed with `status`. */
  async must<T>(method: string, path: string, status: number, body?: unknown): Promise<T> {
    const attempt = await this.send(method, path, body === undefined ? {} : { body });
    if (attempt.kind !== 'answer') throw new Error(`${method} ${path}: no answer (${attempt.error})`);
    if (attempt.answer.status !== status)
      throw new Error(
        `${method} ${path} answered ${attempt.answer.status}, expected ${status}: ${attempt.answer.text.slice(0, 500)}`,
      );
    return attempt.answer.body as T;
  }
}
