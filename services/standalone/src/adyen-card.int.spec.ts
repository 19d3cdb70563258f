/**
 * adyen-card in the embedded runtime (issue 20), against the local Adyen fake: every request the connector sends is
 * validated against Adyen's Checkout v71 document, every notification against Webhooks-v1 with a real HMAC.
 * Adyen answers modifications `received`: captures, refunds, voids and increments settle by notification.
 */
import {
  skipWithoutProviderDocuments,
  startAdyenFake,
  type RunningAdyenFake,
} from '@switchyard/connectors/src/testing';
import {
  adyenCredentials,
  adyenScenarioParts,
  createAdyenConnections,
} from '../../../tests/providers/provider-connections';
import { providerScenarios } from '../../../tests/providers/provider-scenarios';
import { card, startHarness, type Harness } from './transactions.harness';

const skip = skipWithoutProviderDocuments('adyen-card (embedded runtime)');
const account = 'adyen-shop';
const { apiKey, hmacKey } = adyenCredentials;
let h: Harness;
let fake: RunningAdyenFake;
let connectionId = '';
let failingConnectionId = '';

describe.skipIf(skip)('adyen-card (embedded runtime)', () => {
  beforeAll(async () => {
    fake = await startAdyenFake({ apiKey, hmacKey, slowAnswerMs: 2_500 });
    h = await startHarness('adyen-card', { env: { PROVIDER_TIMEOUT_MS: '1500', RECONCILE_AFTER_MS: '2000' } });
    await h.createAccount(account, { multiple_captures_enabled: true });
    ({ connectionId, failingConnectionId } = await createAdyenConnections(h, account, fake));
  }, 30_000);

  afterAll(async () => {
    await h?.stop();
    await fake?.stop();
  });

  it('lists the definition with its fields; a connection never answers its secrets', async () => {
    const definition = (await h.http().get('/payment-service-definitions/adyen-card').set(h.headers()).expect(200))
      .body;
    expect(definition.fields.map((f: { key: string; secret: boolean }) => [f.key, f.secret])).toEqual([
      ['api_key', true],
      ['merchant_account', false],
      ['hmac_key', true],
      ['live_endpoint_url_prefix', false],
      ['api_base_url', false],
    ]);
    const connection = (await h.http().get(`/payment-services/${connectionId}`).set(h.headers(account)).expect(200))
      .body;
    expect(connection.fields.map((f: { key: string }) => f.key).sort()).toEqual(['api_base_url', 'merchant_account']);
    expect(JSON.stringify(connection)).not.toContain(apiKey);
    expect(JSON.stringify(connection)).not.toContain(hmacKey);
  });

  providerScenarios({
    gateway: () => h,
    account: () => account,
    connectionId: () => connectionId,
    failingConnectionId: () => failingConnectionId,
    ...adyenScenarioParts(() => fake),
  });

  describe('notifications as the Webhooks-v1 document has them', () => {
    const authorize = async () =>
      h.authorize(account, {
        amount: 10_000,
        currency: 'EUR',
        payment_method: { ...card(), security_code: '737' },
        intent: 'authorize',
        payment_service_id: connectionId,
      });
    const history = async (id: string) =>
      (await h.http().get(`/transactions/${id}/events`).set(h.headers(account)).expect(200)).body.items as unknown[];
    afterEach(() => {
      fake.autoNotify = true;
      fake.modificationAnswerDelayMs = 0;
    });

    it('one request with several items: every item verified and applied once', async () => {
      const t = await authorize();
      fake.autoNotify = false;
      await h
        .http()
        .post(`/transactions/${t.id}/capture`)
        .set(h.headers(account))
        .send({ amount: 4_000, final: false })
        .expect(200);
      await h
        .http()
        .post(`/transactions/${t.id}/capture`)
        .set(h.headers(account))
        .send({ amount: 3_000, final: true })
        .expect(200);
      const deadline = Date.now() + 5_000;
      while (fake.held.filter((d) => d.eventCode === 'CAPTURE').length < 2 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      const captures = fake.held.filter((d) => d.eventCode === 'CAPTURE');
      expect(captures).toHaveLength(2);
      expect((await h.get(account, t.id)).captured_amount).toBe(0);

      const batch = await fake.releaseTogether(captures);
      expect([batch.status, batch.answer]).toEqual([200, '[accepted]']);
      const captured = await h.waitFor(account, t.id, (x) => x.captured_amount === 7_000);
      expect(captured.status).toBe('capture_succeeded');
      const before = await history(t.id);
      expect((await fake.post('SwitchyardShop', batch.body)).status).toBe(200);
      expect(await history(t.id)).toEqual(before);
    });

    it("a capture's notification arriving before Adyen's answer to the capture settles it", async () => {
      const t = await authorize();
      fake.modificationAnswerDelayMs = 400;
      await h
        .http()
        .post(`/transactions/${t.id}/capture`)
        .set(h.headers(account))
        .send({ amount: 6_000, final: true })
        .expect(200);
      expect(fake.deliveries.some((d) => d.eventCode === 'CAPTURE' && d.body.includes(t.id) && d.status === 200)).toBe(
        true,
      );
      const captured = await h.waitFor(account, t.id, (x) => x.captured_amount === 6_000);
      expect(captured.status).toBe('capture_succeeded');
    });
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
