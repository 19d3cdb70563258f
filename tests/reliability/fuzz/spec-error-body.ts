/**
 * The one check every 4xx answer passes: the spec's error body (`{type: "error", code, status, message, details}`)
 * or, for 422, the validation body (`{detail: [{loc, msg, type, input, ctx}]}`); JSON; a 405 names the methods
 * allowed, and never the one just refused.
 */
import { errorCodes } from '@switchyard/api';

const ERROR_KEYS = new Set(['type', 'code', 'status', 'message', 'details', 'resource_id']);
const ISSUE_KEYS = new Set(['loc', 'msg', 'type', 'input', 'ctx']);
const LOCATIONS = new Set(['body', 'query', 'path', 'header', 'unknown']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Codes the services use beside the status table: 409 of an Idempotency-Key still in use (`concurrent_request`). */
const EXTRA_CODES: Readonly<Record<number, readonly string[]>> = { 409: ['concurrent_request'] };

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** What is wrong with a 4xx answer, or null when it is the spec's. */
export function errorBodyProblem(
  method: string,
  status: number,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  text: string,
): string | null {
  if (status < 400 || status >= 500) return null;
  if (status === 405) {
    const allow = String(headers.allow ?? '');
    if (allow === '') return '405 without an Allow header';
    if (allow.split(/,\s*/).includes(method.toUpperCase()))
      return `405 for ${method}, which its Allow header (${allow}) permits`;
  }
  // A HEAD answer carries the headers of the GET answer and no body (RFC 9110 §9.3.2).
  if (method.toUpperCase() === 'HEAD') return text === '' ? null : 'HEAD answer with a body';
  if (!/^application\/json\b/i.test(String(headers['content-type'] ?? '')))
    return `content-type ${String(headers['content-type'])}`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return 'body is not JSON';
  }
  if (!isObject(body)) return 'body is not an object';
  return status === 422 ? validationBodyProblem(body) : errorShapeProblem(status, body);
}

function errorShapeProblem(status: number, body: Record<string, unknown>): string | null {
  const extra = Object.keys(body).filter((key) => !ERROR_KEYS.has(key));
  if (extra.length > 0) return `unexpected fields ${extra.join(', ')}`;
  if (body.type !== 'error') return 'type is not "error"';
  if (body.status !== status) return `status field ${String(body.status)} differs from the HTTP status ${status}`;
  if (typeof body.code !== 'string' || body.code === '') return 'no code';
  const expected = (errorCodes as Record<number, string | undefined>)[status];
  if (expected === undefined) return `status ${status} has no code in the spec's table`;
  if (body.code !== expected && !(EXTRA_CODES[status] ?? []).includes(body.code))
    return `code ${body.code} for status ${status} (expected ${expected})`;
  if (typeof body.message !== 'string' || body.message === '') return 'no message';
  if (!Array.isArray(body.details)) return 'details is not an array';
  for (const detail of body.details) {
    if (!isObject(detail)) return 'a detail is not an object';
    if (!LOCATIONS.has(String(detail.location))) return `detail location ${String(detail.location)}`;
    if (typeof detail.pointer !== 'string' || typeof detail.message !== 'string' || typeof detail.type !== 'string')
      return 'a detail lacks pointer, message or type';
  }
  if ('resource_id' in body) {
    if (status !== 409) return 'resource_id outside a 409';
    if (typeof body.resource_id !== 'string' || !UUID.test(body.resource_id)) return 'resource_id is not a uuid';
  }
  return null;
}

function validationBodyProblem(body: Record<string, unknown>): string | null {
  const extra = Object.keys(body).filter((key) => key !== 'detail');
  if (extra.length > 0) return `unexpected fields ${extra.join(', ')}`;
  if (!Array.isArray(body.detail) || body.detail.length === 0) return 'detail is not a non-empty array';
  for (const issue of body.detail) {
    if (!isObject(issue)) return 'an issue is not an object';
    const unexpected = Object.keys(issue).filter((key) => !ISSUE_KEYS.has(key));
    if (unexpected.length > 0) return `unexpected issue fields ${unexpected.join(', ')}`;
    const loc = issue.loc;
    if (
      !Array.isArray(loc) ||
      loc.length === 0 ||
      !loc.every((part) => typeof part === 'string' || typeof part === 'number')
    )
      return 'loc is not an array of strings and numbers';
    if (!['body', 'query', 'path', 'header'].includes(String(loc[0]))) return `loc starts with ${String(loc[0])}`;
    if (typeof issue.msg !== 'string' || typeof issue.type !== 'string') return 'an issue lacks msg or type';
    if (!isObject(issue.ctx)) return 'ctx is not an object';
  }
  return null;
}
