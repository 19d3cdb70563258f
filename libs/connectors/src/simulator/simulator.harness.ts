/**
 * What the simulator specs share: a simulator and a notification receiver on loopback ports, connections to the
 * simulator (mock-card by default), bounded waiting for notifications, and the buyer's browser steps (a page's
 * form posted with plain `fetch`, redirects not followed).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Connector } from '../connector';
import type { ConnectorDefinition } from '../connector-registry';
import type { MockCardConfig } from './mock-card-connector';
import { mockCardDefinition } from './mock-card-definition';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from './simulator-server';

export const webhookSecret = 'whsec_test_secret';

export interface ReceivedNotification {
  readonly raw: string;
  readonly headers: IncomingHttpHeaders;
  readonly reference: string;
}

export interface SimulatorHarness {
  readonly simulator: RunningSimulator;
  /** Every notification received so far, in arrival order. */
  readonly received: readonly ReceivedNotification[];
  notificationsFor(reference: string): ReceivedNotification[];
  /** The first `count` notifications for `reference`, once they have arrived (at most 3 s). */
  waitForNotifications(reference: string, count?: number): Promise<ReceivedNotification[]>;
  /** A connection with merchant id `merchant-1` and our receiver as notification URL, unless overridden. */
  connect(overrides?: Partial<MockCardConfig>, definition?: ConnectorDefinition<MockCardConfig>): Connector;
  stop(): Promise<void>;
}

let nextReference = 1;
export const newReference = (): string => `txn-${nextReference++}`;

export async function startSimulatorHarness(options: Partial<SimulatorOptions> = {}): Promise<SimulatorHarness> {
  const received: ReceivedNotification[] = [];
  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      received.push({ raw, headers: request.headers, reference: (JSON.parse(raw) as { reference: string }).reference });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const simulator = await startSimulator({
    webhookSecret,
    settleDelayMs: 100,
    unknownOutcomeDelayMs: 1_500,
    ...options,
  });
  const notificationsFor = (reference: string) => received.filter((r) => r.reference === reference);

  return {
    simulator,
    received,
    notificationsFor,
    async waitForNotifications(reference, count = 1) {
      const deadline = Date.now() + 3_000;
      while (notificationsFor(reference).length < count) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} notification(s) for ${reference}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return notificationsFor(reference).slice(0, count);
    },
    connect(overrides = {}, definition = mockCardDefinition) {
      return definition.create({
        baseUrl: simulator.url,
        merchantId: 'merchant-1',
        webhookSecret,
        notificationUrl: `${receiverUrl}/notifications`,
        timeoutMs: 2_000,
        ...overrides,
      });
    },
    async stop() {
      await simulator.stop();
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    },
  };
}

/** What a browser does with one of the simulator's forms: POST it, form-encoded, and not follow the 303. */
export function submitForm(url: string, fields: Readonly<Record<string, string>>): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
}
