import type { MessagePort } from 'node:worker_threads';
import { ApiError } from '@switchyard/api';
import { contextHeaders, type ContextHeaders } from '@switchyard/telemetry';
import type { InProcessRpc } from './in-process-rpc';
import { rpcActorOf, unwrapReply, type RpcActor, type RpcCallOptions, type RpcClient, type RpcReply } from './rpc';

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

/** What answers the calls that arrive on the port: an `InProcessRpc` of the handlers of this side's thread. */
export type PortServer = Pick<InProcessRpc, 'serve'>;

/**
 * RPC between two threads of the embedded runtime (a service on a worker thread of its own), over one MessagePort,
 * both ways: `call` asks the other side, `server` (this side's `InProcessRpc`) answers what it asks. Same semantics
 * as `InProcessRpc`: the caller is `embedded`, the actor travels beside the payload, payload and reply go through
 * JSON. No timeout: the other side is this process; when it goes away (`close`, the worker's exit) every call under
 * way fails with a 502.
 */
export class MessagePortRpc implements RpcClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (reply: RpcReply) => void }>();
  private closed = false;

  constructor(
    private readonly port: MessagePort,
    private readonly server: PortServer,
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
    const answered = this.server.serve(
      message.pattern,
      JSON.parse(message.payload) as unknown,
      message.actor,
      message.context,
    );
    void answered
      .catch((): RpcReply => ({ ok: false, error: ApiError.serverError().toBody() }))
      .then((reply) => {
        if (!this.closed)
          this.port.postMessage({ kind: 'reply', id: message.id, reply: JSON.stringify(reply) } satisfies PortMessage);
      });
  }
}
