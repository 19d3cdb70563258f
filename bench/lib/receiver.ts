/**
 * A webhook receiver for benchmarks: a plain node:http server on loopback that answers every POST with 204 at once
 * and records, per delivery (event id + event name), when its FIRST attempt arrived (wall clock, ms since the epoch,
 * taken when the request's body has been read) and the body's `created_at`. Repeats of a delivery are counted, not
 * recorded again.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  /** The stored event's id (body `id`). */
  readonly eventId: string;
  /** The public event name (body `name`). */
  readonly name: string;
  /** The body's `created_at` (ms since the epoch). */
  readonly createdAtMs: number;
  /** `target.id` of the body, when present. */
  readonly targetId: string | null;
  /** When the first attempt's body had arrived (Date.now()). */
  readonly arrivedAtMs: number;
}

export class BenchWebhookReceiver {
  /** `${eventId} ${name}` → the first arrival. */
  readonly deliveries = new Map<string, ReceivedDelivery>();
  repeats = 0;
  unreadable = 0;
  private server: Server | null = null;
  private address = '';

  get url(): string {
    return this.address;
  }

  async start(): Promise<void> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const arrivedAtMs = Date.now();
        response.writeHead(204).end();
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
            id?: unknown;
            name?: unknown;
            created_at?: unknown;
            target?: { id?: unknown };
          };
          if (typeof body.id !== 'string' || typeof body.name !== 'string') throw new Error('no id or name');
          const key = `${body.id} ${body.name}`;
          if (this.deliveries.has(key)) {
            this.repeats += 1;
            return;
          }
          this.deliveries.set(key, {
            eventId: body.id,
            name: body.name,
            createdAtMs: typeof body.created_at === 'string' ? Date.parse(body.created_at) : Number.NaN,
            targetId: typeof body.target?.id === 'string' ? body.target.id : null,
            arrivedAtMs,
          });
        } catch {
          this.unreadable += 1;
        }
      });
    });
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.address = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
