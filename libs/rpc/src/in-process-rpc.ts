import { ApiError } from '@switchyard/api';
import type { ContextHeaders } from '@switchyard/telemetry';
import {
  isBuiltForTheCall,
  rpcActorOf,
  serveCall,
  unwrapReply,
  type RpcCall,
  type RpcCallOptions,
  type RpcClient,
  type RpcHandlers,
  type RpcReply,
} from './rpc';

/** Calls inside the one-process runtime: every caller is the same process; nothing crosses a network. */
export const EMBEDDED_CALLER = 'embedded';

/** An in-process call that acts for nobody: what a spec passes when it calls a handler directly. */
export const EMBEDDED_CALL: RpcCall = { caller: EMBEDDED_CALLER, actor: null };

/**
 * The embedded runtime's transport: a direct call into the handler. Payloads and replies still pass through
 * JSON so that both runtimes see exactly the same data (no shared mutable objects, no Dates or class instances
 * that a wire transport would flatten); a reply the handler marked `builtForTheCall` (JSON already, held by no one)
 * is handed over as it is.
 */
export class InProcessRpc implements RpcClient {
  private readonly handlers = new Map<string, RpcHandlers[string]>();
  /** Patterns served by a service on another thread of this process (`forward`). */
  private readonly forwarded = new Map<string, RpcClient>();

  constructor(private readonly onUnexpected: (error: unknown) => void = (error) => console.error(error)) {}

  register(handlers: RpcHandlers): void {
    for (const [pattern, handler] of Object.entries(handlers)) this.handlers.set(pattern, handler);
  }

  /** Calls of `patterns` go to `client`: a service on a worker thread of its own (`MessagePortRpc`). */
  forward(patterns: Iterable<string>, client: RpcClient): void {
    for (const pattern of patterns) this.forwarded.set(pattern, client);
  }

  async call<T>(pattern: string, payload: unknown, options: RpcCallOptions = {}): Promise<T> {
    const forwarded = this.forwarded.get(pattern);
    if (forwarded) return forwarded.call<T>(pattern, payload, options);
    const handler = this.handlers.get(pattern);
    if (!handler) throw ApiError.badGateway(new Error(`no handler for ${pattern}`));
    const reply = await this.serveOne(pattern, handler, JSON.parse(JSON.stringify(payload ?? null)), options.actor);
    return unwrapReply<T>(reply.ok && isBuiltForTheCall(reply.value) ? reply : JSON.parse(JSON.stringify(reply)));
  }

  /**
   * A call from another thread (its payload already parsed from its JSON, its caller's request context `carried`):
   * the reply, to send back as JSON.
   */
  serve(pattern: string, payload: unknown, actor: unknown, carried?: ContextHeaders): Promise<RpcReply> {
    const handler = this.handlers.get(pattern);
    if (!handler)
      return Promise.resolve({
        ok: false,
        error: ApiError.badGateway(new Error(`no handler for ${pattern}`)).toBody(),
      });
    return this.serveOne(pattern, handler, payload, actor, carried);
  }

  private serveOne(
    pattern: string,
    handler: RpcHandlers[string],
    payload: unknown,
    actor: unknown,
    carried?: ContextHeaders,
  ): Promise<RpcReply> {
    return serveCall(
      pattern,
      handler,
      payload,
      { caller: EMBEDDED_CALLER, actor: rpcActorOf(actor) },
      this.onUnexpected,
      carried,
    );
  }

  async close(): Promise<void> {}
}
