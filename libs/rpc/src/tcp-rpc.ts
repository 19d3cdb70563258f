/**
 * The distributed runtime's transport: NestJS microservices over TCP (measured against Redis and Kafka
 * request/reply in `bench/rpc-transports.bench.ts`; see docs/architecture.md).
 */
import { Controller, Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientTCP, MessagePattern, Payload, Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { ApiError } from '@switchyard/api';
import { callRpc, type ContextHeaders } from '@switchyard/telemetry';
import { firstValueFrom, timeout, TimeoutError } from 'rxjs';
import { serveCall, unwrapReply, type RpcClient, type RpcHandlers, type RpcReply } from './rpc';

/**
 * What a TCP call sends: the payload and the caller's context (request and correlation ids, `traceparent`), so the
 * service logs and traces the call as part of the request. A bare payload (an older client) is served as well.
 */
interface RpcEnvelope {
  readonly $context: ContextHeaders;
  readonly payload: unknown;
}

const isEnvelope = (data: unknown): data is RpcEnvelope =>
  typeof data === 'object' && data !== null && '$context' in data && 'payload' in data && typeof (data as RpcEnvelope).$context === 'object';

/** Builds a Nest controller with one `@MessagePattern` per handler. */
export function rpcController(handlers: RpcHandlers, onUnexpected: (error: unknown) => void): Type<unknown> {
  class RpcHandlersController {}
  for (const [pattern, handler] of Object.entries(handlers)) {
    const method = `handle_${pattern.replace(/[^a-zA-Z0-9]/g, '_')}`;
    const descriptor: PropertyDescriptor = {
      value: (data: unknown) => (isEnvelope(data) ? serveCall(pattern, handler, data.payload, onUnexpected, data.$context) : serveCall(pattern, handler, data, onUnexpected, {})),
      writable: true,
      configurable: true,
    };
    Object.defineProperty(RpcHandlersController.prototype, method, descriptor);
    Payload()(RpcHandlersController.prototype, method, 0);
    MessagePattern(pattern)(RpcHandlersController.prototype, method, descriptor);
  }
  Controller()(RpcHandlersController);
  return RpcHandlersController;
}

export interface TcpRpcClientOptions {
  readonly host: string;
  readonly port: number;
  readonly timeoutMs?: number;
}

export class TcpRpcClient implements RpcClient {
  private readonly client: ClientTCP;
  private readonly timeoutMs: number;

  constructor(options: TcpRpcClientOptions) {
    this.client = new ClientTCP({ host: options.host, port: options.port });
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** `tcp://host:port` */
  static fromUrl(url: string, timeoutMs?: number): TcpRpcClient {
    const parsed = new URL(url);
    return new TcpRpcClient({ host: parsed.hostname, port: Number(parsed.port), ...(timeoutMs ? { timeoutMs } : {}) });
  }

  async call<T>(pattern: string, payload: unknown): Promise<T> {
    let reply: RpcReply;
    try {
      reply = await callRpc(pattern, ($context) =>
        firstValueFrom(this.client.send<RpcReply, RpcEnvelope>(pattern, { $context, payload: payload ?? null }).pipe(timeout(this.timeoutMs))),
      );
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

/** Serves a service's RPC handlers over NestJS TCP at `tcp://host:port`; resolves once listening. */
export async function startTcpRpcServer(
  url: string,
  handlers: RpcHandlers,
  onUnexpected: (error: unknown) => void,
): Promise<{ close(): Promise<void> }> {
  const parsed = new URL(url);
  @Module({ controllers: [rpcController(handlers, onUnexpected)] })
  class RpcServerModule {}
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(RpcServerModule, {
    transport: Transport.TCP,
    options: { host: parsed.hostname, port: Number(parsed.port) },
    logger: ['error', 'warn'],
  });
  await app.listen();
  return { close: () => app.close() };
}
