/**
 * The process's one Prometheus registry. Every metric of Switchyard registers here, so one scrape of a process —
 * the gateway's `/metrics`, or a service's metrics server — shows everything that process measured (the embedded
 * runtime: every service). Instrumented code never touches prom-client: it calls the small functions beside this
 * file, which keep label values to a known, low-cardinality set (route templates, connection ids, outcomes; never a
 * transaction id, card data or a token).
 */
import { collectDefaultMetrics, Registry } from 'prom-client';

export const registry = new Registry();

/** `text/plain; version=0.0.4; charset=utf-8`: the exposition format `renderMetrics` writes. */
export const metricsContentType: string = registry.contentType;

let collectingProcessMetrics = false;

/**
 * prom-client's default metrics (`process_*`, `nodejs_*`: CPU, memory, event loop lag, GC, handles), left
 * unprefixed so the usual Node.js dashboards read them. Once per process; called by whatever serves `/metrics`, so
 * a process with metrics turned off pays for none of it.
 */
export function collectProcessMetrics(): void {
  if (collectingProcessMetrics) return;
  collectingProcessMetrics = true;
  collectDefaultMetrics({ register: registry });
}

/** The whole registry in the Prometheus text format. */
export function renderMetrics(): Promise<string> {
  return registry.metrics();
}

/** Seconds since `startedAt` (a `performance.now()` reading). */
export const secondsSince = (startedAt: number): number => (performance.now() - startedAt) / 1000;
