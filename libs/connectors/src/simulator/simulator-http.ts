/**
 * The simulator server's HTTP plumbing: request bodies (JSON, or forms from its HTML pages), answers, and failures
 * rendered as JSON for API callers and as an HTML page for a browser.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorPage } from './simulator-pages';

/** A client mistake or an outage, answered with `{ error: code, message }` (or an error page to a browser). */
export class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface RouteAnswer {
  readonly status: number;
  /** JSON unless `contentType` says otherwise; absent: no body (204, 303). */
  readonly body?: unknown;
  readonly contentType?: 'application/json' | 'text/html; charset=utf-8' | 'text/csv';
  /** Sent as `Location` (303). */
  readonly location?: string;
}

export const html = (body: string): RouteAnswer => ({ status: 200, body, contentType: 'text/html; charset=utf-8' });

export function requireAmount(amount: unknown): void {
  if (typeof amount !== 'number' || !Number.isInteger(amount) || amount <= 0) {
    throw new HttpFailure(400, 'invalid_request', 'amount must be a positive integer in minor units');
  }
}

export function requireCurrency(currency: unknown): void {
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency))
    throw new HttpFailure(400, 'invalid_request', 'currency must be ISO 4217');
}

/** Each named field of `value` must be a non-empty string; `prefix` names the object in the message. */
export function requireText(value: unknown, fields: readonly string[], prefix = ''): void {
  const record = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const missing = fields.filter((field) => typeof record[field] !== 'string' || record[field] === '');
  if (missing.length > 0)
    throw new HttpFailure(400, 'invalid_request', `${missing.map((field) => prefix + field).join(', ')} required`);
}

/** `url` with `name=value` set in its query, keeping the parameters it already has. */
export function withQueryParameter(url: string, name: string, value: string): string {
  const target = new URL(url);
  target.searchParams.set(name, value);
  return target.toString();
}

/** The simulator's own address as the caller reached it, for the URLs it hands out (challenge, approval pages). */
export const baseUrlOf = (request: IncomingMessage): string => `http://${request.headers.host ?? 'localhost'}`;

/** JSON, or a form posted by one of the simulator's pages; `{}` when empty. */
export async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return {};
  if (request.headers['content-type']?.startsWith('application/x-www-form-urlencoded'))
    return Object.fromEntries(new URLSearchParams(text));
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpFailure(400, 'invalid_request', 'body is not JSON');
  }
}

export function send(response: ServerResponse, answer: RouteAnswer): void {
  if (response.destroyed || response.writableEnded) return; // the caller gave up (timeout scenario)
  const contentType = answer.contentType ?? 'application/json';
  const text =
    answer.body === undefined
      ? ''
      : contentType === 'application/json'
        ? JSON.stringify(answer.body)
        : String(answer.body);
  response.writeHead(answer.status, {
    ...(answer.body !== undefined && { 'content-type': contentType }),
    'content-length': Buffer.byteLength(text),
    ...(answer.location !== undefined && { location: answer.location }),
  });
  response.end(text);
}

export function sendFailure(request: IncomingMessage, response: ServerResponse, error: unknown): void {
  const failure = error instanceof HttpFailure ? error : new HttpFailure(500, 'internal_error', String(error));
  const browser = request.headers.accept?.includes('text/html') === true;
  send(
    response,
    browser
      ? { ...html(errorPage(failure.code, failure.message)), status: failure.status }
      : { status: failure.status, body: { error: failure.code, message: failure.message } },
  );
}
