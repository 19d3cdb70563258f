/**
 * Request/reply between the gateway and the services. A handler answers with a value or throws an `ApiError`;
 * over the wire the reply is a value either way (`{ok, value}` or `{ok: false, error}`), so domain errors cross
 * the process boundary intact and are rendered once at the edge.
 * Adapters: in-process (embedded runtime) and NestJS TCP microservices (distributed runtime).
 */
import { ApiError, type ErrorBody } from '@switchyard/api';
import { markFailed, serveRpc, setAttributes, type ContextHeaders } from '@switchyard/telemetry';

export type RpcReply =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: ErrorBody };

/**
 * Who a call acts for: the API key pair or the dashboard user of the request the calling service serves. It travels
 * beside the payload, never in it (a payload carries what a client sent), and a service takes it only from `RpcCall`.
 */
export interface RpcActor {
  readonly type: 'api-key-pair' | 'dashboard-user';
  readonly id: string;
}

/** What the transport vouches for about a call: the calling service (its certificate's name) and its actor. */
export interface RpcCall {
  /** The calling service (`gateway`, `webhooks`, …); `embedded` in the one-process runtime. */
  readonly caller: string;
  readonly actor: RpcActor | null;
}

export interface RpcCallOptions {
  /** The acting API key pair or dashboard user, for handlers that decide or record who acts. */
  readonly actor?: RpcActor;
}

export type RpcHandler = (payload: unknown, call: RpcCall) => Promise<unknown>;
export type RpcHandlers = Readonly<Record<string, RpcHandler>>;

export interface RpcClient {
  /** Resolves with the handler's value; rejects with the handler's `ApiError`, or 502/504 when unreachable. */
  call<T>(pattern: string, payload: unknown, options?: RpcCallOptions): Promise<T>;
  close(): Promise<void>;
}

const MAX_ACTOR_ID_LENGTH = 200;

/** The actor as sent, when it has the shape of one; anything else is no actor. */
export function rpcActorOf(value: unknown): RpcActor | null {
  if (typeof value !== 'object' || value === null) return null;
  const { type, id } = value as { type?: unknown; id?: unknown };
  if (type !== 'api-key-pair' && type !== 'dashboard-user') return null;
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ACTOR_ID_LENGTH) return null;
  return { type, id };
}

/** Replies that a handler built for one call alone from JSON (see `builtForTheCall`). */
const builtForOneCall = new WeakSet<object>();

/**
 * Marks a handler's answer as built for this call alone from JSON: a read model's views, parsed for this read, and
 * the wire objects made of them. Nothing else holds it and it is JSON already (no Dates, no class instances, no
 * shared objects), so the in-process transport hands it over as it is instead of cloning it through JSON (a list page
 * is ~26 KB of views: the clone was ~15 % of a list request's CPU). Over TCP and a MessagePort it is serialized as any
 * other answer.
 */
export function builtForTheCall<T extends object>(value: T): T {
  builtForOneCall.add(value);
  return value;
}

/** Whether a reply's value is one `builtForTheCall` marked. */
export function isBuiltForTheCall(value: unknown): boolean {
  return typeof value === 'object' && value !== null && builtForOneCall.has(value);
}

/** Runs a handler and turns its outcome into a reply value. Unexpected errors become a 500 (and are logged). */
export async function replyOf(
  handler: RpcHandler,
  payload: unknown,
  call: RpcCall,
  onUnexpected: (error: unknown) => void,
): Promise<RpcReply> {
  try {
    return { ok: true, value: await handler(payload, call) };
  } catch (error) {
    if (error instanceof ApiError) return { ok: false, error: error.toBody() };
    onUnexpected(error);
    return { ok: false, error: ApiError.serverError().toBody() };
  }
}

/**
 * The service's side of one call: the handler's reply, in a server span named by the pattern (and, over TCP, in the
 * caller's context, `carried`). An error reply records its status and code; a 5xx marks the span failed.
 */
export function serveCall(
  pattern: string,
  handler: RpcHandler,
  payload: unknown,
  call: RpcCall,
  onUnexpected: (error: unknown) => void,
  carried?: ContextHeaders,
): Promise<RpcReply> {
  return serveRpc(pattern, carried, async (span) => {
    const reply = await replyOf(handler, payload, call, onUnexpected);
    if (!reply.ok) {
      setAttributes(span, { 'rpc.response.status_code': reply.error.status });
      if (reply.error.status >= 500) markFailed(span, { type: reply.error.code });
    }
    return reply;
  });
}

export function unwrapReply<T>(reply: RpcReply): T {
  if (reply.ok) return reply.value as T;
  throw ApiError.fromBody(reply.error);
}
