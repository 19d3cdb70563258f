/**
 * The context a piece of work runs in — which request it serves, which payment it belongs to, which span it is
 * part of — kept in one AsyncLocalStorage, so that log lines and spans find it without it being passed along.
 * The gateway opens it per HTTP request; RPC servers, bus consumers and the webhook delivery worker reopen it from
 * what travelled with the call, the message or the stored event (propagation.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { isSpanContextValid, type Span } from '@opentelemetry/api';

export interface RequestContext {
  /**
   * The HTTP request this work serves: the gateway's request id; in work caused by a message, the id of the request
   * that started the chain (the correlation id).
   */
  readonly requestId?: string;
  /** Follows a payment across services and messages: the request id of the request that started it. */
  readonly correlationId?: string;
  /** What caused this work: the request id, or the id of the event being handled. */
  readonly causationId?: string;
  /** The active span (a remote one when it came with a call or message); absent when tracing is off. */
  readonly span?: Span;
}

const storage = new AsyncLocalStorage<RequestContext>();
const none: RequestContext = {};

export const currentContext = (): RequestContext => storage.getStore() ?? none;

/** Runs `work` in `context` (and everything it starts, synchronously or asynchronously). */
export const runWithContext = <T>(context: RequestContext, work: () => T): T => storage.run(context, work);

/**
 * The fields every log line gets (pino's `mixin`): `request_id`, `correlation_id`, and `trace_id`/`span_id` when
 * tracing is on. None outside a request or message.
 */
export function logFields(): Record<string, string> {
  const context = storage.getStore();
  if (!context) return {};
  const fields: Record<string, string> = {};
  if (context.requestId) fields.request_id = context.requestId;
  if (context.correlationId) fields.correlation_id = context.correlationId;
  const spanContext = context.span?.spanContext();
  if (spanContext && isSpanContextValid(spanContext)) {
    fields.trace_id = spanContext.traceId;
    fields.span_id = spanContext.spanId;
  }
  return fields;
}

const idShape = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
/** 13 digits in a row could be (part of) a card number: such an id is never taken, so never logged. */
const digitRun = /\d{13}/;

/** An id received from outside (`x-request-id`, a message header) when it is well-formed; else undefined. */
export function acceptableId(value: unknown): string | undefined {
  return typeof value === 'string' && idShape.test(value) && !digitRun.test(value) ? value : undefined;
}
