/**
 * `/metrics` for a process without an HTTP server of its own (identity, transactions and webhooks in the distributed
 * runtime serve RPC over TCP): a bare `node:http` listener that answers `GET /metrics` and 404 to anything else.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectProcessMetrics, metricsContentType, renderMetrics } from './registry';

export interface RunningMetricsServer {
  /** `http://host:port/metrics`. */
  readonly url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(options: {
  readonly host: string;
  readonly port: number;
}): Promise<RunningMetricsServer> {
  collectProcessMetrics();
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    renderMetrics().then(
      (text) =>
        response
          .writeHead(200, { 'content-type': metricsContentType })
          .end(request.method === 'HEAD' ? undefined : text),
      () => response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A scraper keeps its connection alive between scrapes: do not wait for it to hang up.
        server.closeAllConnections();
      }),
  };
}
