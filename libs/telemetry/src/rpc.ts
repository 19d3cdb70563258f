/**
 * Spans of the gateway → service calls: the service's side of every call (in process in the embedded runtime, over
 * TCP in the distributed one) is a server span named by its pattern; a TCP call is also a client span on the
 * caller's side, whose context travels with the payload (`contextHeaders`).
 */
import { contextFromHeaders, contextHeaders, type ContextHeaders } from './propagation';
import { runWithContext } from './request-context';
import { SpanKind, withSpan, type Span } from './tracing';

const rpcAttributes = (pattern: string) => ({
  'rpc.system': 'switchyard',
  'rpc.service': pattern.slice(0, pattern.indexOf('.')),
  'rpc.method': pattern,
});

/** The caller's side of a call over the network: `send` gets the headers to put beside the payload. */
export function callRpc<T>(pattern: string, send: (headers: ContextHeaders) => Promise<T>): Promise<T> {
  return withSpan(pattern, { kind: SpanKind.CLIENT, attributes: rpcAttributes(pattern) }, () => send(contextHeaders()));
}

/**
 * The service's side of a call, in a server span: in the caller's context when it came over the network
 * (`carried`), else in the current one (a call in process).
 */
export function serveRpc<T>(
  pattern: string,
  carried: ContextHeaders | undefined,
  handle: (span: Span) => Promise<T>,
): Promise<T> {
  const serve = () => withSpan(pattern, { kind: SpanKind.SERVER, attributes: rpcAttributes(pattern) }, handle);
  return carried ? runWithContext(contextFromHeaders(carried), serve) : serve();
}
