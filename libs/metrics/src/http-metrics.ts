/**
 * The gateway's HTTP traffic and its refusals: requests by method, route template and status, their latency, and
 * enumeration rate-limit refusals. Labels are route templates (`/transactions/{transaction_id}`), never a URL.
 */
import { Counter, Histogram } from 'prom-client';
import { registry } from './registry';

const httpRequests = new Counter({
  name: 'switchyard_http_requests_total',
  help: 'HTTP requests answered by the gateway, by method, route template (`unmatched`: no route) and status code.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

const httpRequestDuration = new Histogram({
  name: 'switchyard_http_request_duration_seconds',
  help: 'Time from receiving an HTTP request to having sent its answer, by method and route template.',
  labelNames: ['method', 'route'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

const rateLimitRefusals = new Counter({
  name: 'switchyard_rate_limit_refusals_total',
  help: 'Requests refused with 429 by the enumeration rate limit, by limit (`embed-token`, `checkout-session`).',
  labelNames: ['limit'] as const,
  registers: [registry],
});

const knownMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * The route label of a request: the router's template in the API's own style (`/transactions/:transaction_id` →
 * `/transactions/{transaction_id}`), or `unmatched` when no route took it (a 404 for any path), so that no URL,
 * and nothing a caller typed into one, ever becomes a label.
 */
export function routeLabel(template: string | undefined): string {
  if (!template) return 'unmatched';
  return template.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

export function observeHttpRequest(request: {
  readonly method: string;
  readonly route: string;
  readonly status: number;
  readonly seconds: number;
}): void {
  const method = knownMethods.has(request.method) ? request.method : 'OTHER';
  httpRequests.inc({ method, route: request.route, status: String(request.status) });
  httpRequestDuration.observe({ method, route: request.route }, request.seconds);
}

export function countRateLimitRefusal(limit: 'embed-token' | 'checkout-session'): void {
  rateLimitRefusals.inc({ limit });
}
