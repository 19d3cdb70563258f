/**
 * A minimal webhook receiver for Switchyard (docs/events.md), on node:http only:
 *
 *   1. read the raw body (the signature covers the bytes, not the parsed JSON);
 *   2. verify it with `verifyWebhook` against the subscription's signing secrets (several during a rotation);
 *   3. skip a delivery already handled, by its `x-service-webhook-id` (deliveries are at least once);
 *   4. answer 2xx quickly; anything else (or no answer within WEBHOOK_TIMEOUT_MS) makes Switchyard retry.
 *
 * Run it from the repository root, with `@switchyard/client` built (`npm run build:client`):
 *
 *   WEBHOOK_SECRETS=whsec_... PORT=3001 node -r ./scripts/register.cjs examples/webhook-receiver/receiver.ts
 *
 * and subscribe `http://127.0.0.1:3001/` (the webhooks service refuses loopback URLs unless
 * WEBHOOK_ALLOW_PRIVATE_URLS=true).
 */
import http from 'node:http';
import { verifyWebhook } from '@switchyard/client';

/** The request body Switchyard sends: `{type: "event", id, name, created_at, merchant_account_id, target}`. */
import type { WebhookEvent } from '@switchyard/contracts';

export type { WebhookEvent };

/**
 * The webhook ids already handled. In memory here, bounded; a real receiver keeps them in its database (in the
 * same transaction as what it does with the event) for longer than WEBHOOK_MAX_AGE_MS (7 days).
 */
export class SeenWebhookIds {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity = 100_000) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    this.ids.add(id);
    if (this.ids.size > this.capacity) this.ids.delete(this.ids.values().next().value as string);
  }
}

export interface ReceiverOptions {
  /** The subscription's active signing secrets: any one matching signature is enough. */
  readonly secrets: readonly string[];
  /** What to do with each event, once. A rejection answers 500, so that Switchyard delivers it again. */
  readonly onEvent: (event: WebhookEvent, webhookId: string) => void | Promise<void>;
  readonly seen?: SeenWebhookIds;
  /** How far the signed timestamp may be from this machine's clock (default 300 s). */
  readonly toleranceSeconds?: number;
  readonly now?: () => Date;
  /** Larger bodies are refused with 413 (default 1 MiB). */
  readonly maxBodyBytes?: number;
}

class BodyTooLarge extends Error {}

function readRawBody(request: http.IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new BodyTooLarge());
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

const reply = (response: http.ServerResponse, status: number, message: string): void => {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${message}\n`);
};

/** The request handler: pass it to `http.createServer`. */
export function createWebhookHandler(
  options: ReceiverOptions,
): (request: http.IncomingMessage, response: http.ServerResponse) => Promise<void> {
  const seen = options.seen ?? new SeenWebhookIds();
  /** Deliveries being handled right now: a concurrent repeat is told to come back later (409), not acknowledged. */
  const inFlight = new Set<string>();

  return async (request, response) => {
    if (request.method !== 'POST') {
      response.setHeader('allow', 'POST');
      return reply(response, 405, 'method not allowed');
    }
    let rawBody: Buffer;
    try {
      rawBody = await readRawBody(request, options.maxBodyBytes ?? 1024 * 1024);
    } catch (error) {
      return reply(
        response,
        error instanceof BodyTooLarge ? 413 : 400,
        error instanceof BodyTooLarge ? 'body too large' : 'unreadable body',
      );
    }

    const verified = verifyWebhook(request.headers, rawBody, options.secrets, {
      ...(options.toleranceSeconds !== undefined ? { toleranceSeconds: options.toleranceSeconds } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
    if (!verified.ok) return reply(response, 400, `invalid webhook: ${verified.reason}`);

    const webhookId = verified.webhookId;
    if (seen.has(webhookId)) return reply(response, 200, 'duplicate: already handled');
    if (inFlight.has(webhookId)) return reply(response, 409, 'being handled: retry later');

    let event: WebhookEvent;
    try {
      event = JSON.parse(rawBody.toString('utf8')) as WebhookEvent;
    } catch {
      return reply(response, 400, 'the body is not JSON');
    }

    inFlight.add(webhookId);
    try {
      await options.onEvent(event, webhookId);
      seen.add(webhookId);
      reply(response, 200, 'ok');
    } catch (error) {
      reply(response, 500, `failed: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      inFlight.delete(webhookId);
    }
  };
}

/** The secrets from WEBHOOK_SECRETS (comma separated) or WEBHOOK_SECRET. */
export const secretsFromEnv = (env: NodeJS.ProcessEnv): string[] =>
  (env.WEBHOOK_SECRETS ?? env.WEBHOOK_SECRET ?? '')
    .split(',')
    .map((secret) => secret.trim())
    .filter(Boolean);

if (require.main === module) {
  const secrets = secretsFromEnv(process.env);
  if (secrets.length === 0) {
    process.stderr.write(
      'Set WEBHOOK_SECRETS to the signing secret(s) of the subscription (POST /webhook-subscriptions/{id}/secrets)\n',
    );
    process.exit(1);
  }
  const handler = createWebhookHandler({
    secrets,
    onEvent: (event, webhookId) => {
      const target = event.target as { type?: string; id?: string; status?: string };
      process.stdout.write(
        `${event.created_at} ${event.name} ${target.type ?? '?'} ${target.id ?? '?'}${target.status ? ` (${target.status})` : ''} [webhook ${webhookId}]\n`,
      );
    },
  });
  const server = http.createServer((request, response) => void handler(request, response));
  const port = Number(process.env.PORT ?? 3001);
  server.listen(port, process.env.HOST ?? '127.0.0.1', () =>
    process.stdout.write(`webhook receiver listening on http://${process.env.HOST ?? '127.0.0.1'}:${port}/\n`),
  );
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => server.close(() => process.exit(0)));
}
