/**
 * A stored card pays with its network token (issue 6 item 4): once the merchant account has network tokens on and a
 * card connection takes them, a stored card is provisioned automatically, and a payment by its id sends the token and
 * a fresh cryptogram instead of the card (`instrument_type: network_token`); a connection that does not take network
 * tokens gets the card (`card_token`).
 */
import { TEST_PANS, startHarness, type Harness } from './transactions.harness';

let h: Harness;
const tokens = 'ntp-on';
const plain = 'ntp-off';

beforeAll(async () => {
  h = await startHarness('network-token-payments');
  await h.createAccount(tokens, { network_tokens_enabled: true });
  await h.createConnection(tokens, { network_tokens_enabled: true });
  await h.createAccount(plain, { network_tokens_enabled: true });
  await h.createConnection(plain);
});

afterAll(() => h?.stop());

const post = (account: string, url: string, body: unknown) =>
  h
    .http()
    .post(url)
    .set(h.headers(account))
    .send(body as object);

async function activeToken(account: string, paymentMethodId: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const listed = await h
      .http()
      .get(`/payment-methods/${paymentMethodId}/network-tokens`)
      .set(h.headers(account))
      .expect(200);
    const token = (listed.body.items as Record<string, unknown>[]).find((t) => t.status === 'active');
    if (token) return token;
    if (Date.now() > deadline) throw new Error(`no active network token for ${paymentMethodId}: ${listed.text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it('pays with the network token where the connection takes them', async () => {
  const stored = (
    await post(tokens, '/payment-methods', { method: 'card', number: TEST_PANS[0], expiration_date: '12/30' }).expect(
      201,
    )
  ).body;
  const token = await activeToken(tokens, stored.id);
  expect(token.token).not.toBe(TEST_PANS[0]);
  const paid = await h.authorize(tokens, {
    amount: 1000,
    currency: 'USD',
    payment_method: { method: 'id', id: stored.id },
  });
  expect(paid).toMatchObject({
    status: 'authorization_succeeded',
    instrument_type: 'network_token',
    payment_method: { id: stored.id, label: '1111' },
  });
  expect(JSON.stringify(paid)).not.toContain(token.token as string);
  // The amount table still decides, as for the card.
  const declined = await h.authorize(tokens, {
    amount: 200_011,
    currency: 'USD',
    payment_method: { method: 'id', id: stored.id },
  });
  expect(declined).toMatchObject({ status: 'authorization_declined', instrument_type: 'network_token' });
});

it('sends the card where no connection takes network tokens (none provisioned either)', async () => {
  const stored = (
    await post(plain, '/payment-methods', { method: 'card', number: TEST_PANS[1], expiration_date: '12/30' }).expect(
      201,
    )
  ).body;
  const paid = await h.authorize(plain, {
    amount: 1000,
    currency: 'USD',
    payment_method: { method: 'id', id: stored.id },
  });
  expect(paid).toMatchObject({ status: 'authorization_succeeded', instrument_type: 'card_token' });
  const listed = await h.http().get(`/payment-methods/${stored.id}/network-tokens`).set(h.headers(plain)).expect(200);
  expect(listed.body.items).toEqual([]);
});

it('never answers or writes a card number', () => {
  expect(h.leaks).toEqual([]);
  expect(h.filesWithPan()).toEqual([]);
});
