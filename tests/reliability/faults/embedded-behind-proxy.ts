/**
 * The embedded runtime (one process: gateway, identity, transactions, webhooks) listening on loopback, talking to its
 * own card simulator through a `FaultProxy` (MOCK_CARD_URL = the proxy; the 3-D Secure directory too). The
 * simulator calls the gateway back directly (notifications). Short provider timeout and reconciliation delay so
 * faults resolve in seconds.
 */
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '@switchyard/connectors/src/simulator';
import { signToken } from '@switchyard/testing';
import type { AddressInfo } from 'node:net';
import { startEmbeddedFixture, type EmbeddedFixture } from '../../../services/standalone/src/embedded.fixture';
import { ApiClient } from './api-client';
import { FaultProxy } from './fault-proxy';

export interface EmbeddedBehindProxy {
  readonly fixture: EmbeddedFixture;
  readonly simulator: RunningSimulator;
  readonly proxy: FaultProxy;
  readonly baseUrl: string;
  readonly api: ApiClient;
  stop(): Promise<void>;
}

const webhookSecret = 'whsec_faults_0123456789abcdef';

export async function startEmbeddedBehindProxy(
  name: string,
  options: {
    readonly env: Readonly<Record<string, string>>;
    readonly simulator?: Partial<Omit<SimulatorOptions, 'webhookSecret'>>;
  },
): Promise<EmbeddedBehindProxy> {
  const simulator = await startSimulator({ webhookSecret, ...options.simulator });
  const proxy = await new FaultProxy(simulator.url).up();
  let fixture: EmbeddedFixture;
  try {
    fixture = await startEmbeddedFixture(
      name,
      { ...options.env, MOCK_CARD_URL: proxy.url, MOCK_CARD_WEBHOOK_SECRET: webhookSecret },
      { listen: true },
    );
  } catch (error) {
    await proxy.down();
    await simulator.stop();
    throw error;
  }
  const port = (fixture.service.gateway.app.getHttpServer().address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;
  const admin = await fixture.service.identity.apiKeyPairs.create(
    { display_name: 'faults admin', roles: ['administrator'] },
    { kind: 'operator' },
  );
  const token = await signToken({ kid: admin.kid, privateKeyPem: admin.private_key!, expiresIn: 3_600 });
  return {
    fixture,
    simulator,
    proxy,
    baseUrl,
    api: new ApiClient(
      () => baseUrl,
      async () => token,
    ),
    async stop() {
      await fixture.stop();
      await proxy.down();
      await simulator.stop();
    },
  };
}
