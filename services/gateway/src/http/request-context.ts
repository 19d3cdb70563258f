/**
 * Each HTTP request's context: its request id — the caller's `x-request-id` when well-formed, else a new UUID —,
 * echoed in the response, and the correlation id of everything it causes (the service calls, the events appended,
 * the messages and webhooks that follow); when tracing, its server span (continuing the caller's W3C `traceparent`).
 * The handling runs inside it, so every log line and span on the way finds it; one line per request is logged when
 * it completed (method, route template, status, duration — never the URL's values, a header or a body).
 */
import { randomUUID } from 'node:crypto';
import {
  acceptableId,
  contextFromHeaders,
  markFailed,
  runWithContext,
  setAttributes,
  SpanKind,
  startSpan,
  tracingEnabled,
  type RequestContext,
  type Span,
} from '@switchyard/telemetry';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

export const REQUEST_ID_HEADER = 'x-request-id';

/** Probes and scrapes: no span and no `info` line each (they come every few seconds). */
const quietRoutes = new Set(['/healthz', '/readyz', '/metrics']);

/** `/transactions/:transaction_id` → `/transactions/{transaction_id}`, as the API reference writes it. */
const routeOf = (request: FastifyRequest): string =>
  request.routeOptions.url?.replace(/:(\w+)/g, '{$1}') ?? 'unmatched';

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

export function registerRequestContext(fastify: FastifyInstance, log?: Pick<Logger, 'info' | 'debug'>): void {
  const contexts = new WeakMap<FastifyRequest, RequestContext>();

  fastify.addHook('onRequest', (request, reply, done) => {
    const requestId = acceptableId(header(request, REQUEST_ID_HEADER)) ?? randomUUID();
    reply.header(REQUEST_ID_HEADER, requestId);
    const route = routeOf(request);
    let span: Span | undefined;
    if (tracingEnabled() && !quietRoutes.has(route)) {
      const traceparent = header(request, 'traceparent');
      const tracestate = header(request, 'tracestate');
      const caller = traceparent
        ? contextFromHeaders({ traceparent, ...(tracestate ? { tracestate } : {}) }).span
        : undefined;
      span = startSpan(`${request.method} ${route}`, {
        kind: SpanKind.SERVER,
        parent: caller ?? null,
        attributes: { 'http.request.method': request.method, 'http.route': route, 'request.id': requestId },
      });
    }
    const context: RequestContext = {
      requestId,
      correlationId: requestId,
      causationId: requestId,
      ...(span ? { span } : {}),
    };
    contexts.set(request, context);
    runWithContext(context, done);
  });
  // The body is read on the socket's callbacks, outside the context: the handling (guards, controller, RPC) re-enters it.
  fastify.addHook('preValidation', (request, _reply, done) => {
    const context = contexts.get(request);
    if (context) runWithContext(context, done);
    else done();
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const context = contexts.get(request);
    if (context) {
      const status = reply.statusCode;
      if (context.span) {
        setAttributes(context.span, { 'http.response.status_code': status });
        if (status >= 500) markFailed(context.span, { type: String(status) });
        context.span.end();
      }
      const route = routeOf(request);
      const line = { method: request.method, route, status, duration_ms: Math.round(reply.elapsedTime) };
      runWithContext(context, () =>
        quietRoutes.has(route) ? log?.debug(line, 'request completed') : log?.info(line, 'request completed'),
      );
    }
    done();
  });
  fastify.addHook('onRequestAbort', (request, done) => {
    const span = contexts.get(request)?.span;
    if (span) {
      markFailed(span, { type: 'aborted' });
      span.end();
    }
    done();
  });
}
