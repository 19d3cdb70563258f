/**
 * Issue 6 acceptance (network tokens, item 4), over HTTP on the embedded runtime with the simulator's token service:
 * the Discover rule (refused without the requestor id and app id, provisioned with them), list / suspend / resume /
 * cryptogram / delete, one live token per card (409), another account's payment method (404), scopes, automatic
 * provisioning when a card is stored, the token deleted with its payment method, and API provisioning switched off
 * (403). No card number is ever answered; no token number is ever in an event.
 */
import { openServiceStorage } from '@switchyard/readmodel';
import { expectErrorBody, signToken } from '@switchyard/testing';
import { isoWithOffset, startHarness, type Harness } from './transactions.harness';

let h: Harness;
const account = 'nt';
const other = 'nt-other';
const automatic = 'nt-auto';

const VISA = '4111111111111111';
const MASTERCARD = '5555555555554444';
const DISCOVER = '6011111111111117';
const NOT_ELIGIBLE = '4000000000000002';

beforeAll(async () => {
  h = await startHarness('network-tokens');
  await h.createAccount(account, { network_tokens_enabled: true });
  await h.createAccount(other, { network_tokens_enabled: true });
  await h.createAccount(automatic, { network_tokens_enabled: true, visa_network_tokens_requestor_id: 'visa-req-auto' });
  // Only this account's card connection takes network tokens: only its cards get one when stored.
  await h.createConnection(automatic, { network_tokens_enabled: true });
  await h.createConnection(account);
});

afterAll(() => h?.stop());

type Body = Record<string, unknown>;
const post = (url: string, body: unknown, acct = account) =>
  h
    .http()
    .post(url)
    .set(h.headers(acct))
    .send(body as object);
const get = (url: string, acct = account) => h.http().get(url).set(h.headers(acct));
const tokensOf = (paymentMethodId: string) => `/payment-methods/${paymentMethodId}/network-tokens`;
const provisionBody = { merchant_initiated: false, is_subsequent_payment: false };

async function storeCard(number: string, acct = account): Promise<string> {
  const response = await post('/payment-methods', { method: 'card', number, expiration_date: '11/30' }, acct);
  if (response.status !== 201) throw new Error(`POST /payment-methods answered ${response.status}: ${response.text}`);
  return response.body.id as string;
}

async function provision(paymentMethodId: string, acct = account): Promise<Body & { id: string; token: string }> {
  const response = await post(tokensOf(paymentMethodId), provisionBody, acct);
  if (response.status !== 201) throw new Error(`POST network-tokens answered ${response.status}: ${response.text}`);
  return response.body;
}

/** The simulator token service's record of our token (by our token id, its reference). */
const simulated = (networkTokenId: string) =>
  [...h.simulator.ledger.networkTokens.values()].find((token) => token.reference === networkTokenId);

async function poll<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A token of a new API key with `roles`, carrying only `scopes`. */
async function tokenWith(roles: string[], scopes: string[]): Promise<Record<string, string>> {
  const key = await h.fixture.service.identity.apiKeyPairs.create(
    { display_name: `scopes ${scopes.join(' ')}`, roles },
    { kind: 'operator' },
  );
  const token = await signToken({ kid: key.kid, privateKeyPem: key.private_key!, scopes, expiresIn: 600 });
  return { authorization: `Bearer ${token}`, 'x-service-merchant-account-id': account };
}

describe('POST /payment-methods/{id}/network-tokens', () => {
  it('provisions a network token: 201, active, the network token number (not the card), the token’s expiry', async () => {
    const paymentMethodId = await storeCard(VISA);
    const response = await post(tokensOf(paymentMethodId), { ...provisionBody, security_code: '123' }).expect(201);
    expect(response.body).toEqual({
      type: 'network-token',
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      payment_method_id: paymentMethodId,
      status: 'active',
      token: expect.stringMatching(/^4111\d{12}$/),
      expiration_date: '11/30',
      created_at: expect.stringMatching(isoWithOffset),
      updated_at: expect.stringMatching(isoWithOffset),
    });
    expect(response.body.token).not.toBe(VISA);
    expect(simulated(response.body.id)?.token).toBe(response.body.token);
  });

  it('refuses a Discover card without both Discover settings (400, naming them); provisions it once both are set', async () => {
    const paymentMethodId = await storeCard(DISCOVER);
    const refused = await post(tokensOf(paymentMethodId), provisionBody).expect(400);
    expectErrorBody(refused.body, 400, 'bad_request');
    expect(refused.body.message).toMatch(/discover_network_tokens_requestor_id and discover_network_tokens_app_id/);
    expect(refused.body.details).toEqual([
      expect.objectContaining({
        type: 'discover_network_token_settings_missing',
        location: 'path',
        pointer: '/payment_method_id',
      }),
    ]);

    await h
      .http()
      .put(`/merchant-accounts/${account}`)
      .set(h.headers())
      .send({ discover_network_tokens_requestor_id: 'disc-req' })
      .expect(200);
    expect((await post(tokensOf(paymentMethodId), provisionBody).expect(400)).body.details[0].type).toBe(
      'discover_network_token_settings_missing',
    );

    await h
      .http()
      .put(`/merchant-accounts/${account}`)
      .set(h.headers())
      .send({ discover_network_tokens_app_id: 'disc-app' })
      .expect(200);
    const token = await provision(paymentMethodId);
    expect(token).toMatchObject({ status: 'active', token: expect.stringMatching(/^6011\d{12}$/) });
    expect(simulated(token.id)).toMatchObject({
      scheme: 'discover',
      status: 'active',
      requestorId: 'disc-req',
      appId: 'disc-app',
    });
  });

  it('answers 409 with the live token as resource_id while the card has one', async () => {
    const paymentMethodId = await storeCard(MASTERCARD);
    const first = await provision(paymentMethodId);
    const duplicate = await post(tokensOf(paymentMethodId), provisionBody).expect(409);
    expect(duplicate.body).toMatchObject({
      type: 'error',
      code: 'duplicate_record',
      status: 409,
      resource_id: first.id,
    });
  });

  it("answers the network's refusal as a 400 with its code (card ending 0002), and lists nothing", async () => {
    const paymentMethodId = await storeCard(NOT_ELIGIBLE);
    const refused = await post(tokensOf(paymentMethodId), provisionBody).expect(400);
    expect(refused.body.details).toEqual([expect.objectContaining({ type: 'card_not_eligible' })]);
    expect((await get(tokensOf(paymentMethodId)).expect(200)).body).toEqual({ items: [] });
  });

  it('validates the body: both booleans required (422), a security code of 3 or 4 digits', async () => {
    const paymentMethodId = await storeCard(VISA);
    const missing = await post(tokensOf(paymentMethodId), { merchant_initiated: false }).expect(422);
    expect(missing.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'is_subsequent_payment'], type: 'missing' }),
    ]);
    const badCode = await post(tokensOf(paymentMethodId), { ...provisionBody, security_code: '12' }).expect(422);
    expect(badCode.body.detail[0]).toMatchObject({ loc: ['body', 'security_code'] });
    expect((await get(tokensOf(paymentMethodId)).expect(200)).body).toEqual({ items: [] });
  });

  it("is a 404 for another account's payment method, and an unknown one", async () => {
    const theirs = await storeCard(VISA, other);
    expectErrorBody((await post(tokensOf(theirs), provisionBody).expect(404)).body, 404, 'not_found');
    await get(tokensOf(theirs)).expect(404);
    await get(tokensOf('6b1c3f0e-0000-4000-8000-000000000000')).expect(404);
    expect((await get(tokensOf(theirs), other).expect(200)).body).toEqual({ items: [] });
  });
});

describe("a network token's life over HTTP", () => {
  it('lists, suspends, resumes, gives cryptograms, deletes (204) — and is gone afterwards', async () => {
    const paymentMethodId = await storeCard(VISA);
    const token = await provision(paymentMethodId);
    const tokenUrl = `${tokensOf(paymentMethodId)}/${token.id}`;
    expect((await get(tokensOf(paymentMethodId)).expect(200)).body).toEqual({ items: [token] });

    const suspended = await post(`${tokenUrl}/suspend`, {}).expect(200);
    expect(suspended.body).toMatchObject({ id: token.id, status: 'suspended', token: token.token });
    expect(simulated(token.id)?.status).toBe('suspended');
    const noCryptogram = await post(`${tokenUrl}/cryptogram`, { merchant_initiated: false }).expect(400);
    expect(noCryptogram.body.details[0].type).toBe('network_token_not_active');

    expect((await post(`${tokenUrl}/resume`, {}).expect(200)).body).toMatchObject({ status: 'active' });
    const cryptogram = await post(`${tokenUrl}/cryptogram`, { merchant_initiated: true }).expect(201);
    expect(cryptogram.body).toEqual({
      type: 'network-token-cryptogram',
      cryptogram: expect.stringMatching(/^[A-Za-z0-9+/]{27}=$/),
    });
    const again = await post(`${tokenUrl}/cryptogram`, { merchant_initiated: true }).expect(201);
    expect(again.body.cryptogram).not.toBe(cryptogram.body.cryptogram);
    await post(`${tokenUrl}/cryptogram`, {}).expect(422);

    const deleted = await h.http().delete(tokenUrl).set(h.headers(account)).expect(204);
    expect(deleted.text).toBe('');
    expect(simulated(token.id)?.status).toBe('deleted');
    expect((await get(tokensOf(paymentMethodId)).expect(200)).body).toEqual({ items: [] });
    await post(`${tokenUrl}/resume`, {}).expect(404);
    await h.http().delete(tokenUrl).set(h.headers(account)).expect(404);
    // Deleted is final, but the card may get a new token.
    expect((await provision(paymentMethodId)).id).not.toBe(token.id);
  });

  it("is a 404 through another payment method or another account's header", async () => {
    const paymentMethodId = await storeCard(MASTERCARD);
    const token = await provision(paymentMethodId);
    const elsewhere = await storeCard(VISA);
    await post(`${tokensOf(elsewhere)}/${token.id}/suspend`, {}).expect(404);
    await post(`${tokensOf(paymentMethodId)}/${token.id}/cryptogram`, { merchant_initiated: false }, other).expect(404);
    await h
      .http()
      .delete(`${tokensOf(paymentMethodId)}/${token.id}`)
      .set(h.headers(other))
      .expect(404);
    expect(simulated(token.id)?.status).toBe('active');
  });

  it('reads with payment-methods.read, writes with payment-methods.write only', async () => {
    const paymentMethodId = await storeCard(VISA);
    const reader = await tokenWith(['administrator'], ['payment-methods.read']);
    await h.http().get(tokensOf(paymentMethodId)).set(reader).expect(200);
    expectErrorBody(
      (await h.http().post(tokensOf(paymentMethodId)).set(reader).send(provisionBody).expect(403)).body,
      403,
      'forbidden',
    );
    const writer = await tokenWith(['administrator'], ['payment-methods.write']);
    const token = (await h.http().post(tokensOf(paymentMethodId)).set(writer).send(provisionBody).expect(201)).body as {
      id: string;
    };
    await h
      .http()
      .post(`${tokensOf(paymentMethodId)}/${token.id}/suspend`)
      .set(reader)
      .send({})
      .expect(403);
    await h
      .http()
      .post(`${tokensOf(paymentMethodId)}/${token.id}/suspend`)
      .set(writer)
      .send({})
      .expect(200);
  });
});

describe('automatic provisioning', () => {
  it("gives a card stored in an account whose card connection takes network tokens a token, with the scheme's requestor id", async () => {
    const paymentMethodId = await storeCard(VISA, automatic);
    const listed = await poll(
      async () =>
        (await get(tokensOf(paymentMethodId), automatic).expect(200)).body as {
          items: { id: string; status: string }[];
        },
      (body) => body.items.length === 1,
      'the automatic network token',
    );
    expect(listed.items[0]).toMatchObject({ status: 'active', payment_method_id: paymentMethodId });
    expect(simulated(listed.items[0]!.id)).toMatchObject({
      scheme: 'visa',
      status: 'active',
      requestorId: 'visa-req-auto',
      appId: null,
    });
  });

  it('gives none where no card connection takes network tokens', async () => {
    const paymentMethodId = await storeCard(VISA);
    // The automatic account's card is provisioned within a poll; give this one the same chance, then look.
    const control = await storeCard(MASTERCARD, automatic);
    await poll(
      async () => (await get(tokensOf(control), automatic)).body.items.length as number,
      (n) => n === 1,
      'the control token',
    );
    expect((await get(tokensOf(paymentMethodId)).expect(200)).body).toEqual({ items: [] });
  });

  it('deletes the token at the token service when its payment method is deleted', async () => {
    const paymentMethodId = await storeCard(MASTERCARD, automatic);
    const listed = await poll(
      async () => (await get(tokensOf(paymentMethodId), automatic)).body.items as { id: string }[],
      (items) => items.length === 1,
      'the token',
    );
    await h.http().delete(`/payment-methods/${paymentMethodId}`).set(h.headers(automatic)).expect(204);
    expect(simulated(listed[0]!.id)?.status).toBe('deleted');
    await get(tokensOf(paymentMethodId), automatic).expect(404);
  });
});

describe('card data', () => {
  it('never answers a test card number, and keeps no token number in clear in the event store', async () => {
    expect(h.leaks).toEqual([]);
    const tokens = [...h.simulator.ledger.networkTokens.values()].map((token) => token.token);
    expect(tokens.length).toBeGreaterThan(3);
    const storage = openServiceStorage('vault', { dataDir: h.fixture.dataDir });
    try {
      const stored = JSON.stringify(await storage.store.readAll());
      expect(stored).toContain('NetworkTokenProvisioned');
      for (const secret of [...tokens, VISA, MASTERCARD, DISCOVER]) expect(stored).not.toContain(secret);
    } finally {
      await storage.close();
    }
  });
});

describe('with API provisioning switched off (NETWORK_TOKENS_API_PROVISIONING=false)', () => {
  let off: Harness;
  beforeAll(async () => {
    off = await startHarness('network-tokens-api-off', { env: { NETWORK_TOKENS_API_PROVISIONING: 'false' } });
    await off.createAccount(account, { network_tokens_enabled: true });
  });
  afterAll(() => off?.stop());

  it('answers 403 forbidden to POST, and still lists', async () => {
    const created = await off
      .http()
      .post('/payment-methods')
      .set(off.headers(account))
      .send({ method: 'card', number: VISA, expiration_date: '11/30' })
      .expect(201);
    const url = `/payment-methods/${created.body.id as string}/network-tokens`;
    const refused = await off.http().post(url).set(off.headers(account)).send(provisionBody).expect(403);
    expectErrorBody(refused.body, 403, 'forbidden');
    expect(refused.body.message).toBe('network token provisioning through the API is not enabled');
    expect((await off.http().get(url).set(off.headers(account)).expect(200)).body).toEqual({ items: [] });
  });
});
