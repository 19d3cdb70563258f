/**
 * adyen-card in the embedded runtime (issue 20), against the local Adyen fake: every request the connector sends is
 * validated against Adyen's Checkout v71 document, every notification against Webhooks-v1 with a real HMAC.
 * Adyen answers modifications `received`: captures, refunds, voids and increments settle by notification.
 */
import { adyenScenarioAmounts, skipWithoutProviderDocuments, startAdyenFake, type RunningAdyenFake } from '@switchyard/connectors/src/testing';
import { providerScenarios } from '../../../tests/providers/provider-scenarios';
import { startHarness, type Harness } from './transactions.harness';

const skip = skipWithoutProviderDocuments('adyen-card (embedded runtime)');
const account = 'adyen-shop';
const apiKey = 'AQE_test_api_key_0123456789';
const hmacKey = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
let h: Harness;
let fake: RunningAdyenFake;
let connectionId = '';
let failingConnectionId = '';

async function createAdyenConnection(merchantAccount: string, position: number): Promise<string> {
  const response = await h
    .http()
    .post('/payment-services')
    .set(h.headers(account))
    .send({
      display_name: `Adyen ${merchantAccount}`,
      payment_service_definition_id: 'adyen-card',
      position,
      fields: [
        { key: 'api_key', value: apiKey },
        { key: 'merchant_account', value: merchantAccount },
        { key: 'hmac_key', value: hmacKey },
        { key: 'api_base_url', value: fake.url },
      ],
      accepted_currencies: ['EUR'],
      accepted_countries: ['NL'],
    })
    .expect(201);
  fake.webhookUrls.set(merchantAccount, response.body.webhook_url as string);
  return response.body.id as string;
}

describe.skipIf(skip)('adyen-card (embedded runtime)', () => {
  beforeAll(async () => {
    fake = await startAdyenFake({ apiKey, hmacKey, slowAnswerMs: 2_500 });
    h = await startHarness('adyen-card', { env: { PROVIDER_TIMEOUT_MS: '1500', RECONCILE_AFTER_MS: '2000' } });
    await h.createAccount(account, { multiple_captures_enabled: true });
    failingConnectionId = await createAdyenConnection('SwitchyardDown', 0);
    fake.unavailableAccounts.add('SwitchyardDown');
    connectionId = await createAdyenConnection('SwitchyardShop', 1);
  }, 30_000);

  afterAll(async () => {
    await h?.stop();
    await fake?.stop();
  });

  it('lists the definition with its fields; a connection never answers its secrets', async () => {
    const definition = (await h.http().get('/payment-service-definitions/adyen-card').set(h.headers()).expect(200)).body;
    expect(definition.fields.map((f: { key: string; secret: boolean }) => [f.key, f.secret])).toEqual([
      ['api_key', true],
      ['merchant_account', false],
      ['hmac_key', true],
      ['live_endpoint_url_prefix', false],
      ['api_base_url', false],
    ]);
    const connection = (await h.http().get(`/payment-services/${connectionId}`).set(h.headers(account)).expect(200)).body;
    expect(connection.fields.map((f: { key: string }) => f.key).sort()).toEqual(['api_base_url', 'merchant_account']);
    expect(JSON.stringify(connection)).not.toContain(apiKey);
    expect(JSON.stringify(connection)).not.toContain(hmacKey);
  });

  providerScenarios({
    gateway: () => h,
    account: () => account,
    connectionId: () => connectionId,
    failingConnectionId: () => failingConnectionId,
    amounts: { decline: adyenScenarioAmounts.insufficientFunds, declineErrorCode: 'insufficient_funds', declineRawCode: '12', slowAnswer: adyenScenarioAmounts.slowAnswer },
    replayNotification: async (id) => {
      const delivered = fake.deliveries.find((d) => d.eventCode === 'AUTHORISATION' && d.body.includes(id));
      if (!delivered) throw new Error('no AUTHORISATION notification was delivered');
      const answer = await fake.post('SwitchyardShop', delivered.body);
      expect(answer.text).toBe('[accepted]');
      return answer.status;
    },
    forgeNotification: async (id) => {
      const delivered = fake.deliveries.find((d) => d.eventCode === 'AUTHORISATION' && d.body.includes(id));
      if (!delivered) throw new Error('no AUTHORISATION notification was delivered');
      // The same notification saying the payment was refused: its signature no longer matches.
      return (await fake.post('SwitchyardShop', delivered.body.replace('"success":"true"', '"success":"false"'))).status;
    },
  });

  it('sent an Idempotency-Key on every POST, and every request, answer and notification validated', () => {
    const posts = fake.requests.filter((r) => r.method === 'POST');
    expect(posts.length).toBeGreaterThanOrEqual(10);
    expect(posts.filter((r) => !r.idempotencyKey)).toEqual([]);
    expect(fake.violations).toEqual([]);
    expect(fake.deliveries.every((d) => d.status === 200 && d.answer === '[accepted]')).toBe(true);
  });

  it('no test card number left the vault: not in a response, nor in the data directory', () => {
    expect(h.leaks).toEqual([]);
    expect(h.filesWithPan()).toEqual([]);
  });
});
