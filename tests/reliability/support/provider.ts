/**
 * The payment provider for crash suites: the card simulator started IN the test process (its ledger survives
 * every kill of the service), behind a small proxy that delays each provider call by a random few milliseconds so
 * that kills land while calls are in flight. Like a network, the proxy delivers a request it has fully received
 * even when the caller died meanwhile: the provider acts on it, and nobody hears the answer.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSimulator, type RunningSimulator } from '@switchyard/connectors/src/simulator';
import { seededRandom, sleep, type Random } from './random';

export interface ProviderOptions {
  /** The simulator's notification signing secret (the service's MOCK_CARD_WEBHOOK_SECRET). */
  readonly webhookSecret: string;
  /** Delay of each POST, uniform in [min, max] ms. Default [0, 0]: no delay. */
  readonly latencyMs?: readonly [number, number];
  readonly random?: Random;
}

export interface LedgerCounts {
  readonly authorizations: number;
  readonly captures: number;
  readonly voids: number;
  readonly cancels: number;
  readonly refunds: number;
  readonly increments: number;
  readonly syncs: number;
}

/** The provider's view of one authorization (`GET /v1/authorizations?reference=`). */
export interface ProviderTransaction {
  readonly id: string;
  readonly reference: string;
  readonly status: string;
  readonly amount: number;
  readonly authorized_amount: number;
  readonly captured_amount: number;
  readonly refunded_amount: number;
  readonly captures: readonly { readonly id: string; readonly amount: number; readonly status: string }[];
  readonly refunds: readonly {
    readonly id: string;
    readonly amount: number;
    readonly status: string;
    readonly refund_reference?: string;
  }[];
}

/** What the checks ask of a provider: over HTTP, as any client could. */
export interface ProviderLedger {
  /** `GET /v1/ledger?reference=`: how often each operation reached the provider for our transaction id. */
  counts(reference: string): Promise<LedgerCounts>;
  /** `GET /v1/authorizations?reference=`: the latest authorization with that reference; null when none. */
  authorization(reference: string): Promise<ProviderTransaction | null>;
  /** Every reference the provider holds an authorization for (the simulator's whole ledger), when it can tell. */
  references?(): readonly string[];
}

export interface RunningProvider extends ProviderLedger {
  readonly simulator: RunningSimulator;
  /** Where the service should send provider calls (MOCK_CARD_URL): the proxy. */
  readonly url: string;
  /** Requests the proxy forwarded although their caller had gone away (killed while waiting). */
  readonly forwardedAfterCallerLeft: number;
  /** Requests the proxy forwarded in all. */
  readonly forwarded: number;
  stop(): Promise<void>;
}

export async function startProvider(options: ProviderOptions): Promise<RunningProvider> {
  const simulator = await startSimulator({ webhookSecret: options.webhookSecret });
  const random = options.random ?? seededRandom();
  const [minDelay, maxDelay] = options.latencyMs ?? [0, 0];
  let forwarded = 0;
  let orphaned = 0;
  const inFlight = new Set<Promise<unknown>>();

  const forward = (method: string, url: string, headers: IncomingHttpHeaders, body: Buffer) =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const target = new URL(url, simulator.url);
      const outgoing = httpRequest(
        target,
        { method, headers: { ...headers, host: target.host, connection: 'close' } },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () =>
            resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(chunks) }),
          );
          answer.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  const relay = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    let callerLeft = false;
    res.on('close', () => {
      if (!res.writableFinished) callerLeft = true;
    });
    if (req.method === 'POST' && maxDelay > 0) await sleep(random.int(minDelay, maxDelay));
    forwarded += 1;
    const answer = await forward(req.method ?? 'GET', req.url ?? '/', req.headers, body);
    if (callerLeft || res.destroyed) {
      orphaned += 1;
      return;
    }
    res.writeHead(answer.status, { 'content-type': answer.headers['content-type'] ?? 'application/json' });
    res.end(answer.body);
  };

  const proxy: Server = createServer((req, res) => {
    const work = relay(req, res).catch((error: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(502);
        res.end(String(error));
      }
    });
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

  const getJson = async (path: string): Promise<{ status: number; body: unknown }> => {
    const response = await fetch(`${simulator.url}${path}`);
    return { status: response.status, body: response.status === 200 ? await response.json() : null };
  };

  return {
    simulator,
    url,
    get forwarded() {
      return forwarded;
    },
    get forwardedAfterCallerLeft() {
      return orphaned;
    },
    counts: async (reference) =>
      (await getJson(`/v1/ledger?reference=${encodeURIComponent(reference)}`)).body as LedgerCounts,
    authorization: async (reference) => {
      const found = await getJson(`/v1/authorizations?reference=${encodeURIComponent(reference)}`);
      return found.status === 200 ? (found.body as ProviderTransaction) : null;
    },
    references: () => [...new Set(simulator.ledger.all().map((t) => t.reference))],
    stop: async () => {
      await Promise.allSettled([...inFlight]);
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await simulator.stop();
    },
  };
}
