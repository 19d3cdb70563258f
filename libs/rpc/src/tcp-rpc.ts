/**
 * The distributed runtime's transport: NestJS microservices over TCP (measured against Redis and Kafka
 * request/reply in `bench/rpc-transports.bench.ts`; see docs/architecture.md), inside mutual TLS: the server admits
 * only callers whose certificate its CA signed, and serves a caller only the patterns `rpcServices` lists for it; the
 * client talks only to a server whose certificate names the service it meant to call.
 */
import type { ConnectionOptions, PeerCertificate, TLSSocket, TlsOptions } from 'node:tls';
import { Controller, Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ClientTCP,
  Ctx,
  MessagePattern,
  Payload,
  ServerTCP,
  TcpContext,
  type MicroserviceOptions,
  type TcpSocket,
} from '@nestjs/microservices';
import { ApiError } from '@switchyard/api';
import { callRpc, type ContextHeaders } from '@switchyard/telemetry';
import { firstValueFrom, timeout, TimeoutError } from 'rxjs';
import type { RpcCredentials } from './rpc-credentials';
import { rpcCallAllowed } from './rpc-services';
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

/**
 * What a TCP call sends: the payload, the caller's context (request and correlation ids, `traceparent`), so the
 * service logs and traces the call as part of the request, and the actor when the call acts for one. All of it inside
 * the TLS channel: the caller's certificate vouches for every field. A bare payload (no envelope) is served with none.
 */
interface RpcEnvelope {
  readonly $context: ContextHeaders;
  readonly $actor?: RpcActor;
  readonly payload: unknown;
}

const isEnvelope = (data: unknown): data is RpcEnvelope =>
  typeof data === 'object' &&
  data !== null &&
  '$context' in data &&
  'payload' in data &&
  typeof (data as RpcEnvelope).$context === 'object';

/** A call or a connection the server would not serve, for the service's log. */
export interface RpcRefusal {
  /** `unauthenticated`: no certificate of the CA (handshake refused); `not-allowed`: not this caller's pattern. */
  readonly reason: 'unauthenticated' | 'not-allowed' | 'invalid-actor';
  readonly caller: string | null;
  readonly pattern: string | null;
  readonly remoteAddress: string | null;
  readonly detail?: string;
}

export interface TcpRpcServerOptions {
  readonly credentials: RpcCredentials;
  readonly onUnexpected: (error: unknown) => void;
  /** Every refusal; the service logs it. A refused call runs no handler. */
  readonly onRefused: (refusal: RpcRefusal) => void;
}

/** TLS 1.3 only, a client certificate required and checked against the CA. */
export const serverTlsOptions = (credentials: RpcCredentials): TlsOptions => ({
  ca: credentials.ca,
  cert: credentials.cert,
  key: credentials.key,
  requestCert: true,
  rejectUnauthorized: true,
  minVersion: 'TLSv1.3',
});

/** TLS 1.3 only; the server's certificate must come from the CA and name `service` (not a host: names are services). */
export const clientTlsOptions = (credentials: RpcCredentials, service: string): ConnectionOptions => ({
  ca: credentials.ca,
  cert: credentials.cert,
  key: credentials.key,
  minVersion: 'TLSv1.3',
  checkServerIdentity: (_host: string, certificate: PeerCertificate) =>
    peerName(certificate) === service
      ? undefined
      : new Error(`the RPC server's certificate names ${peerName(certificate) ?? 'no service'}, not ${service}`),
});

function peerName(certificate: PeerCertificate | undefined): string | null {
  const name = certificate?.subject?.CN;
  return typeof name === 'string' && name !== '' ? name : null;
}

/**
 * The authenticated caller of a connection: the CN of the certificate the TLS handshake verified, else null. Read
 * once per connection (its certificate cannot change on it): `getPeerCertificate` parses the certificate each time,
 * 0.8 s of the vault process's 22 s of CPU in a profile of `bench:distributed` when asked per call.
 */
const callers = new WeakMap<TLSSocket, string | null>();
function callerOf(socket: TLSSocket): string | null {
  if (!socket.authorized) return null;
  let caller = callers.get(socket);
  if (caller === undefined) {
    caller = peerName(socket.getPeerCertificate());
    callers.set(socket, caller);
  }
  return caller;
}

/** host and port of `tcp://host:port` (an IPv6 host without its brackets, as sockets take it). */
export function tcpAddressOf(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  if (parsed.protocol !== 'tcp:' || parsed.hostname === '' || parsed.port === '')
    throw new Error(`not a tcp://host:port address: ${url}`);
  return { host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(parsed.port) };
}

const refusedReply = (message: string): RpcReply => ({ ok: false, error: ApiError.forbidden(message).toBody() });

/** Builds a Nest controller with one `@MessagePattern` per handler, each admitting only the callers allowed it. */
export function rpcController(handlers: RpcHandlers, options: TcpRpcServerOptions): Type<unknown> {
  const service = options.credentials.service;
  const serve = async (pattern: string, data: unknown, context: TcpContext): Promise<RpcReply> => {
    const socket = context.getSocketRef().netSocket as TLSSocket;
    const caller = callerOf(socket);
    const remoteAddress = socket.remoteAddress ?? null;
    if (caller === null || !rpcCallAllowed(service, caller, pattern)) {
      options.onRefused({
        reason: caller === null ? 'unauthenticated' : 'not-allowed',
        caller,
        pattern,
        remoteAddress,
      });
      return refusedReply(`${caller ?? 'an unauthenticated caller'} may not call ${pattern}`);
    }
    const envelope: RpcEnvelope = isEnvelope(data) ? data : { $context: {}, payload: data };
    const actor = envelope.$actor === undefined ? null : rpcActorOf(envelope.$actor);
    if (envelope.$actor !== undefined && actor === null) {
      options.onRefused({ reason: 'invalid-actor', caller, pattern, remoteAddress });
      return {
        ok: false,
        error: ApiError.badRequest('The call names an actor that is not an API key pair or a dashboard user').toBody(),
      };
    }
    return serveCall(
      pattern,
      handlers[pattern]!,
      envelope.payload,
      { caller, actor },
      options.onUnexpected,
      envelope.$context,
    );
  };
  class RpcHandlersController {}
  for (const pattern of Object.keys(handlers)) {
    const method = `handle_${pattern.replace(/[^a-zA-Z0-9]/g, '_')}`;
    const descriptor: PropertyDescriptor = {
      value: (data: unknown, context: TcpContext) => serve(pattern, data, context),
      writable: true,
      configurable: true,
    };
    Object.defineProperty(RpcHandlersController.prototype, method, descriptor);
    Payload()(RpcHandlersController.prototype, method, 0);
    Ctx()(RpcHandlersController.prototype, method, 1);
    MessagePattern(pattern)(RpcHandlersController.prototype, method, descriptor);
  }
  Controller()(RpcHandlersController);
  return RpcHandlersController;
}

/**
 * ClientTCP over TLS, dropping its connection on any socket error: a TLS alert (a record altered on the way, a
 * certificate refused) leaves the socket open otherwise, and every call on it would wait for its timeout. Dropped, the
 * calls in flight fail at once (502) and the next call connects again.
 */
class TlsClientTcp extends ClientTCP {
  override createSocket(): TcpSocket {
    const socket = super.createSocket();
    socket.netSocket.setNoDelay(true);
    socket.netSocket.on('error', () => socket.netSocket.destroy());
    return socket;
  }

  /** A peer closing its end (a restart, a refused certificate) resets the TLS socket: the close fails the calls. */
  override handleError(error: unknown): void {
    if ((error as NodeJS.ErrnoException | undefined)?.code !== 'ECONNRESET') super.handleError(error);
  }
}

export interface TcpRpcClientOptions {
  readonly host: string;
  readonly port: number;
  /** The service at host:port: its certificate must name it. */
  readonly service: string;
  /** This process's credentials: its certificate names the caller. */
  readonly credentials: RpcCredentials;
  readonly timeoutMs?: number;
}

export class TcpRpcClient implements RpcClient {
  private readonly client: ClientTCP;
  private readonly timeoutMs: number;

  constructor(options: TcpRpcClientOptions) {
    this.client = new TlsClientTcp({
      host: options.host,
      port: options.port,
      tlsOptions: clientTlsOptions(options.credentials, options.service),
    });
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** `tcp://host:port` of `service`. */
  static fromUrl(url: string, service: string, credentials: RpcCredentials, timeoutMs?: number): TcpRpcClient {
    return new TcpRpcClient({ ...tcpAddressOf(url), service, credentials, ...(timeoutMs ? { timeoutMs } : {}) });
  }

  async call<T>(pattern: string, payload: unknown, options: RpcCallOptions = {}): Promise<T> {
    let reply: RpcReply;
    try {
      reply = await callRpc(pattern, ($context) => {
        const envelope: RpcEnvelope = {
          $context,
          ...(options.actor ? { $actor: options.actor } : {}),
          payload: payload ?? null,
        };
        return firstValueFrom(this.client.send<RpcReply, RpcEnvelope>(pattern, envelope).pipe(timeout(this.timeoutMs)));
      });
    } catch (error) {
      if (error instanceof TimeoutError) throw ApiError.gatewayTimeout(error);
      throw ApiError.badGateway(error);
    }
    return unwrapReply<T>(reply);
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

/**
 * Nest's TCP server, routing a pattern that is a plain string (all of ours: `vault.cards.hand-over`) as it is. Nest
 * first tries `JSON.parse` on every incoming pattern, so that an object pattern routes by its JSON; on a plain string
 * that throws, and the SyntaxError with its stack trace was 1–3 % of a service process's CPU under load (profiles of
 * `bench:distributed`). A pattern that may be JSON (`{`, `[`, `"`) still goes Nest's way.
 */
export class StringPatternServerTcp extends ServerTCP {
  override getRouteFromPattern(pattern: string): string {
    const first = pattern.charAt(0);
    return first === '{' || first === '[' || first === '"' ? super.getRouteFromPattern(pattern) : pattern;
  }
}

/**
 * Serves a service's RPC handlers over NestJS TCP in mutual TLS at `tcp://host:port` (bound to that host, exactly as
 * the setting names it); resolves once listening. The service is the one its credentials name.
 */
export async function startTcpRpcServer(
  url: string,
  handlers: RpcHandlers,
  options: TcpRpcServerOptions,
): Promise<{ close(): Promise<void> }> {
  const address = tcpAddressOf(url);
  @Module({ controllers: [rpcController(handlers, options)] })
  class RpcServerModule {}
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(RpcServerModule, {
    strategy: new StringPatternServerTcp({ ...address, tlsOptions: serverTlsOptions(options.credentials) }),
    logger: ['error', 'warn'],
  });
  // A connection without a certificate of the CA never gets past the handshake: no message of it is read. Why is in
  // `authorizationError` (CERT_HAS_EXPIRED, …) when the certificate was refused, else in the handshake's error.
  app.on('tlsClientError', (error: Error, socket: TLSSocket & { authorizationError?: string }) =>
    options.onRefused({
      reason: 'unauthenticated',
      caller: null,
      pattern: null,
      remoteAddress: socket.remoteAddress ?? null,
      detail: socket.authorizationError ?? error.message,
    }),
  );
  // A record that fails its check (altered on the way) gets an alert but leaves the connection open: close it.
  app.on('secureConnection', (socket: TLSSocket) => {
    socket.setNoDelay(true);
    socket.on('error', () => socket.destroy());
  });
  await app.listen();
  return { close: () => app.close() };
}
