/**
 * Paze (issue 6 item 7), over HTTP: the merchant registers a Paze wallet with its private key and forwards the
 * Complete payload (JWS(JWE(JWS(payload))), sealed here as Paze would, signed with the development signing key the
 * service trusts without PAZE_SIGNING_KEYS); the service verifies and decrypts it, takes the network token and
 * cryptogram, and routes to a US acquiring connection that takes network tokens. Every other case is refused with its
 * own code: not set up, not a US business, not USD, no such connection, a payload it cannot decrypt or read, expired.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { sealPazePayload } from '@switchyard/vault/src/digital-wallets/paze-development-signing-key';
import { startHarness, type Harness } from './transactions.harness';

let h: Harness;
const us = 'paze-us';
const gb = 'paze-gb';
const plainConnection = 'paze-plain';
const none = 'paze-none';

const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'pem' }) as string;

/** A Paze Complete payload: a Visa network token (Luhn-valid, not a card the specs use), its cryptogram and ECI. */
const TOKEN = '4895370012003478';
const payload = (overrides: Record<string, unknown> = {}) => ({
  token: {
    paymentToken: TOKEN,
    tokenExpirationMonth: '12',
    tokenExpirationYear: '2030',
    paymentAccountReference: 'V0010013022298169667651347803',
  },
  dynamicData: [
    {
      dynamicDataType: 'CARD_APPLICATION_CRYPTOGRAM_SHORT_FORM',
      dynamicDataValue: 'AgAAAAAABk4DWZ4C28yUQAAAAAA=',
      dynamicDataExpiration: String(Math.floor(Date.now() / 1000) + 900),
    },
  ],
  cardNetwork: 'VISA',
  eci: '07',
  ...overrides,
});
const encrypt = (body: unknown, key: KeyObject = publicKey) => sealPazePayload(body, key);

async function registerPaze(account: string, country: string): Promise<void> {
  await h
    .http()
    .post('/digital-wallets')
    .set(h.headers(account))
    .send({
      provider: 'paze',
      merchant_name: `Shop ${account}`,
      merchant_country_code: country,
      accept_terms_and_conditions: true,
      decryption_key: pem(privateKey),
    })
    .expect(201);
}

beforeAll(async () => {
  h = await startHarness('paze');
  for (const account of [us, gb, plainConnection, none]) await h.createAccount(account);
  await h.createConnection(us, { network_tokens_enabled: true });
  await h.createConnection(gb, { network_tokens_enabled: true });
  await h.createConnection(plainConnection);
  await registerPaze(us, 'US');
  await registerPaze(gb, 'GB');
  await registerPaze(plainConnection, 'US');
});

afterAll(() => h?.stop());

const pay = async (account: string, token: string, extra: Record<string, unknown> = {}) =>
  h
    .http()
    .post('/transactions')
    .set(h.headers(account))
    .send({ amount: 1000, currency: 'USD', payment_method: { method: 'paze', token }, ...extra });

it('decrypts the payload and pays with its network token through a US network-token connection', async () => {
  const response = await pay(us, await encrypt(payload()));
  expect(response.status).toBe(201);
  expect(response.body).toMatchObject({
    status: 'authorization_succeeded',
    instrument_type: 'network_token',
    payment_method: { method: 'paze', scheme: 'visa', label: '3478', expiration_date: '12/30' },
  });
  expect(response.text).not.toContain(TOKEN);
  expect(response.text).not.toContain('AgAAAAAABk4DWZ4C28yUQAAAAAA=');
});

const refusal = async (account: string, token: string, extra: Record<string, unknown> = {}) => {
  const response = await pay(account, token, extra);
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({ type: 'error', status: 400 });
  expect(response.text).not.toContain(TOKEN);
  return response.body.details[0] as { type: string; pointer: string; message: string };
};

it.each([
  ['no Paze wallet on the merchant account', none, {}, 'paze_not_configured'],
  ['a business outside the US', gb, {}, 'paze_merchant_not_us'],
  ['a currency other than USD', us, { currency: 'EUR' }, 'paze_currency_not_supported'],
  ['no connection that takes network tokens', plainConnection, {}, 'paze_no_network_token_connection'],
] as const)('refuses %s', async (_, account, extra, type) => {
  expect((await refusal(account, await encrypt(payload()), extra)).type).toBe(type);
});

it('refuses a payload Paze did not sign, or that another key signed, naming the reason (400 paze_signature_invalid)', async () => {
  const unsignedJwe = await refusal(us, await sealPazePayload(payload(), publicKey, { unsigned: 'outer' }));
  expect(unsignedJwe).toMatchObject({
    type: 'paze_signature_invalid',
    pointer: '/payment_method/token',
    message: expect.stringMatching(/not signed/),
  });
  const unsignedInside = await refusal(us, await sealPazePayload(payload(), publicKey, { unsigned: 'inner' }));
  expect(unsignedInside).toMatchObject({
    type: 'paze_signature_invalid',
    message: expect.stringMatching(/decrypted Paze payload is not signed/),
  });
  const forger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const forged = await refusal(us, await sealPazePayload(payload(), publicKey, { signingKey: forger }));
  expect(forged).toMatchObject({
    type: 'paze_signature_invalid',
    message: expect.stringMatching(/does not verify against Paze's signing keys/),
  });
  const signed = (await encrypt(payload())).split('.');
  signed[1] = Buffer.from(`${Buffer.from(signed[1]!, 'base64url').toString()}x`).toString('base64url');
  expect((await refusal(us, signed.join('.'))).type).toBe('paze_signature_invalid');
});

it('refuses a payload encrypted to another key, unreadable, or expired', async () => {
  expect((await refusal(us, await encrypt(payload(), other.publicKey))).type).toBe('paze_decryption_failed');
  expect((await refusal(us, await encrypt(payload({ dynamicData: [] })))).type).toBe('paze_payload_invalid');
  const expired = payload({ token: { paymentToken: TOKEN, tokenExpirationMonth: '01', tokenExpirationYear: '2020' } });
  expect((await refusal(us, await encrypt(expired))).type).toBe('paze_token_expired');
});

it('a payment_service_id that cannot take Paze is refused', async () => {
  const plain = await h.createConnection(us, { display_name: 'No tokens', position: 99 });
  expect((await refusal(us, await encrypt(payload()), { payment_service_id: plain })).type).toBe(
    'payment_method_not_supported',
  );
});
