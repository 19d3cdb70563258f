/**
 * The floor for `authorize`: a bare Fastify server doing the same I/O as one authorization, and nothing else.
 * POST /transactions: Fastify parses the JSON body; one event-sized row (~1 KB of JSON, the event store's schema)
 * is inserted into better-sqlite3 (WAL, synchronous=FULL) in its own transaction, i.e. one durable commit; one
 * loopback HTTP call to the mock-card simulator (started in this process, as `npm start` does) with `fetch`, as
 * MockCardConnector makes it; a JSON answer.
 *
 * Run by `npm run bench` as a child process; prints `{"url": ...}` on stdout once it listens.
 *   node -r ./scripts/register.cjs bench/baselines/bare-fastify.ts
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startSimulator } from '@switchyard/connectors/src/simulator';
import Database from 'better-sqlite3';
import Fastify from 'fastify';

interface AuthorizeBody {
  readonly amount: number;
  readonly currency: string;
  readonly intent?: string;
  readonly payment_method: {
    readonly number: string;
    readonly expiration_date: string;
    readonly security_code?: string;
  };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'switchyard-bench-floor-'));
  const db = new Database(path.join(dataDir, 'floor.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  // The event store's table, written out rather than imported: the floor must not run any of our code.
  db.exec(`CREATE TABLE events (
    position    INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT    NOT NULL UNIQUE,
    stream_id   TEXT    NOT NULL,
    revision    INTEGER NOT NULL,
    type        TEXT    NOT NULL,
    data        TEXT    NOT NULL,
    metadata    TEXT    NOT NULL,
    recorded_at TEXT    NOT NULL,
    UNIQUE (stream_id, revision)
  )`);
  const insert = db.prepare(
    'INSERT INTO events (id, stream_id, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const append = db.transaction((id: string, streamId: string, data: string, metadata: string) => {
    insert.run(id, streamId, 0, 'TransactionCreated', data, metadata, new Date().toISOString());
  });

  const simulator = await startSimulator({ host: '127.0.0.1', port: 0, webhookSecret: randomUUID() });
  const app = Fastify({ logger: false });

  app.post<{ Body: AuthorizeBody }>('/transactions', async (request, reply) => {
    const body = request.body;
    const id = randomUUID();
    const card = body.payment_method;
    // An event-sized row: about 1 KB of JSON, like a TransactionCreated with its route and the card's summary.
    const data = JSON.stringify({
      transactionId: id,
      merchantAccountId: 'default',
      amount: body.amount,
      currency: body.currency,
      intent: body.intent ?? 'authorize',
      paymentMethod: {
        id: randomUUID(),
        scheme: 'visa',
        bin: card.number.slice(0, 6),
        lastFour: card.number.slice(-4),
        expirationDate: card.expiration_date,
        fingerprint: 'x'.repeat(43),
      },
      route: [{ paymentServiceId: randomUUID(), definitionId: 'mock-card', position: 1 }],
      matchedRules: [],
      buyer: null,
      cartItems: [],
      metadata: {},
      reconciliationId: randomUUID().replace(/-/g, '').slice(0, 22),
      createdAt: new Date().toISOString(),
      padding: 'p'.repeat(420),
    });
    append(randomUUID(), `transaction-${id}`, data, JSON.stringify({ correlationId: randomUUID(), causationId: null }));

    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 10_000);
    let answer: { id: string; status: string };
    try {
      const response = await fetch(new URL('/v1/authorizations', simulator.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'x-mock-card-merchant-id': 'bench' },
        body: JSON.stringify({
          merchant_id: 'bench',
          reference: id,
          amount: body.amount,
          currency: body.currency,
          payment_instrument: {
            type: 'card',
            number: card.number,
            expiration_date: card.expiration_date,
            security_code: card.security_code,
          },
          capture: body.intent === 'capture',
        }),
        signal: controller.signal,
      });
      const text = await response.text();
      if (response.status >= 400) return reply.code(502).send({ type: 'error', status: response.status });
      answer = JSON.parse(text) as { id: string; status: string };
    } finally {
      clearTimeout(timer);
    }
    return reply.code(201).send({
      type: 'transaction',
      id,
      amount: body.amount,
      currency: body.currency,
      status: answer.status === 'authorized' ? 'authorization_succeeded' : answer.status,
      payment_service_transaction_id: answer.id,
    });
  });

  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  process.stdout.write(`${JSON.stringify({ url })}\n`);
  const stop = () => {
    void app
      .close()
      .then(() => simulator.stop())
      .finally(() => {
        db.close();
        rmSync(dataDir, { recursive: true, force: true });
        process.exit(0);
      });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
