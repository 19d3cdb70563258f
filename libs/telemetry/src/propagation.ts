/**
 * How the context travels: as headers (`request-id`, `correlation-id`, W3C `traceparent`) with an RPC call, a bus
 * message or a stored webhook event, and as event metadata (`correlationId`, `causationId`, `traceparent`) with
 * every event appended while handling a request or a message. Whoever receives them reopens the context with
 * `contextFromHeaders`.
 */
import { ROOT_CONTEXT, SpanKind, trace, defaultTextMapGetter, defaultTextMapSetter } from '@opentelemetry/api';
import type { W3CTraceContextPropagator } from '@opentelemetry/core';
import { acceptableId, currentContext, runWithContext, type RequestContext } from './request-context';
import { markFailed, startSpan, tracingEnabled, withSpan, type Span } from './tracing';

export type ContextHeaders = Record<string, string>;

export const REQUEST_ID_HEADER = 'request-id';
export const CORRELATION_ID_HEADER = 'correlation-id';
export const CAUSATION_ID_HEADER = 'causation-id';
export const TRACEPARENT_HEADER = 'traceparent';
/**
 * The header relays set to the event id (`EVENT_ID_HEADER` of @switchyard/contracts): the cause of
 * what a consumer does.
 */
const MESSAGE_ID_HEADER = 'event-id';

let propagator: W3CTraceContextPropagator | undefined;
/** W3C trace context, loaded when tracing first needs it (the SDK's packages stay unloaded while tracing is off). */
const w3c = (): W3CTraceContextPropagator =>
  (propagator ??= new (
    require('@opentelemetry/core') as typeof import('@opentelemetry/core')
  ).W3CTraceContextPropagator());

/** The span as `traceparent` (and `tracestate`) into `headers`, when tracing is on and the span is real. */
function injectSpan(span: Span | undefined, headers: ContextHeaders): void {
  if (!span || !tracingEnabled()) return;
  w3c().inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
}

/** The remote span of `traceparent` in `headers`; undefined when tracing is off or there is none. */
function extractSpan(headers: Readonly<Record<string, string | undefined>>): Span | undefined {
  if (!tracingEnabled() || !headers[TRACEPARENT_HEADER]) return undefined;
  return trace.getSpan(w3c().extract(ROOT_CONTEXT, headers, defaultTextMapGetter));
}

/** The current context as headers to send along (an RPC call, a stored webhook event). */
export function contextHeaders(context: RequestContext = currentContext()): ContextHeaders {
  const headers: ContextHeaders = {};
  if (context.requestId) headers[REQUEST_ID_HEADER] = context.requestId;
  if (context.correlationId) headers[CORRELATION_ID_HEADER] = context.correlationId;
  if (context.causationId) headers[CAUSATION_ID_HEADER] = context.causationId;
  injectSpan(context.span, headers);
  return headers;
}

/**
 * The context that came with a call, a message or a stored event; `causedBy` (a message's event id) overrides its
 * causation id. Ids that are not well-formed are dropped; a message without a request id is attributed to the
 * request that started its chain (its correlation id).
 */
export function contextFromHeaders(
  headers: Readonly<Record<string, string | undefined>>,
  causedBy?: string,
): RequestContext {
  const correlationId = acceptableId(headers[CORRELATION_ID_HEADER]);
  const requestId = acceptableId(headers[REQUEST_ID_HEADER]) ?? correlationId;
  const causationId = causedBy ?? acceptableId(headers[CAUSATION_ID_HEADER]);
  const span = extractSpan(headers);
  return {
    ...(requestId ? { requestId } : {}),
    ...(correlationId ? { correlationId } : {}),
    ...(causationId ? { causationId } : {}),
    ...(span ? { span } : {}),
  };
}

/** What an event appended now records of its context: correlation and causation ids, and the span as `traceparent`. */
export function eventMetadata(context: RequestContext = currentContext()): Record<string, string> {
  const metadata: Record<string, string> = {};
  if (context.correlationId) metadata.correlationId = context.correlationId;
  if (context.causationId) metadata.causationId = context.causationId;
  const headers: ContextHeaders = {};
  injectSpan(context.span, headers);
  if (headers[TRACEPARENT_HEADER]) metadata.traceparent = headers[TRACEPARENT_HEADER];
  if (headers.tracestate) metadata.tracestate = headers.tracestate;
  return metadata;
}

// ---- the bus ----------------------------------------------------------------------------------------------------

export interface OutgoingMessageTrace {
  /** Headers for the message: the correlation id of its event and the producer span as `traceparent`. */
  readonly headers: ContextHeaders;
  /** Ends the producer span (with the publish's error, if it failed). */
  end(error?: unknown): void;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * A message about to be published for a stored event: a producer span, the child of the span the event was
 * appended in (its metadata's `traceparent`), and the headers that carry both on.
 */
export function traceOutgoingMessage(
  topic: string,
  messageId: string,
  metadata: Readonly<Record<string, unknown>>,
): OutgoingMessageTrace {
  const correlationId = acceptableId(metadata.correlationId);
  const headers: ContextHeaders = correlationId ? { [CORRELATION_ID_HEADER]: correlationId } : {};
  if (!tracingEnabled()) return { headers, end: () => undefined };
  const traceparent = text(metadata.traceparent);
  const tracestate = text(metadata.tracestate);
  const parent = traceparent ? extractSpan({ traceparent, ...(tracestate ? { tracestate } : {}) }) : undefined;
  const span = startSpan(`publish ${topic}`, {
    kind: SpanKind.PRODUCER,
    parent: parent ?? null,
    attributes: {
      'messaging.operation.type': 'send',
      'messaging.destination.name': topic,
      'messaging.message.id': messageId,
    },
  });
  injectSpan(span, headers);
  return {
    headers,
    end: (error?: unknown) => {
      if (error !== undefined) markFailed(span, error);
      span.end();
    },
  };
}

/**
 * Handles a message in the context it carries (correlation id; caused by its event id) and in a consumer span, the
 * child of its producer span.
 */
export function consumeMessage<T>(
  message: { readonly topic: string; readonly headers: Readonly<Record<string, string>> },
  groupId: string,
  handle: () => Promise<T>,
): Promise<T> {
  const messageId = acceptableId(message.headers[MESSAGE_ID_HEADER]);
  const context = contextFromHeaders(message.headers, messageId);
  return runWithContext(context, () =>
    withSpan(
      `process ${message.topic}`,
      {
        kind: SpanKind.CONSUMER,
        parent: context.span ?? null,
        attributes: {
          'messaging.operation.type': 'process',
          'messaging.destination.name': message.topic,
          'messaging.consumer.group.name': groupId,
          ...(messageId ? { 'messaging.message.id': messageId } : {}),
        },
      },
      handle,
    ),
  );
}
