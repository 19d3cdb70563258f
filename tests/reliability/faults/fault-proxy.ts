/**
 * A switchable HTTP proxy between the service and the card simulator, for the fault suite. Every request is read
 * whole, then a rule decides what happens to it:
 *
 * - `pass`: forwarded, the answer relayed as it came;
 * - `delay`: forwarded after `ms`, the answer relayed (a slow network or provider);
 * - `hang`: never forwarded, never answered (the caller's timeout fires; the provider never saw it);
 * - `reset`: never forwarded, the connection reset (TCP RST) at once (the provider never saw it);
 * - `status`: never forwarded, answered with that HTTP status (a provider-side 500 before it acted);
 * - `lose-answer`: forwarded, the provider acts and answers, and the connection is reset instead of relaying the
 *   answer (the answer is lost on its way back: the provider did act).
 *
 * `down()` closes the port (connections refused), `up()` opens the same port again. Loopback only.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Fault =
  | { readonly kind: 'pass' }
  | { readonly kind: 'delay'; readonly ms: number }
  | { readonly kind: 'hang' }
  | { readonly kind: 'reset' }
  | { readonly kind: 'status'; readonly status: number }
  | { readonly kind: 'lose-answer' };

export interface ProxiedRequest {
  readonly method: string;
  /** Path and query, e.g. `/v1/authorizations`. */
  readonly path: string;
  /** The `x-mock-card-merchant-id` header: which connection is calling. */
  readonly merchantId: string | undefined;
  /** The JSON body, or undefined. */
  readonly body: Record<string, unknown> | undefined;
}

/** A rule: the fault for a request, or undefined to leave it to the next rule (finally: pass). */
export type FaultRule = (request: ProxiedRequest) => Fault | undefined;

export class FaultProxy {
  private server: http.Server | null = null;
  private readonly sockets = new Set<Socket>();
  private rules: { readonly name: string; readonly rule: FaultRule }[] = [];
  /** Faults injected so far, by kind (`pass` is not a fault and is not counted). */
  readonly injected: Record<string, number> = {};
  /** Requests seen, by `<METHOD> <path without query>`. */
  readonly seen: ProxiedRequest[] = [];
  port = 0;

  constructor(private readonly upstream: string) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Adds a rule (first added, first asked); returns a function that removes it. */
  inject(name: string, rule: FaultRule): () => void {
    const entry = { name, rule };
    this.rules.push(entry);
    return () => {
      this.rules = this.rules.filter((r) => r !== entry);
    };
  }

  /** Removes every rule: everything passes again. */
  clear(): void {
    this.rules = [];
  }

  async up(): Promise<this> {
    if (this.server) return this;
    const server = http.createServer((request, response) => this.handle(request, response));
    server.keepAliveTimeout = 1_000;
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  /** Closes the port and every open connection: new connections are refused until `up()`. */
  async down(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await closed;
  }

  private count(kind: string): void {
    this.injected[kind] = (this.injected[kind] ?? 0) + 1;
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: Record<string, unknown> | undefined;
      try {
        body = raw.length > 0 ? (JSON.parse(raw.toString('utf8')) as Record<string, unknown>) : undefined;
      } catch {
        body = undefined;
      }
      const merchant = request.headers['x-mock-card-merchant-id'];
      const proxied: ProxiedRequest = {
        method: request.method ?? 'GET',
        path: request.url ?? '/',
        merchantId: typeof merchant === 'string' ? merchant : undefined,
        body,
      };
      this.seen.push(proxied);
      let fault: Fault = { kind: 'pass' };
      for (const { rule } of this.rules) {
        const decided = rule(proxied);
        if (decided) {
          fault = decided;
          break;
        }
      }
      if (fault.kind !== 'pass') this.count(fault.kind);
      switch (fault.kind) {
        case 'hang':
          return; // the socket is destroyed by the caller's timeout, or by down()
        case 'reset':
          request.socket.resetAndDestroy();
          return;
        case 'status':
          response
            .writeHead(fault.status, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: 'injected_fault', message: `injected ${fault.status}` }));
          return;
        case 'delay':
          setTimeout(() => this.forward(request, response, raw, false), fault.ms);
          return;
        case 'lose-answer':
          this.forward(request, response, raw, true);
          return;
        case 'pass':
          this.forward(request, response, raw, false);
      }
    });
  }

  private forward(
    request: http.IncomingMessage,
    response: http.ServerResponse,
    raw: Buffer,
    loseAnswer: boolean,
  ): void {
    if (request.socket.destroyed) return; // the caller gave up meanwhile
    const target = new URL(request.url ?? '/', this.upstream);
    const headers = { ...request.headers, host: target.host, 'content-length': String(raw.length) };
    delete headers.connection;
    const outgoing = http.request(target, { method: request.method, headers, agent: false }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        if (loseAnswer) {
          request.socket.resetAndDestroy();
          return;
        }
        if (request.socket.destroyed) return;
        const relayed = { ...answer.headers };
        delete relayed.connection;
        delete relayed['keep-alive'];
        delete relayed['transfer-encoding'];
        response.writeHead(answer.statusCode ?? 502, relayed).end(Buffer.concat(chunks));
      });
    });
    outgoing.on('error', () => request.socket.resetAndDestroy());
    outgoing.end(raw);
  }
}

/** Authorization requests (`POST /v1/authorizations`) of one simulator merchant id. */
export const authorizationsOf =
  (merchantId: string) =>
  (request: ProxiedRequest): boolean =>
    request.method === 'POST' && request.path === '/v1/authorizations' && request.merchantId === merchantId;

/** Every POST (authorize, capture, void, refund, gift card calls) of one simulator merchant id. */
export const postsOf =
  (merchantId: string) =>
  (request: ProxiedRequest): boolean =>
    request.method === 'POST' && request.merchantId === merchantId;
