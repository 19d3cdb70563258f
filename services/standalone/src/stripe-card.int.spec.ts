/**
 * stripe-card in the embedded runtime (issue 20), against the local Stripe fake: answers are Stripe's own example
 * objects, every request is checked against the parameters the `stripe` package declares, events carry a real
 * `Stripe-Signature`. Captures, voids and increments answer synchronously; a lost authorization is found by our
 * reference (search) when reconciliation syncs it.
 */
import {
  skipWithoutProviderDocuments,
  startStripeFake,
  type RunningStripeFake,
} from '@switchyard/connectors/src/testing';
import {
  createStripeConnections,
  stripeCredentials,
  stripeScenarioParts,
} from '../../../tests/providers/provider-connections';
import { providerScenarios } from '../../../tests/providers/provider-scenarios';
import { startHarness, type Harness } from './transactions.harness';

const skip = skipWithoutProviderDocuments('stripe-card (embedded runtime)');
const account = 'stripe-shop';
const { secretKey } = stripeCredentials;
let h: Harness;
let fake: RunningStripeFake;
let connectionId = '';
let failingConnectionId = '';

describe.skipIf(skip)('stripe-card (embedded runtime)', () => {
  beforeAll(async () => {
    // Search lags 6 s behind (Stripe: under a minute): reconciliation meets the timed-out intent before search does.
    fake = await startStripeFake({ slowAnswerMs: 2_500, searchLagMs: 6_000 });
    h = await startHarness('stripe-card', { env: { PROVIDER_TIMEOUT_MS: '1500', RECONCILE_AFTER_MS: '2000' } });
    await h.createAccount(account, { multiple_captures_enabled: true });
    ({ connectionId, failingConnectionId } = await createStripeConnections(h, account, fake));
  }, 60_000);

  afterAll(async () => {
    await h?.stop();
    await fake?.stop();
  });

  it('lists the definition with its fields; a connection never answers its secrets', async () => {
    const definition = (await h.http().get('/payment-service-definitions/stripe-card').set(h.headers()).expect(200))
      .body;
    expect(definition.fields.map((f: { key: string; secret: boolean }) => [f.key, f.secret])).toEqual([
      ['secret_key', true],
      ['webhook_secret', true],
      ['api_base_url', false],
    ]);
    const connection = (await h.http().get(`/payment-services/${connectionId}`).set(h.headers(account)).expect(200))
      .body;
    expect(connection.fields.map((f: { key: string }) => f.key)).toEqual(['api_base_url']);
    expect(JSON.stringify(connection)).not.toContain(secretKey);
  });

  providerScenarios({
    gateway: () => h,
    account: () => account,
    connectionId: () => connectionId,
    failingConnectionId: () => failingConnectionId,
    ...stripeScenarioParts(() => fake),
  });

  it('sent an Idempotency-Key on every POST, and every request matched the declared parameters', () => {
    const posts = fake.requests.filter((r) => r.method === 'POST');
    expect(posts.length).toBeGreaterThanOrEqual(10);
    expect(posts.filter((r) => !r.idempotencyKey)).toEqual([]);
    expect(fake.violations).toEqual([]);
  });

  it('no test card number left the vault: not in a response, nor in the data directory', () => {
    expect(h.leaks).toEqual([]);
    expect(h.filesWithPan()).toEqual([]);
  });
});
