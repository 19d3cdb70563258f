/**
 * The real providers' acceptance scenarios (issue 20) in the distributed runtime: identity, transactions, webhooks
 * and two gateways as separate processes (tests/distributed.fixture.ts, calls between them in mutual TLS), with the
 * local Adyen and Stripe fakes as the providers. The transactions process calls the fakes; the fakes' notifications
 * reach the first gateway at each connection's `webhook_url` and go on to transactions over RPC. The same scenarios
 * as the embedded runtime's (provider-scenarios.ts), for both providers, every request validated by its fake; then
 * no test card number in the data directory, the processes' output, or these transactions' Kafka messages.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  providerDocumentsDir,
  startAdyenFake,
  startStripeFake,
  type RunningAdyenFake,
  type RunningStripeFake,
} from '@switchyard/connectors/src/testing';
import { transactionsTopic } from '@switchyard/contracts';
import { describeWithInfra, signToken, waitFor, type Availability } from '@switchyard/testing';
import request from 'supertest';
import {
  distributedInfrastructure,
  readTopics,
  startDistributedRuntime,
  type DistributedRuntime,
} from '../distributed.fixture';
import {
  adyenCredentials,
  adyenScenarioParts,
  createAdyenConnections,
  createStripeConnections,
  stripeScenarioParts,
} from './provider-connections';
import { providerScenarios, type ProviderGateway } from './provider-scenarios';

const infrastructure = await distributedInfrastructure();
const documents = providerDocumentsDir();
const availability: Availability = !infrastructure.available
  ? infrastructure
  : documents
    ? { available: true }
    : { available: false, reason: "the providers' documents are not on this machine (shared/reference/providers)" };

/** The card provider-scenarios.ts pays with. */
const PAN = '4111111111111111';
const run = randomBytes(3).toString('hex');
const accounts = { adyen: `adyen-${run}`, stripe: `stripe-${run}` } as const;

describeWithInfra(
  'the real providers in the distributed runtime: Adyen and Stripe fakes behind separate service processes',
  availability,
  () => {
    let runtime: DistributedRuntime;
    let adyen: RunningAdyenFake;
    let stripe: RunningStripeFake;
    let token = '';
    const gateway: ProviderGateway = {
      get baseUrl() {
        return runtime.baseUrl;
      },
      headers: (account) => ({ authorization: `Bearer ${token}`, 'x-service-merchant-account-id': account }),
    };

    beforeAll(async () => {
      adyen = await startAdyenFake({ ...adyenCredentials, slowAnswerMs: 2_500 });
      // Search lags behind its writes, as Stripe's does: reconciliation meets the timed-out intent before search does.
      stripe = await startStripeFake({ slowAnswerMs: 2_500, searchLagMs: 6_000 });
      runtime = await startDistributedRuntime({
        name: 'providers-distributed',
        logLevel: 'trace',
        env: { PROVIDER_TIMEOUT_MS: '1500', RECONCILE_AFTER_MS: '2000' },
      });
      const key = await runtime.createApiKey('providers-e2e', ['administrator']);
      token = await signToken({ kid: key.kid, privateKeyPem: key.private_key, expiresIn: 1_800 });
      await waitFor(
        'the new key accepted',
        async () =>
          (await request(runtime.baseUrl).get('/merchant-accounts').set(gateway.headers('default'))).status === 200
            ? true
            : undefined,
        10_000,
        runtime.describe,
      );
      for (const account of Object.values(accounts)) {
        await request(runtime.baseUrl)
          .post('/merchant-accounts')
          .set(gateway.headers('default'))
          .send({ id: account, display_name: account, multiple_captures_enabled: true })
          .expect(201);
      }
    }, 180_000);

    afterAll(async () => {
      await runtime?.stop();
      await adyen?.stop();
      await stripe?.stop();
    });

    describe('adyen-card', () => {
      let connections = { connectionId: '', failingConnectionId: '' };
      beforeAll(async () => {
        connections = await createAdyenConnections(gateway, accounts.adyen, adyen);
      });

      providerScenarios({
        gateway: () => gateway,
        account: () => accounts.adyen,
        connectionId: () => connections.connectionId,
        failingConnectionId: () => connections.failingConnectionId,
        ...adyenScenarioParts(() => adyen),
      });

      it('sent an Idempotency-Key on every POST; every request, answer and notification validated and accepted', () => {
        const posts = adyen.requests.filter((r) => r.method === 'POST');
        expect(posts.length).toBeGreaterThanOrEqual(10);
        expect(posts.filter((r) => !r.idempotencyKey)).toEqual([]);
        expect(adyen.violations).toEqual([]);
        expect(
          adyen.deliveries
            .filter((d) => d.status !== 200 || d.answer !== '[accepted]')
            .map((d) => `${d.eventCode} ${d.status} ${d.answer}`),
        ).toEqual([]);
      });
    });

    describe('stripe-card', () => {
      let connections = { connectionId: '', failingConnectionId: '' };
      beforeAll(async () => {
        connections = await createStripeConnections(gateway, accounts.stripe, stripe);
      });

      providerScenarios({
        gateway: () => gateway,
        account: () => accounts.stripe,
        connectionId: () => connections.connectionId,
        failingConnectionId: () => connections.failingConnectionId,
        ...stripeScenarioParts(() => stripe),
      });

      it('sent an Idempotency-Key on every POST; every request matched the declared parameters', () => {
        const posts = stripe.requests.filter((r) => r.method === 'POST');
        expect(posts.length).toBeGreaterThanOrEqual(10);
        expect(posts.filter((r) => !r.idempotencyKey)).toEqual([]);
        expect(stripe.violations).toEqual([]);
      });
    });

    it('left no test card number in the data directory, the output or these transactions’ Kafka messages', async () => {
      const ids = new Set<string>();
      for (const account of Object.values(accounts)) {
        const page = await request(runtime.baseUrl)
          .get('/transactions?limit=100')
          .set(gateway.headers(account))
          .expect(200);
        for (const t of page.body.items as { id: string }[]) ids.add(t.id);
      }
      expect(ids.size).toBeGreaterThanOrEqual(14);

      const files = fs
        .readdirSync(runtime.dataDir, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile());
      expect(files.length).toBeGreaterThan(0);
      const inFiles = files
        .map((entry) => path.join(entry.parentPath, entry.name))
        .filter((file) => fs.readFileSync(file).includes(PAN));
      expect(inFiles).toEqual([]);
      expect(runtime.describe().includes(PAN)).toBe(false);

      const messages = await readTopics([transactionsTopic], {
        until: (read) => [...ids].every((id) => read.some((m) => m.value?.toString().includes(id))),
        timeoutMs: 60_000,
      });
      const ours = messages.filter((m) => [...ids].some((id) => m.value?.toString().includes(id)));
      expect(ours.length).toBeGreaterThanOrEqual(ids.size);
      expect(
        ours.filter((m) => Buffer.concat([m.key ?? Buffer.alloc(0), m.value ?? Buffer.alloc(0)]).includes(PAN)),
      ).toEqual([]);
    }, 90_000);
  },
);
