/**
 * OpenTelemetry traces, off unless an OTLP endpoint is configured. On: one tracer provider per process (its
 * `service.name`), spans batched to the OTLP/HTTP exporter (JSON). Off: no SDK is started, and every helper below
 * costs one check of `active` before it runs the work as is.
 *
 * The provider is not registered as the global one: spans are parented explicitly from the RequestContext
 * (request-context.ts), so nothing here depends on a global context manager, and a test can start and stop the
 * embedded runtime as often as it likes.
 */
import {
  INVALID_SPAN_CONTEXT,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type AttributeValue,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { TracerProvider } from '@opentelemetry/sdk-trace';
import { currentContext, runWithContext } from './request-context';

export { SpanKind, type Span };

/** The settings tracing reads (libs/config: the OTEL_* variables). */
export interface TracingSettings {
  readonly OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  readonly OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string | undefined;
  readonly OTEL_EXPORTER_OTLP_HEADERS?: string | undefined;
  readonly OTEL_SERVICE_NAME?: string | undefined;
}

export interface Tracing {
  readonly enabled: boolean;
  /** Exports every span ended so far. */
  flush(): Promise<void>;
  /** Exports what is left and stops tracing in this process. */
  shutdown(): Promise<void>;
}

interface ActiveTracing {
  readonly provider: TracerProvider;
  readonly tracer: Tracer;
}

let active: ActiveTracing | undefined;

const disabled: Tracing = { enabled: false, flush: async () => undefined, shutdown: async () => undefined };

/** A span that records nothing: what the helpers hand out while tracing is off. */
const nonRecording: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces` (the OTLP rule). */
export function tracesUrl(settings: TracingSettings): string | undefined {
  if (settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (!settings.OTEL_EXPORTER_OTLP_ENDPOINT) return undefined;
  return `${settings.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`;
}

/** `key1=value1,key2=value2` (values URL-encoded), as OTEL_EXPORTER_OTLP_HEADERS is written. */
export function parseOtlpHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}

/**
 * Starts tracing for this process when an endpoint is configured; otherwise starts nothing and answers a handle
 * that does nothing. `serviceName` is the process (`switchyard` embedded; `gateway`, `identity`, … distributed),
 * unless OTEL_SERVICE_NAME says otherwise.
 */
export function startTracing(serviceName: string, settings: TracingSettings): Tracing {
  const url = tracesUrl(settings);
  if (!url) return disabled;
  // One provider per process: a second start (a test starting the runtime again) replaces the first.
  void active?.provider.shutdown().catch(() => undefined);
  // Loaded only now: a process without tracing (and the CLI) never loads the SDK.
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  // OpenTelemetry JS 3: one SDK package (@opentelemetry/sdk-trace) where 2.x had sdk-trace-base and sdk-trace-node;
  // the Node provider only added register() (global context manager, propagators), which is not used here.
  const { BatchSpanProcessor, TracerProvider } =
    require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  const { ATTR_SERVICE_NAME } =
    require('@opentelemetry/semantic-conventions') as typeof import('@opentelemetry/semantic-conventions');
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.OTEL_SERVICE_NAME || serviceName }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url, headers: parseOtlpHeaders(settings.OTEL_EXPORTER_OTLP_HEADERS) }),
      }),
    ],
  });
  const started: ActiveTracing = { provider, tracer: provider.getTracer('switchyard') };
  active = started;
  // An export that fails (collector down) loses its spans and nothing else: flush and shutdown never reject.
  return {
    enabled: true,
    flush: () => started.provider.forceFlush().catch(() => undefined),
    shutdown: async () => {
      if (active === started) active = undefined;
      await started.provider.shutdown().catch(() => undefined);
    },
  };
}

/** Exports every span ended so far (tests; a no-op while tracing is off). */
export const flushTraces = async (): Promise<void> => {
  await active?.provider.forceFlush().catch(() => undefined);
};

export const tracingEnabled = (): boolean => active !== undefined;

export interface StartSpanOptions {
  readonly kind?: SpanKind;
  readonly attributes?: Attributes;
  /** Default: the current context's span; `null`: a new trace. */
  readonly parent?: Span | null;
}

/**
 * Starts a span (the caller ends it): a child of the current context's span unless told otherwise. While tracing
 * is off: a span that records nothing.
 */
export function startSpan(name: string, options: StartSpanOptions = {}): Span {
  if (!active) return nonRecording;
  const parent = options.parent === undefined ? currentContext().span : options.parent;
  return active.tracer.startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: safeAttributes(options.attributes ?? {}) },
    parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT,
  );
}

/**
 * Runs `work` in a span that is the current context's span meanwhile (so logs and child spans see it), and ends it:
 * a rejection sets the status to error with the error's type, never its message (messages can quote what a
 * provider answered). While tracing is off: `work` as is.
 */
export async function withSpan<T>(
  name: string,
  options: StartSpanOptions,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  if (!active) return work(nonRecording);
  const span = startSpan(name, options);
  try {
    return await runWithContext({ ...currentContext(), span }, () => work(span));
  } catch (error) {
    markFailed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** Sets the status to error, with the error's type (`error.type`), not its message. */
export function markFailed(span: Span, error: unknown): void {
  if (!span.isRecording()) return;
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute('error.type', errorType(error));
}

/** Sets attributes, after the same guard as at start (attributes are ids, statuses, amounts: never card data). */
export function setAttributes(span: Span, attributes: Attributes): void {
  if (span.isRecording()) span.setAttributes(safeAttributes(attributes));
}

const errorType = (error: unknown): string => {
  const code = (error as { type?: unknown; code?: unknown } | null)?.type ?? (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code !== '') return code;
  return error instanceof Error ? error.name : typeof error;
};

/** 13 or more digits in a row could be a card number: such a value never reaches an exporter. */
const digitRun = /\d{13}/;

function safeAttributes(attributes: Attributes): Attributes {
  const safe: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null) continue;
    safe[key] = typeof value === 'string' && digitRun.test(value) ? '[redacted]' : (value as AttributeValue);
  }
  return safe;
}
