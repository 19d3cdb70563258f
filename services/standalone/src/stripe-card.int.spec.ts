/**
 * stripe-card in the embedded runtime (issue 20), against the local Stripe fake: answers are Stripe's own example
 * objects, every request is checked against the parameters the `stripe` package declares, events carry a real
 * `Stripe-Signature`. Captures, voids and increments answer synchronously; a lost authorization is found by our
 * reference (search) when reconciliation syncs it.
 */
import { skipWithoutProviderDocuments, startStripeFake, stripeScenarioAmounts, type RunningStripeFake } from '@switchyard/connectors/src/testing';
import { providerScenarios } from '../../../tests/providers/provider-scenarios';
import { startHarness, type Harness } from './transactions.harness';

const skip = skipWithoutProviderDocuments('stripe-card (embedded runtime)');
const account = 'stripe-shop';
const secretKey = 'sk_test_switchyard_shop_0123456789';
const downKey = 'sk_test_switchyard_down_0123456789';
const webhookSecret = 'whsec_test_switchyard_0123456789';
let h: Harness;
let fake: RunningStripeFake;
let connectionId = '';
let failingConnectionId = '';

async function createStripeConnection(key: string, position: number): Promise<string> {
  const response = await h
    .http()
    .post('/payment-services')
    .set(h.headers(account))
    .send({
      display_name: `Stripe ${position}`,
      payment_service_definition_id: 'stripe-card',
      position,
      fields: [
        { key: 'secret_key', value: key },
        { key: 'webhook_secret', value: webhookSecret },
        { key: 'api_base_url', value: fake.url },
      ],
      accepted_currencies: ['EUR'],
      accepted_countries: ['DE'],
    })
    .expect(201);
  fake.endpoints.set(key, { url: response.body.webhook_url as string, secret: webhookSecret });
  return response.body.id as string;
}

describe.skipIf(skip)('stripe-card (embedded runtime)', () => {
  beforeAll(async () => {
    fake = await startStripeFake({ slowAnswerMs: 2_500 });
    h = await startHarness('stripe-card', { env: { PROVIDER_TIMEOUT_MS: '1500', RECONCILE_AFTER_MS: '2000' } });
    await h.createAccount(account, { multiple_captures_enabled: true });
    failingConnectionId = await createStripeConnection(downKey, 0);
    fake.unavailableKeys.add(downKey);
    connectionId = await createStripeConnection(secretKey, 1);
  }, 60_000);

  afterAll(async () => {
    await h?.stop();
    await fake?.stop();
  });

  it('lists the definition with its fields; a connection never answers its secrets', async () => {
    const definition = (await h.http().get('/payment-service-definitions/stripe-card').set(h.headers()).expect(200)).body;
    expect(definition.fields.map((f: { key: string; secret: boolean }) => [f.key, f.secret])).toEqual([
      ['secret_key', true],
      ['webhook_secret', true],
      ['api_base_url', false],
    ]);
    const connection = (await h.http().get(`/payment-services/${connectionId}`).set(h.headers(account)).expect(200)).body;
    expect(connection.fields.map((f: { key: string }) => f.key)).toEqual(['api_base_url']);
    expect(JSON.stringify(connection)).not.toContain(secretKey);
  });

  providerScenarios({
    gateway: () => h,
    account: () => account,
    connectionId: () => connectionId,
    failingConnectionId: () => failingConnectionId,
    amounts: { decline: stripeScenarioAmounts.insufficientFunds, declineErrorCode: 'insufficient_funds', declineRawCode: 'insufficient_funds', slowAnswer: stripeScenarioAmounts.slowAnswer },
    replayNotification: async (id) => {
      const delivered = fake.deliveries.find((d) => d.type === 'payment_intent.amount_capturable_updated' && d.body.includes(id));
      if (!delivered) throw new Error('no payment_intent.amount_capturable_updated event was delivered');
      return (await fake.post(secretKey, delivered.body, delivered.signature)).status;
    },
    forgeNotification: async (id) => {
      const delivered = fake.deliveries.find((d) => d.type === 'payment_intent.amount_capturable_updated' && d.body.includes(id));
      if (!delivered) throw new Error('no payment_intent.amount_capturable_updated event was delivered');
      const forged = delivered.body.replace('payment_intent.amount_capturable_updated', 'payment_intent.payment_failed');
      return (await fake.post(secretKey, forged, delivered.signature)).status;
    },
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
