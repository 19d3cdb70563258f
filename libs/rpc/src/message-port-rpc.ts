import type { MessagePort } from 'node:worker_threads';
import { ApiError } from '@switchyard/api';
import { contextHeaders, type ContextHeaders } from '@switchyard/telemetry';
import { EMBEDDED_CALLER } from './in-process-rpc';
import {
  rpcActorOf,
  serveCall,
  unwrapReply,
  type RpcActor,
  type RpcCallOptions,
  type RpcClient,
  type RpcHandlers,
  type RpcReply,
} from './rpc';

/** A call or its reply on the port; payloads and replies go as JSON text, as the in-process transport passes them. */
type PortMessage =
  | {
      readonly kind: 'call';
      readonly id: number;
      readonly pattern: string;
      readonly payload: string;
      readonly actor: RpcActor | null;
      /** The caller's request context (request, correlation and causation ids, trace), as TCP carries it. */
      readonly context: ContextHeaders;
    }
  | { readonly kind: 'reply'; readonly id: number; readonly reply: string };

/** What answers the calls that arrive on the port: a service's handlers, or the other side's whole RPC. */
export type PortServer = (
  pattern: string,
  payload: unknown,
  actor: RpcActor | null,
  carried: ContextHeaders,
) => Promise<RpcReply>;

/** A `PortServer` of handlers: each call served as the in-process transport serves it (`serveCall`, caller `embedded`). */
export function serveHandlers(handlers: RpcHandlers, onUnexpected: (error: unknown) => void): PortServer {
  return (pattern, payload, actor, carried) => {
    const handler = handlers[pattern];
    if (!handler)
      return Promise.resolve({
        ok: false,
        error: ApiError.badGateway(new Error(`no handler for ${pattern}`)).toBody(),
      });
    return serveCall(pattern, handler, payload, { caller: EMBEDDED_CALLER, actor }, onUnexpected, carried);
  };
}

/**
 * RPC between two threads of the embedded runtime (a service on a worker thread of its own), over one MessagePort,
 * both ways: `call` asks the other side, `serve` answers what it asks. Same semantics as `InProcessRpc`: the caller
 * is `embedded`, the actor travels beside the payload, payload and reply go through JSON. No timeout: the other side
 * is this process; when it goes away (`close`, the worker's exit) every call under way fails with a 502.
 */
export class MessagePortRpc implements RpcClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (reply: RpcReply) => void }>();
  private closed = false;

  constructor(
    private readonly port: MessagePort,
    private readonly serve: PortServer | null = null,
  ) {
    port.on('message', (message: PortMessage) => this.receive(message));
  }

  async call<T>(pattern: string, payload: unknown, options: RpcCallOptions = {}): Promise<T> {
    if (this.closed) throw ApiError.badGateway(new Error(`${pattern}: the other thread is gone`));
    const id = this.nextId++;
    const reply = await new Promise<RpcReply>((resolve) => {
      this.pending.set(id, { resolve });
      const message: PortMessage = {
        kind: 'call',
        id,
        pattern,
        payload: JSON.stringify(payload ?? null),
        actor: rpcActorOf(options.actor),
        context: contextHeaders(),
      };
      this.port.postMessage(message);
    });
    return unwrapReply<T>(reply);
  }

  /** Fails the calls under way (the other side is gone) and stops listening. */
  async close(): Promise<void> {
    this.closed = true;
    this.port.removeAllListeners('message');
    for (const [id, call] of this.pending) {
      this.pending.delete(id);
      call.resolve({ ok: false, error: ApiError.badGateway(new Error('the other thread is gone')).toBody() });
    }
  }

  private receive(message: PortMessage): void {
    if (message.kind === 'reply') {
      const call = this.pending.get(message.id);
      this.pending.delete(message.id);
      call?.resolve(JSON.parse(message.reply) as RpcReply);
      return;
    }
    const serve = this.serve;
    const answered = serve
      ? serve(message.pattern, JSON.parse(message.payload) as unknown, message.actor, message.context)
      : Promise.resolve<RpcReply>({
          ok: false,
          error: ApiError.badGateway(new Error(`no handler for ${message.pattern}`)).toBody(),
        });
    void answered
      .catch((): RpcReply => ({ ok: false, error: ApiError.serverError().toBody() }))
      .then((reply) => {
        if (!this.closed)
          this.port.postMessage({ kind: 'reply', id: message.id, reply: JSON.stringify(reply) } satisfies PortMessage);
      });
  }
}
