/**
 * A real webhook receiver for the webhook specs (embedded and distributed): a `node:http` server on 127.0.0.1,
 * programmable (`answer` decides each status; `down()` closes the port, `up()` opens the same port again), that
 * records every request it got: the raw body exactly as received, the headers, and the answer given.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { WebhookEvent } from '@switchyard/contracts';
import { artifactFile } from '@switchyard/testing';
import {
  verifyWebhook,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURES_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
} from '@switchyard/webhook-signature';

export interface ReceivedWebhook {
  /** Order of arrival, from 0. */
  readonly index: number;
  /** Date.now() when the body was complete. */
  readonly receivedAt: number;
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  /** The body exactly as received (bytes). */
  readonly raw: Buffer;
  /** The body as UTF-8. */
  readonly rawBody: string;
  readonly event: WebhookEvent;
  readonly webhookId: string;
  readonly timestamp: number;
  /** The signatures of the `x-service-webhook-signatures` header (empty when unsigned). */
  readonly signatures: readonly string[];
  /** The status answered; null when the connection went away first. */
  answered: number | null;
}

export type ReceiverAnswer = (request: Omit<ReceivedWebhook, 'answered'>) => number;

const ok = (status: number | null): boolean => status !== null && status >= 200 && status < 300;

export class WebhookReceiver {
  readonly requests: ReceivedWebhook[] = [];
  private readonly keptBodies = artifactFile('webhooks', 'receiver');
  /** Decides each answer; default 200. */
  answer: ReceiverAnswer = () => 200;
  /** How long each answer takes (a slow receiver); default 0. */
  latencyMs = 0;
  private server: http.Server | null = null;
  private readonly sockets = new Set<Socket>();
  private waiters: Array<() => void> = [];
  port = 0;

  /** The URL to subscribe (a path, so that it is not only the origin). */
  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  get listening(): boolean {
    return this.server !== null;
  }

  /** Requests answered 2xx, in order of arrival. */
  get succeeded(): ReceivedWebhook[] {
    return this.requests.filter((request) => ok(request.answered));
  }

  /** Requests of one delivery (webhook id), in order of arrival. */
  of(webhookId: string): ReceivedWebhook[] {
    return this.requests.filter((request) => request.webhookId === webhookId);
  }

  /** Requests about an event (its id, and its name when given), in order of arrival. */
  about(eventId: string, name?: string): ReceivedWebhook[] {
    return this.requests.filter(
      (request) => request.event.id === eventId && (name === undefined || request.event.name === name),
    );
  }

  /** Opens the port (the same one again after `down()`; a free one the first time). */
  async up(): Promise<this> {
    if (this.server) return this;
    const server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const raw = Buffer.concat(chunks);
        const rawBody = raw.toString('utf8');
        let event: WebhookEvent;
        try {
          event = JSON.parse(rawBody) as WebhookEvent;
        } catch {
          event = { type: 'event', id: '', name: '', created_at: '', merchant_account_id: null, target: {} };
        }
        const signatures = String(request.headers[WEBHOOK_SIGNATURES_HEADER] ?? '')
          .split(',')
          .map((value) => value.trim())
          .filter(Boolean);
        const base = {
          index: this.requests.length,
          receivedAt: Date.now(),
          path: request.url ?? '',
          headers: request.headers,
          raw,
          rawBody,
          event,
          webhookId: String(request.headers[WEBHOOK_ID_HEADER] ?? ''),
          timestamp: Number(request.headers[WEBHOOK_TIMESTAMP_HEADER]),
          signatures,
        };
        const entry: ReceivedWebhook = { ...base, answered: null };
        this.requests.push(entry);
        // Every webhook body is kept for the data-protection scan when the run keeps its artifacts.
        if (this.keptBodies) fs.appendFileSync(this.keptBodies, `${rawBody}\n`);
        let status = 500;
        try {
          status = this.answer(base);
        } catch {
          status = 500;
        }
        const reply = () => {
          // The sender went away meanwhile (timeout, crash): nothing was answered.
          if (!response.destroyed && !request.socket.destroyed) {
            entry.answered = status;
            response.writeHead(status, { 'content-type': 'text/plain' }).end(ok(status) ? 'ok' : 'no');
          }
          const waiters = this.waiters;
          this.waiters = [];
          for (const wake of waiters) wake();
        };
        if (this.latencyMs > 0) setTimeout(reply, this.latencyMs);
        else reply();
      });
    });
    server.keepAliveTimeout = 1_000;
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  /** Closes the port and every open connection: attempts now find the connection refused. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Resolves once `predicate` holds (checked after every request); rejects after `timeoutMs` with `describe()`. */
  async waitFor(
    what: string,
    predicate: () => boolean,
    timeoutMs: number,
    describe: () => string = () => '',
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `receiver: ${what} not reached within ${timeoutMs} ms (${this.requests.length} requests so far)\n${describe()}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

/** `verifyWebhook` on a received request with ONE secret (so that each secret is proved on its own). */
export const verifiesWith = (
  request: Pick<ReceivedWebhook, 'raw' | 'headers'>,
  secret: string,
  options: { toleranceSeconds?: number; now?: () => Date } = {},
) => verifyWebhook({ rawBody: request.raw, headers: request.headers, secrets: [secret], ...options });

/** Waits `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
