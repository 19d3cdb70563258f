import { ApiError } from '@switchyard/api';
import {
  rpcActorOf,
  serveCall,
  unwrapReply,
  type RpcCall,
  type RpcCallOptions,
  type RpcClient,
  type RpcHandlers,
} from './rpc';

/** Calls inside the one-process runtime: every caller is the same process; nothing crosses a network. */
export const EMBEDDED_CALLER = 'embedded';

/** An in-process call that acts for nobody: what a spec passes when it calls a handler directly. */
export const EMBEDDED_CALL: RpcCall = { caller: EMBEDDED_CALLER, actor: null };

/**
 * The embedded runtime's transport: a direct call into the handler. Payloads and replies still pass through
 * JSON so that both runtimes see exactly the same data (no shared mutable objects, no Dates or class instances
 * that a wire transport would flatten).
 */
export class InProcessRpc implements RpcClient {
  private readonly handlers = new Map<string, RpcHandlers[string]>();

  constructor(private readonly onUnexpected: (error: unknown) => void = (error) => console.error(error)) {}

  register(handlers: RpcHandlers): void {
    for (const [pattern, handler] of Object.entries(handlers)) this.handlers.set(pattern, handler);
  }

  async call<T>(pattern: string, payload: unknown, options: RpcCallOptions = {}): Promise<T> {
    const handler = this.handlers.get(pattern);
    if (!handler) throw ApiError.badGateway(new Error(`no handler for ${pattern}`));
    const call = { caller: EMBEDDED_CALLER, actor: rpcActorOf(options.actor) };
    const reply = await serveCall(
      pattern,
      handler,
      JSON.parse(JSON.stringify(payload ?? null)),
      call,
      this.onUnexpected,
    );
    return unwrapReply<T>(JSON.parse(JSON.stringify(reply)));
  }

  async close(): Promise<void> {}
}
