import { ApiError } from '@switchyard/api';
import type { RpcCallOptions, RpcClient } from './rpc';

/**
 * The gateway's one RpcClient in the distributed runtime: a pattern's first segment names the service that serves
 * it (`identity.roles.list` → identity), and each service has its own client.
 */
export class RoutingRpcClient implements RpcClient {
  constructor(private readonly services: Readonly<Record<string, RpcClient>>) {}

  call<T>(pattern: string, payload: unknown, options?: RpcCallOptions): Promise<T> {
    const service = this.services[pattern.slice(0, pattern.indexOf('.'))];
    if (!service) return Promise.reject(ApiError.badGateway(new Error(`no service serves ${pattern}`)));
    return service.call<T>(pattern, payload, options);
  }

  async close(): Promise<void> {
    // One client may serve several prefixes (a process hosting two services): closed once.
    await Promise.all([...new Set(Object.values(this.services))].map((client) => client.close()));
  }
}
