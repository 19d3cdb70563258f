/**
 * Checkout sessions through the existing client (`@gr4vy/sdk` 1.10.18): its own CRUD operations, and the three
 * end-to-end scenarios the client ships (`tests/checkout-sessions.test.ts` in its package), run here against our
 * runtime with the client's own setup (a fresh merchant account, a `mock-card` connection, an unknown member injected
 * into every answer). The client does not publish the fields operation: like its scenarios, the buyer's browser is
 * played by a plain `PUT /checkout/sessions/{id}/fields` without a token.
 */
import type { Gr4vy } from '@gr4vy/sdk';
import { Error400 } from '@gr4vy/sdk/models/errors/error400.js';
import { Error404 } from '@gr4vy/sdk/models/errors/error404.js';
import { CLIENT_TEST_CARD, startWireRuntime, type WireRuntime } from './wire-client';

let w: WireRuntime;
let gr4vy: Gr4vy;

beforeAll(async () => {
  w = await startWireRuntime('checkout-sessions');
  gr4vy = w.client(await w.merchantAccountWithConnection());
});
afterAll(() => w?.stop());

/** The buyer's browser: no token, the session id is the credential (the client's scenarios use PUT). */
const putFields = (sessionId: string, paymentMethod: Record<string, unknown>) =>
  fetch(`${w.baseUrl}/checkout/sessions/${sessionId}/fields`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ payment_method: paymentMethod }),
  });

describe('the client’s own end-to-end scenarios', () => {
  it('processes a payment with a checkout session', async () => {
    const checkoutSession = await gr4vy.checkoutSessions.create();
    expect(checkoutSession.id).toBeDefined();
    const response = await putFields(checkoutSession.id, {
      method: 'card',
      number: '4111111111111111',
      expiration_date: '11/25',
      security_code: '123',
    });
    expect(response.status).toBe(204);

    const transaction = await gr4vy.transactions.create({
      amount: 1299,
      currency: 'USD',
      paymentMethod: { method: 'checkout-session', id: checkoutSession.id },
    });
    expect(transaction.id).toBeDefined();
    expect(transaction.status).toBe('authorization_succeeded');
    expect(transaction.amount).toBe(1299);
  });

  it('handles the error raised on missing card data', async () => {
    const checkoutSession = await gr4vy.checkoutSessions.create();
    const refused = gr4vy.transactions.create({
      amount: 1299,
      currency: 'USD',
      paymentMethod: { method: 'checkout-session', id: checkoutSession.id },
    });
    // Spec wins: it fixes the 400 and its code, not the text the scenario matches ("Request failed validation").
    await expect(refused).rejects.toBeInstanceOf(Error400);
    await expect(refused).rejects.toMatchObject({
      data$: {
        code: 'bad_request',
        details: [{ pointer: '/payment_method/id', type: 'checkout_session_without_card' }],
      },
    });
  });

  it('handles a stored payment method', async () => {
    const paymentMethod = await gr4vy.paymentMethods.create({
      method: 'card',
      number: '4111111111111111',
      expirationDate: '11/25',
      securityCode: '123',
    });
    expect(paymentMethod.id).toBeDefined();
    const checkoutSession = await gr4vy.checkoutSessions.create();
    const response = await putFields(checkoutSession.id, { method: 'id', id: paymentMethod.id, security_code: '123' });
    expect(response.status).toBe(204);

    const transaction = await gr4vy.transactions.create({
      amount: 1299,
      currency: 'USD',
      paymentMethod: { method: 'checkout-session', id: checkoutSession.id },
    });
    expect(transaction.id).toBeDefined();
    expect(transaction.status).toBe('authorization_succeeded');
    expect(transaction.amount).toBe(1299);
  });
});

describe('a stored payment method with its security code, in a session', () => {
  it('pays as the stored method, with the code the buyer typed reaching the provider (333: no match)', async () => {
    const stored = await gr4vy.paymentMethods.create({ method: 'card', ...CLIENT_TEST_CARD });
    const session = await gr4vy.checkoutSessions.create({ amount: 1299, currency: 'USD' });
    expect((await putFields(session.id, { method: 'id', id: stored.id, security_code: '333' })).status).toBe(204);
    const shown = await gr4vy.checkoutSessions.get(session.id);
    expect(shown.paymentMethod).toMatchObject({ id: stored.id, method: 'card', label: '1111', scheme: 'visa' });

    const paid = await gr4vy.transactions.create({
      amount: 1299,
      currency: 'USD',
      paymentMethod: { method: 'checkout-session', id: session.id },
    });
    expect(paid).toMatchObject({
      status: 'authorization_succeeded',
      checkoutSessionId: session.id,
      instrumentType: 'card_token',
      cvvResponseCode: 'no_match',
    });
    expect(paid.paymentMethod).toMatchObject({ id: stored.id, label: '1111' });
    // The stored method outlives the session: deleting the used session leaves it, and it pays again by id.
    await gr4vy.checkoutSessions.delete(session.id);
    expect((await gr4vy.paymentMethods.get(stored.id)).status).toBe('succeeded');
    const again = await gr4vy.transactions.create({
      amount: 500,
      currency: 'USD',
      paymentMethod: { method: 'id', id: stored.id },
    });
    expect(again).toMatchObject({ status: 'authorization_succeeded', cvvResponseCode: 'not_provided' });
  });

  it('is refused for an id the account has no method of (400 naming payment_method.id), storing nothing', async () => {
    const session = await gr4vy.checkoutSessions.create();
    const refused = await putFields(session.id, {
      method: 'id',
      id: '00000000-0000-4000-8000-000000000001',
      security_code: '123',
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      type: 'error',
      code: 'bad_request',
      details: [{ pointer: '/payment_method/id', type: 'payment_method_not_found' }],
    });
    expect((await gr4vy.checkoutSessions.get(session.id)).paymentMethod ?? null).toBeNull();
  });

  it('is a 422 with field detail for a malformed security code, never echoing the code', async () => {
    const stored = await gr4vy.paymentMethods.create({ method: 'card', ...CLIENT_TEST_CARD });
    const session = await gr4vy.checkoutSessions.create();
    const refused = await putFields(session.id, { method: 'id', id: stored.id, security_code: '12a45' });
    expect(refused.status).toBe(422);
    const body = (await refused.json()) as { detail: { loc: string[] }[] };
    expect(body.detail[0]).toMatchObject({ loc: ['body', 'payment_method', 'security_code'] });
    expect(JSON.stringify(body)).not.toContain('12a45');
  });
});

describe('the client’s checkout session operations', () => {
  it('create (no body, and with one), get, update and delete answer what the client validates', async () => {
    const bare = await gr4vy.checkoutSessions.create();
    expect(bare.expiresAt.getTime()).toBeGreaterThan(Date.now());
    const session = await gr4vy.checkoutSessions.create({
      amount: 1299,
      currency: 'USD',
      metadata: { order: 'A-1' },
      cartItems: [{ name: 'Shoes', quantity: 1, unitAmount: 1299 }],
      buyer: {
        displayName: 'Ada',
        billingDetails: { firstName: 'Ada', lastName: 'Lovelace', address: { country: 'GB', postalCode: 'N1 9GU' } },
      },
      expiresIn: 600,
    });
    expect(session).toMatchObject({
      amount: 1299,
      currency: 'USD',
      metadata: { order: 'A-1' },
      cartItems: [{ name: 'Shoes', quantity: 1, unitAmount: 1299 }],
    });
    expect(await gr4vy.checkoutSessions.get(session.id)).toEqual(session);
    const updated = await gr4vy.checkoutSessions.update({ amount: 2599, currency: 'EUR' }, session.id);
    expect(updated).toMatchObject({ id: session.id, amount: 2599, currency: 'EUR', metadata: { order: 'A-1' } });
    await gr4vy.checkoutSessions.delete(session.id);
    await expect(gr4vy.checkoutSessions.get(session.id)).rejects.toBeInstanceOf(Error404);
  });

  it('never answered a card number', () => {
    expect(w.harness.leaks).toEqual([]);
  });
});
