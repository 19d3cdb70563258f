/**
 * The gateway's HTTP metrics: every answer, matched or not, counted under its route template (`unmatched` when no
 * route took it). The metrics themselves are served only on METRICS_PORT (`startMetricsServer`, started by
 * `startGateway`), never on the API's port (issue 22, item 7): that port faces the internet, and the registry tells
 * traffic volumes, error rates and every route an attacker could probe.
 */
import type { FastifyInstance } from 'fastify';
import { collectProcessMetrics, observeHttpRequest, routeLabel } from '@switchyard/metrics';

export function registerMetrics(fastify: FastifyInstance): void {
  collectProcessMetrics();
  fastify.addHook('onResponse', (request, reply, done) => {
    observeHttpRequest({
      method: request.method,
      route: routeLabel(request.routeOptions.url),
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
    done();
  });
}
