/**
 * Test fixtures of the delivery slice: an in-memory subscription directory, a fake RPC client for the targets, a
 * real HTTP receiver on 127.0.0.1, bus messages as the relays publish them, and a harness that runs the slice on
 * an in-process bus and a SQLite file (reopened by `restart`, as after a crash).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ApiError } from '@switchyard/api';
import { InProcessBroker, InProcessMessageBus } from '@switchyard/bus';
import {
  EVENT_ID_HEADER,
  identityTopic,
  transactionsTopic,
  type EventMessage,
  type WebhookEvent,
} from '@switchyard/contracts';
import type { EventStore } from '@switchyard/eventstore';
import { EMBEDDED_CALL, type RpcClient, type RpcHandlers } from '@switchyard/rpc';
import type { ServiceContext } from '@switchyard/service';
import type { SubscriptionDirectory, SubscriptionTarget } from '../subscription-directory';
import { Deliveries, type DeliveriesOptions } from './deliveries.slice';

// ---- the subscription directory ---------------------------------------------------------------------------------

export class FakeDirectory implements SubscriptionDirectory {
  readonly subscriptions = new Map<string, SubscriptionTarget>();
  readonly secrets = new Map<string, { id: string; secret: string }[]>();

  add(
    subscription: Partial<SubscriptionTarget> & { url: string },
    secrets: readonly string[] = [],
  ): SubscriptionTarget {
    const target: SubscriptionTarget = {
      id: randomUUID(),
      merchantAccountId: 'default',
      eventNames: null,
      active: true,
      basicAuth: null,
      ...subscription,
    };
    this.subscriptions.set(target.id, target);
    this.secrets.set(
      target.id,
      secrets.map((secret) => ({ id: randomUUID(), secret })),
    );
    return target;
  }

  update(id: string, changes: Partial<SubscriptionTarget>): void {
    const current = this.subscriptions.get(id);
    if (!current) throw new Error(`no subscription ${id}`);
    this.subscriptions.set(id, { ...current, ...changes });
  }

  delete(id: string): void {
    this.subscriptions.delete(id);
  }

  revoke(id: string, secret: string): void {
    this.secrets.set(
      id,
      (this.secrets.get(id) ?? []).filter((candidate) => candidate.secret !== secret),
    );
  }

  matching(merchantAccountId: string | null, eventName: string): readonly SubscriptionTarget[] {
    return [...this.subscriptions.values()].filter(
      (s) =>
        s.active &&
        (s.merchantAccountId === null || s.merchantAccountId === merchantAccountId) &&
        (s.eventNames === null || s.eventNames.includes(eventName)),
    );
  }

  find(subscriptionId: string): SubscriptionTarget | null {
    return this.subscriptions.get(subscriptionId) ?? null;
  }

  activeSecrets(subscriptionId: string): readonly { readonly id: string; readonly secret: string }[] {
    return this.subscriptions.has(subscriptionId) ? (this.secrets.get(subscriptionId) ?? []) : [];
  }
}

// ---- the RPC client behind the targets -------------------------------------------------------------------------

/** Answers the target RPCs with a small resource per id; `missing` ids answer 404. */
export class FakeRpc implements RpcClient {
  readonly calls: Array<{ pattern: string; payload: unknown }> = [];
  readonly missing = new Set<string>();
  failing: ApiError | null = null;

  constructor(private readonly extra: RpcHandlers = {}) {}

  async call<T>(pattern: string, payload: unknown): Promise<T> {
    this.calls.push({ pattern, payload });
    if (this.failing) throw this.failing;
    const extra = this.extra[pattern];
    if (extra) return (await extra(payload, EMBEDDED_CALL)) as T;
    const p = payload as Record<string, string>;
    const id = p.capture_id ?? p.refund_id ?? p.transaction_id ?? p.id ?? '';
    if (this.missing.has(id)) throw ApiError.notFound();
    const type = p.capture_id
      ? 'transaction-capture'
      : p.refund_id
        ? 'refund'
        : p.transaction_id
          ? 'transaction'
          : 'api-key-pair';
    return { type, id, ...(p.merchant_account_id ? { merchant_account_id: p.merchant_account_id } : {}) } as T;
  }

  async close(): Promise<void> {}
}

// ---- the receiver ----------------------------------------------------------------------------------------------

export interface Received {
  /** The request's path and query. */
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly rawBody: string;
  readonly event: WebhookEvent;
  readonly webhookId: string;
  /** The answer given: a status, or none (the request was left hanging or cut). */
  readonly answered: number | null;
}

/** How the receiver answers a request: a status, after `delayMs` if given, or once `until` has settled. */
export type Answer = number | { status: number; delayMs: number } | { status: number; until: Promise<unknown> };

export class Receiver {
  readonly requests: Received[] = [];
  /** Decides each answer; default 200. */
  answer: (request: Omit<Received, 'answered'>, index: number) => Answer = () => 200;
  private server: http.Server | null = null;
  private readonly sockets = new Set<import('node:net').Socket>();
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  /** Requests answered 2xx. */
  get succeeded(): Received[] {
    return this.requests.filter(
      (request) => request.answered !== null && request.answered >= 200 && request.answered < 300,
    );
  }

  /** `host`: the address to listen on (loopback by default). */
  async start(port = this.port, host = '127.0.0.1'): Promise<this> {
    const server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        const base = {
          url: request.url ?? '',
          headers: request.headers,
          rawBody,
          event: JSON.parse(rawBody) as WebhookEvent,
          webhookId: String(request.headers['x-service-webhook-id']),
        };
        const answer = this.answer(base, this.requests.length);
        type Given = { status: number; delayMs?: number; until?: Promise<unknown> };
        const given: Given = typeof answer === 'number' ? { status: answer } : answer;
        const { status, delayMs = 0, until } = given;
        const entry = { ...base, answered: null as number | null };
        this.requests.push(entry);
        const reply = () => {
          if (response.destroyed) return;
          entry.answered = status;
          response.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
        };
        if (until) void until.finally(reply);
        else if (delayMs > 0) setTimeout(reply, delayMs);
        else reply();
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(port, host, resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  /** Stops listening: later deliveries find the connection refused. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

// ---- bus messages ------------------------------------------------------------------------------------------------

let position = 0;

export function eventMessage(options: {
  streamId: string;
  type: string;
  names?: readonly string[];
  data?: Record<string, unknown>;
  occurredAt?: string;
  id?: string;
}): EventMessage {
  position += 1;
  const at = options.occurredAt ?? new Date().toISOString();
  return {
    id: options.id ?? randomUUID(),
    type: options.type,
    name: options.names?.[0] ?? null,
    names: [...(options.names ?? [])],
    stream_id: options.streamId,
    revision: 0,
    position: String(position),
    recorded_at: at,
    occurred_at: at,
    correlation_id: null,
    causation_id: null,
    schema_version: 1,
    data: { at, ...options.data },
    metadata: {},
  };
}

export const transactionCreated = (
  transactionId: string,
  merchantAccountId = 'default',
  occurredAt?: string,
): EventMessage =>
  eventMessage({
    streamId: `transaction-${transactionId}`,
    type: 'TransactionCreated',
    data: { transactionId, merchantAccountId },
    ...(occurredAt ? { occurredAt } : {}),
  });

export const transactionEvent = (
  transactionId: string,
  type: string,
  names: readonly string[],
  data: Record<string, unknown> = {},
  occurredAt?: string,
): EventMessage =>
  eventMessage({ streamId: `transaction-${transactionId}`, type, names, data, ...(occurredAt ? { occurredAt } : {}) });

// ---- the harness -------------------------------------------------------------------------------------------------

export const quietBus = { onHandlerFailure: () => undefined, redelivery: { initialDelayMs: 10, maxDelayMs: 50 } };

/** Fast retries for tests. */
export const fastRetry = { baseMs: 20, maxMs: 80, maxAgeMs: 60_000, timeoutMs: 2_000 };

export class Harness {
  readonly broker = new InProcessBroker();
  readonly directory = new FakeDirectory();
  readonly rpc = new FakeRpc();
  readonly errors: Array<{ error: unknown; what: string }> = [];
  readonly file: string;
  private readonly dir: string;
  private publisher = new InProcessMessageBus({ broker: this.broker, ...quietBus });
  private running: { deliveries: Deliveries; bus: InProcessMessageBus; db: Database.Database } | null = null;
  /** The slice's clock (its context's `now`): a test may set one it moves itself before `start`. */
  now: () => Date = () => new Date();

  constructor(private readonly options: Partial<Omit<DeliveriesOptions, 'bus' | 'rpc'>> = {}) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-deliveries-'));
    this.file = path.join(this.dir, 'webhooks.db');
  }

  get deliveries(): Deliveries {
    if (!this.running) throw new Error('not running');
    return this.running.deliveries;
  }

  get db(): Database.Database {
    if (!this.running) throw new Error('not running');
    return this.running.db;
  }

  /** Opens the SQLite file and starts a new slice on it (its bus client joins the group on the shared broker). */
  async start(overrides: Partial<Omit<DeliveriesOptions, 'bus' | 'rpc'>> = {}): Promise<Deliveries> {
    const db = new Database(this.file);
    db.pragma('journal_mode = WAL');
    const context: ServiceContext = {
      store: {} as EventStore,
      db,
      now: () => this.now(),
      newId: randomUUID,
      catchUp: async () => undefined,
    };
    const bus = new InProcessMessageBus({ broker: this.broker, ...quietBus });
    const deliveries = new Deliveries(context, this.directory, {
      bus,
      rpc: this.rpc,
      retry: fastRetry,
      workerIntervalMs: 10,
      onError: (error, what) => this.errors.push({ error, what }),
      render: { catchUpDelaysMs: [5, 10] },
      // The receivers listen on loopback (WEBHOOK_ALLOW_PRIVATE_URLS, as in local development).
      allowPrivateUrls: true,
      ...this.options,
      ...overrides,
    });
    await deliveries.start();
    this.running = { deliveries, bus, db };
    return deliveries;
  }

  /** Stops the slice and closes its file, as a shutdown (or, for what is on disk, a crash) does. */
  async stop(): Promise<void> {
    const running = this.running;
    this.running = null;
    if (!running) return;
    await running.deliveries.stop();
    await running.bus.close();
    running.db.close();
  }

  /**
   * As a crash: the SQLite file is closed first, so whatever the slice was doing (an attempt under way, a message
   * being stored) cannot be recorded any more; then the slice is stopped, only to free its timers and bus client.
   */
  async crash(): Promise<void> {
    const running = this.running;
    this.running = null;
    if (!running) return;
    running.db.close();
    await running.deliveries.stop();
    await running.bus.close();
  }

  async restart(overrides: Partial<Omit<DeliveriesOptions, 'bus' | 'rpc'>> = {}): Promise<Deliveries> {
    await this.stop();
    return this.start(overrides);
  }

  async publish(...messages: EventMessage[]): Promise<void> {
    for (const message of messages) {
      const topic = message.stream_id.startsWith('api-key-pair-') ? identityTopic : transactionsTopic;
      await this.publisher.publish(topic, [
        { key: message.stream_id, value: JSON.stringify(message), headers: { [EVENT_ID_HEADER]: message.id } },
      ]);
    }
  }

  /** Calls one of the slice's RPC handlers, through JSON as the transports do. */
  async call<T>(pattern: string, payload: unknown): Promise<T> {
    const handler = this.deliveries.rpcHandlers()[pattern];
    if (!handler) throw new Error(`no handler for ${pattern}`);
    return JSON.parse(JSON.stringify(await handler(JSON.parse(JSON.stringify(payload)), EMBEDDED_CALL))) as T;
  }

  async close(): Promise<void> {
    await this.stop();
    await this.publisher.close();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export const count = (db: Database.Database, sql: string, ...params: unknown[]): number =>
  (db.prepare(sql).get(...params) as { n: number }).n;
