/**
 * One JSON call to the simulator, shared by the mock-card connector and the 3-D Secure directory adapter.
 * Refused connections and 5xx throw a retriable ConnectorUnavailableError, 4xx (unless accepted) and non-JSON a
 * ConnectorRequestRejectedError; a timeout or a connection lost after sending is `unknown`, since the simulator may
 * have acted on the request: each caller decides what that means for its operation.
 */
import { markFailed, setAttributes, SpanKind, tracingEnabled, withSpan, type Span } from '@switchyard/telemetry';
import { ConnectorRequestRejectedError, ConnectorUnavailableError } from '../connector-errors';
import { notSentCode, type ProviderFetch } from '../provider-fetch';

export interface SimulatorEndpoint {
  /** Names the provider in error messages, e.g. `mock-card`. */
  readonly name: string;
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** How the call is made; default the global fetch. */
  readonly fetch?: ProviderFetch;
}

/** `unknown`: no answer; `timedOut` when none came within `timeoutMs` (else the connection broke after sending). */
export type HttpAnswer<T> =
  | { readonly kind: 'answer'; readonly status: number; readonly body: T }
  | { readonly kind: 'unknown'; readonly timedOut: boolean };

/** Error codes that never reached the provider's decision (connection refused before sending). */

/** The path with its ids as `{id}` and without its query: a span name that does not grow with the traffic. */
export function urlTemplate(path: string): string {
  const pathname = path.split('?')[0] ?? path;
  return pathname.replace(/[^/]+/g, (segment) =>
    /^(v\d+|[a-z]+(-[a-z]+)*)$/.test(segment) && segment.length <= 40 ? segment : '{id}',
  );
}

/** One call, as a client span (`POST /v1/authorizations`): method, path template, host, status — never the body. */
export function callSimulator<T>(
  endpoint: SimulatorEndpoint,
  method: 'GET' | 'POST',
  path: string,
  body: unknown,
  acceptedStatuses: readonly number[] = [],
): Promise<HttpAnswer<T>> {
  if (!tracingEnabled()) return send<T>(endpoint, method, path, body, acceptedStatuses);
  const url = new URL(path, endpoint.baseUrl);
  const template = urlTemplate(path);
  const attributes = {
    'http.request.method': method,
    'url.template': template,
    'server.address': url.hostname,
    'server.port': Number(url.port) || undefined,
    provider: endpoint.name,
  };
  return withSpan(`${method} ${template}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const answer = await send<T>(endpoint, method, path, body, acceptedStatuses, span);
    if (answer.kind === 'unknown') markFailed(span, { type: answer.timedOut ? 'timeout' : 'connection_lost' });
    return answer;
  });
}

async function send<T>(
  endpoint: SimulatorEndpoint,
  method: 'GET' | 'POST',
  path: string,
  body: unknown,
  acceptedStatuses: readonly number[],
  span?: Span,
): Promise<HttpAnswer<T>> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), endpoint.timeoutMs);
  const call = `${method} ${path}`;
  try {
    const response = await (endpoint.fetch ?? fetch)(new URL(path, endpoint.baseUrl), {
      method,
      headers: { 'content-type': 'application/json', accept: 'application/json', ...endpoint.headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: controller.signal,
    });
    if (span) setAttributes(span, { 'http.response.status_code': response.status });
    const text = await response.text();
    if (response.status >= 500) {
      throw new ConnectorUnavailableError(
        `${endpoint.name} answered ${response.status} to ${call}`,
        true,
        response.status,
      );
    }
    if (response.status >= 400 && !acceptedStatuses.includes(response.status)) {
      throw new ConnectorRequestRejectedError(
        `${endpoint.name} answered ${response.status} to ${call}: ${text}`,
        response.status,
      );
    }
    try {
      return { kind: 'answer', status: response.status, body: JSON.parse(text) as T };
    } catch (cause) {
      throw new ConnectorRequestRejectedError(`${endpoint.name} answered non-JSON to ${call}`, response.status, {
        cause,
      });
    }
  } catch (error) {
    if (error instanceof ConnectorUnavailableError || error instanceof ConnectorRequestRejectedError) throw error;
    if (controller.signal.aborted) return { kind: 'unknown', timedOut: true };
    const code = notSentCode(error);
    if (code) {
      throw new ConnectorUnavailableError(`${endpoint.name} unreachable (${code})`, true, undefined, { cause: error });
    }
    // The connection broke after the request may have been sent: the provider may have acted on it.
    return { kind: 'unknown', timedOut: false };
  } finally {
    clearTimeout(timer);
  }
}
