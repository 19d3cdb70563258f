/**
 * An OTLP/HTTP collector for the tracing specs: a `node:http` server on 127.0.0.1 taking `POST /v1/traces` in the JSON
 * encoding, keeping every span (with its process's `service.name`) and every body as received.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

type OtlpValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };

export interface ExportedSpan {
  readonly service: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, string | number | boolean | undefined>>;
}

export const SERVER = 2;
export const CLIENT = 3;
export const PRODUCER = 4;
export const CONSUMER = 5;

const plainValue = (value: OtlpValue): string | number | boolean | undefined =>
  value.stringValue ??
  (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
  value.doubleValue ??
  value.boolValue;

const attributesOf = (list: readonly { key: string; value: OtlpValue }[] = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, plainValue(value)]));

export class OtlpCollector {
  readonly spans: ExportedSpan[] = [];
  readonly contentTypes: string[] = [];
  /** Every request body as received, for the card-number check. */
  readonly bodies: string[] = [];
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const body = Buffer.concat(chunks).toString('utf8');
      this.bodies.push(body);
      this.contentTypes.push(String(req.headers['content-type']));
      const parsed = JSON.parse(body) as {
        resourceSpans?: {
          resource?: { attributes?: { key: string; value: OtlpValue }[] };
          scopeSpans?: {
            spans?: {
              traceId: string;
              spanId: string;
              parentSpanId?: string;
              name: string;
              kind: number;
              attributes?: { key: string; value: OtlpValue }[];
            }[];
          }[];
        }[];
      };
      for (const resourceSpans of parsed.resourceSpans ?? []) {
        const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            this.spans.push({
              service,
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || undefined,
              name: span.name,
              kind: span.kind,
              attributes: attributesOf(span.attributes),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
