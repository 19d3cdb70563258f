/**
 * The gateway's Prometheus endpoint and its HTTP metrics. `GET /metrics` is a bare Fastify route, beside the API
 * rather than in it: no token (like /healthz), not in the OpenAPI document, and it answers the whole process's
 * registry — in the embedded runtime every service's metrics. Every answer, matched or not, is counted under its
 * route template (`unmatched` when no route took it).
 */
import type { FastifyInstance } from 'fastify';
import { collectProcessMetrics, metricsContentType, observeHttpRequest, renderMetrics, routeLabel } from '@switchyard/metrics';

export function registerMetrics(fastify: FastifyInstance): void {
  collectProcessMetrics();
  fastify.addHook('onResponse', (request, reply, done) => {
    observeHttpRequest({ method: request.method, route: routeLabel(request.routeOptions.url), status: reply.statusCode, seconds: reply.elapsedTime / 1000 });
    done();
  });
  fastify.get('/metrics', async (_request, reply) => {
    reply.header('content-type', metricsContentType);
    return renderMetrics();
  });
}
