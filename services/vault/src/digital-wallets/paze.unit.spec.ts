/**
 * Paze payloads, sealed here with test keys as Paze would (JWS(JWE(JWS(payload))); EC: ECDH-ES family; RSA:
 * RSA-OAEP-256; signed RS256 with the development signing key), then verified, decrypted and read; and the
 * eligibility rules as a table. No error message may quote the token or cryptogram.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { CompactSign } from 'jose';
import {
  credentialOf,
  decryptPazePayload,
  PazeError,
  pazeEligibility,
  type PazeEligibilityInput,
  type PazeKeys,
} from './paze';
import { PAZE_DEVELOPMENT_SIGNING_KEY_PEM, sealPazePayload } from './paze-development-signing-key';
import { loadPazeSigningKeys, pazeDevelopmentSigningKeys } from './paze-signing-keys';

const now = new Date('2026-03-15T12:00:00.000Z');
const TOKEN = '4895370016781988';
const CRYPTOGRAM = 'AwAAAAAAZnOgmOovPMniQOQAAAA=';

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const otherEc = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const otherRsa = generateKeyPairSync('rsa', { modulusLength: 2048 });

/** The decrypted Complete payload (docs/paze.md), with overrides. */
const payload = (overrides: Record<string, unknown> = {}) => ({
  token: {
    paymentToken: TOKEN,
    tokenExpirationMonth: '05',
    tokenExpirationYear: '2032',
    paymentAccountReference: 'V0010013021015351808388794695',
  },
  dynamicData: [
    {
      dynamicDataType: 'CARD_APPLICATION_CRYPTOGRAM_SHORT_FORM',
      dynamicDataValue: CRYPTOGRAM,
      dynamicDataExpiration: '2026-03-15T12:15:00.000Z',
    },
  ],
  cardNetwork: 'VISA',
  eci: '07',
  billingAddress: { line1: '1234 Main Street', city: 'Tampa', state: 'FL', zip: '33601', countryCode: 'US' },
  consumer: { firstName: 'John', lastName: 'Doe', emailAddress: 'john@example.com' },
  ...overrides,
});

const encrypt = (plaintext: unknown, key: KeyObject, alg = 'ECDH-ES', enc = 'A256GCM'): Promise<string> =>
  sealPazePayload(plaintext, key, { alg, enc });
const developmentKeys = pazeDevelopmentSigningKeys();
const keysOf = (decryptionKey: KeyObject): PazeKeys => ({ decryptionKey, signingKeys: developmentKeys });
/** Signs `content` as Paze's outer JWS, with the development key: for a JWE altered after encryption. */
const signOuter = (content: string): Promise<string> =>
  new CompactSign(new TextEncoder().encode(content))
    .setProtectedHeader({ alg: 'RS256' })
    .sign(createPrivateKey(PAZE_DEVELOPMENT_SIGNING_KEY_PEM));
/** The JWE inside a sealed payload. */
const jweOf = (sealed: string): string => Buffer.from(sealed.split('.')[1]!, 'base64url').toString();

/** The PazeError a promise rejects with; fails when it resolves or throws anything else. */
async function failure(promise: Promise<unknown>): Promise<PazeError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(PazeError);
  const paze = error as PazeError;
  expect(paze.message).not.toContain(TOKEN);
  expect(paze.message).not.toContain(CRYPTOGRAM);
  return paze;
}

const expected = {
  token: TOKEN,
  expirationDate: '05/32',
  cryptogram: CRYPTOGRAM,
  eci: '07',
  scheme: 'visa',
  paymentAccountReference: 'V0010013021015351808388794695',
};

describe('decryptPazePayload', () => {
  it.each([
    ['ECDH-ES', 'A256GCM'],
    ['ECDH-ES', 'A128GCM'],
    ['ECDH-ES+A128KW', 'A128GCM'],
    ['ECDH-ES+A256KW', 'A256GCM'],
  ])('decrypts an EC payload (%s, %s) to the credential', async (alg, enc) => {
    const jwe = await encrypt(payload(), ec.publicKey, alg, enc);
    expect(await decryptPazePayload(jwe, keysOf(ec.privateKey), now)).toEqual(expected);
  });

  it('decrypts an RSA-OAEP-256 / A256GCM payload, as Paze sends it', async () => {
    const jwe = await encrypt(
      payload({ cardNetwork: 'MASTERCARD', eci: undefined }),
      rsa.publicKey,
      'RSA-OAEP-256',
      'A256GCM',
    );
    expect(await decryptPazePayload(jwe, keysOf(rsa.privateKey), now)).toEqual({
      ...expected,
      scheme: 'mastercard',
      eci: null,
    });
  });

  it('refuses another merchant’s key, a key of the other type, and an altered payload (paze_decryption_failed)', async () => {
    const jwe = await encrypt(payload(), ec.publicKey);
    expect((await failure(decryptPazePayload(jwe, keysOf(otherEc.privateKey), now))).code).toBe(
      'paze_decryption_failed',
    );
    expect((await failure(decryptPazePayload(jwe, keysOf(rsa.privateKey), now))).code).toBe('paze_decryption_failed');

    // Altered inside a signature that verifies (the JWE's own authentication catches it).
    const parts = jweOf(jwe).split('.');
    const ciphertext = parts[3]!;
    parts[3] = (ciphertext[0] === 'A' ? 'B' : 'A') + ciphertext.slice(1);
    expect((await failure(decryptPazePayload(await signOuter(parts.join('.')), keysOf(ec.privateKey), now))).code).toBe(
      'paze_decryption_failed',
    );
    const tag = jweOf(jwe).split('.');
    tag[4] = tag[4]!.split('').reverse().join('');
    expect((await failure(decryptPazePayload(await signOuter(tag.join('.')), keysOf(ec.privateKey), now))).code).toBe(
      'paze_decryption_failed',
    );
  });

  it('refuses what is not a compact JWS around a compact JWE, and algorithms outside the allow-list', async () => {
    for (const notJws of ['', 'not-a-jws', 'a.b.c.d']) {
      expect((await failure(decryptPazePayload(notJws, keysOf(ec.privateKey), now))).code).toBe(
        'paze_decryption_failed',
      );
    }
    expect((await failure(decryptPazePayload(await signOuter('{"a":1}'), keysOf(ec.privateKey), now))).code).toBe(
      'paze_decryption_failed',
    );
    const sha1 = await encrypt(payload(), rsa.publicKey, 'RSA-OAEP', 'A256GCM');
    const refused = await failure(decryptPazePayload(sha1, keysOf(rsa.privateKey), now));
    expect(refused).toMatchObject({ code: 'paze_decryption_failed', message: expect.stringMatching(/algorithm/) });
    const cbc = await encrypt(payload(), ec.publicKey, 'ECDH-ES', 'A128CBC-HS256');
    expect((await failure(decryptPazePayload(cbc, keysOf(ec.privateKey), now))).code).toBe('paze_decryption_failed');
  });

  it('refuses an unsigned payload, an unsigned inner payload, another signer, another algorithm (paze_signature_invalid)', async () => {
    const bareJwe = await sealPazePayload(payload(), ec.publicKey, { alg: 'ECDH-ES', unsigned: 'outer' });
    expect(await failure(decryptPazePayload(bareJwe, keysOf(ec.privateKey), now))).toMatchObject({
      code: 'paze_signature_invalid',
      message: expect.stringMatching(/not signed/),
    });
    const unsignedInside = await sealPazePayload(payload(), ec.publicKey, { alg: 'ECDH-ES', unsigned: 'inner' });
    expect(await failure(decryptPazePayload(unsignedInside, keysOf(ec.privateKey), now))).toMatchObject({
      code: 'paze_signature_invalid',
      message: expect.stringMatching(/decrypted Paze payload is not signed/),
    });
    const forged = await sealPazePayload(payload(), ec.publicKey, { alg: 'ECDH-ES', signingKey: rsa.privateKey });
    expect(await failure(decryptPazePayload(forged, keysOf(ec.privateKey), now))).toMatchObject({
      code: 'paze_signature_invalid',
    });
    const hmac = await new CompactSign(new TextEncoder().encode(jweOf(await encrypt(payload(), ec.publicKey))))
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new Uint8Array(32));
    expect(await failure(decryptPazePayload(hmac, keysOf(ec.privateKey), now))).toMatchObject({
      code: 'paze_signature_invalid',
      message: expect.stringMatching(/RS256/),
    });
  });

  it('verifies against the keys PAZE_SIGNING_KEYS names (a PEM file here), and has none in production without the setting', async () => {
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paze-keys-'));
    try {
      const file = path.join(dir, 'paze.pem');
      fs.writeFileSync(
        file,
        `${otherRsa.publicKey.export({ type: 'spki', format: 'pem' })}${rsa.publicKey.export({ type: 'spki', format: 'pem' })}`,
      );
      const signingKeys = loadPazeSigningKeys(file, 'production')!;
      const signedByPaze = await sealPazePayload(payload(), ec.publicKey, {
        alg: 'ECDH-ES',
        signingKey: rsa.privateKey,
      });
      expect(await decryptPazePayload(signedByPaze, { decryptionKey: ec.privateKey, signingKeys }, now)).toEqual(
        expected,
      );
      const signedByDevelopmentKey = await encrypt(payload(), ec.publicKey);
      expect(
        (await failure(decryptPazePayload(signedByDevelopmentKey, { decryptionKey: ec.privateKey, signingKeys }, now)))
          .code,
      ).toBe('paze_signature_invalid');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(loadPazeSigningKeys(undefined, 'production')).toBeNull();
    expect(loadPazeSigningKeys('', 'production')).toBeNull();
    expect(loadPazeSigningKeys(undefined, 'development')).toBeTypeOf('function');
  });

  it('refuses a payload that is not JSON (paze_payload_invalid)', async () => {
    const jwe = await encrypt('hello', ec.publicKey);
    expect((await failure(decryptPazePayload(jwe, keysOf(ec.privateKey), now))).code).toBe('paze_payload_invalid');
  });

  it('refuses a payload without a cryptogram, naming dynamicData', async () => {
    for (const dynamicData of [
      [],
      [{ dynamicDataType: 'CARD_APPLICATION_CRYPTOGRAM_SHORT_FORM' }],
      [{ dynamicDataType: 'DYNAMIC_CARD_SECURITY_CODE', dynamicDataValue: '123' }],
    ]) {
      const jwe = await encrypt(payload({ dynamicData }), ec.publicKey);
      const error = await failure(decryptPazePayload(jwe, keysOf(ec.privateKey), now));
      expect(error).toMatchObject({
        code: 'paze_payload_invalid',
        field: 'dynamicData',
        message: expect.stringContaining('dynamicData'),
      });
    }
  });

  it('refuses an expired cryptogram and an expired token (paze_token_expired)', async () => {
    for (const expiration of [
      '2026-03-15T11:59:59.000Z',
      Math.floor(now.getTime() / 1000) - 1,
      String(now.getTime()),
    ]) {
      const dynamicData = [
        {
          dynamicDataType: 'CARD_APPLICATION_CRYPTOGRAM_SHORT_FORM',
          dynamicDataValue: CRYPTOGRAM,
          dynamicDataExpiration: expiration,
        },
      ];
      const jwe = await encrypt(payload({ dynamicData }), ec.publicKey);
      expect(await failure(decryptPazePayload(jwe, keysOf(ec.privateKey), now))).toMatchObject({
        code: 'paze_token_expired',
        field: 'dynamicData.0.dynamicDataExpiration',
      });
    }
    const lastMonth = await encrypt(
      payload({ token: { paymentToken: TOKEN, tokenExpirationMonth: '02', tokenExpirationYear: '2026' } }),
      ec.publicKey,
    );
    expect((await failure(decryptPazePayload(lastMonth, keysOf(ec.privateKey), now))).code).toBe('paze_token_expired');
  });
});

describe('reading the decrypted payload', () => {
  it('keeps a token valid through its expiry month; reads 2-digit years and numbers', () => {
    expect(
      credentialOf(payload({ token: { paymentToken: TOKEN, tokenExpirationMonth: 3, tokenExpirationYear: 26 } }), now),
    ).toMatchObject({ expirationDate: '03/26', paymentAccountReference: null });
  });

  it('takes the short-form cryptogram over the long form, and the long form when alone', () => {
    const long = { dynamicDataType: 'CARD_APPLICATION_CRYPTOGRAM_LONG_FORM', dynamicDataValue: 'LONGFORM' };
    const short = { dynamicDataType: 'CARD_APPLICATION_CRYPTOGRAM_SHORT_FORM', dynamicDataValue: CRYPTOGRAM };
    expect(credentialOf(payload({ dynamicData: [long, short] }), now).cryptogram).toBe(CRYPTOGRAM);
    expect(credentialOf(payload({ dynamicData: [long] }), now).cryptogram).toBe('LONGFORM');
  });

  it.each([
    ['token.paymentToken', { token: { tokenExpirationMonth: '05', tokenExpirationYear: '2032' } }],
    [
      'token.paymentToken',
      { token: { paymentToken: '4895-3700', tokenExpirationMonth: '05', tokenExpirationYear: '2032' } },
    ],
    [
      'token.tokenExpirationMonth',
      { token: { paymentToken: TOKEN, tokenExpirationMonth: '13', tokenExpirationYear: '2032' } },
    ],
    ['token.tokenExpirationYear', { token: { paymentToken: TOKEN, tokenExpirationMonth: '05' } }],
    ['token', { token: undefined }],
    ['cardNetwork', { cardNetwork: 'AMEX' }],
    ['cardNetwork', { cardNetwork: 'toString' }],
    ['eci', { eci: 'seven' }],
    [
      'dynamicData.0.dynamicDataExpiration',
      {
        dynamicData: [
          {
            dynamicDataType: 'CARD_APPLICATION_CRYPTOGRAM_SHORT_FORM',
            dynamicDataValue: CRYPTOGRAM,
            dynamicDataExpiration: 'soon',
          },
        ],
      },
    ],
  ])('refuses %s when missing or invalid, naming it and not its value', (field, overrides) => {
    let caught: unknown;
    try {
      credentialOf(payload(overrides), now);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PazeError);
    expect(caught).toMatchObject({ code: 'paze_payload_invalid', field, message: expect.stringContaining(field) });
    expect((caught as Error).message).not.toContain(TOKEN);
    expect((caught as Error).message).not.toContain(CRYPTOGRAM);
  });
});

describe('pazeEligibility', () => {
  const usNetworkTokens = {
    id: 'us-nt',
    acceptedCountries: ['US'],
    networkTokensEnabled: true,
    supportsNetworkTokens: true,
  };
  const base: PazeEligibilityInput = { merchantCountry: 'US', currency: 'USD', connections: [usNetworkTokens] };

  it.each<[string, Partial<PazeEligibilityInput>, string]>([
    ['a German business', { merchantCountry: 'DE' }, 'paze_merchant_not_us'],
    ['no merchant country', { merchantCountry: null }, 'paze_merchant_not_us'],
    ['EUR', { currency: 'EUR' }, 'paze_currency_not_supported'],
    ['no connection', { connections: [] }, 'paze_no_network_token_connection'],
    [
      'a connection that does not acquire in the US',
      { connections: [{ ...usNetworkTokens, acceptedCountries: ['CA', 'GB'] }] },
      'paze_no_network_token_connection',
    ],
    [
      'network tokens switched off',
      { connections: [{ ...usNetworkTokens, networkTokensEnabled: false }] },
      'paze_no_network_token_connection',
    ],
    [
      'a connector without network tokens',
      { connections: [{ ...usNetworkTokens, supportsNetworkTokens: false }] },
      'paze_no_network_token_connection',
    ],
  ])('refuses %s', (_case, overrides, code) => {
    expect(pazeEligibility({ ...base, ...overrides })).toEqual({ ok: false, code, message: expect.any(String) });
  });

  it('checks the merchant first, then the currency, then the connections', () => {
    expect(pazeEligibility({ merchantCountry: 'DE', currency: 'EUR', connections: [] })).toMatchObject({
      code: 'paze_merchant_not_us',
    });
    expect(pazeEligibility({ merchantCountry: 'US', currency: 'EUR', connections: [] })).toMatchObject({
      code: 'paze_currency_not_supported',
    });
  });

  it('keeps the eligible connections, in order', () => {
    const connections = [
      { ...usNetworkTokens, id: 'first' },
      { ...usNetworkTokens, id: 'no-tokens', networkTokensEnabled: false },
      { ...usNetworkTokens, id: 'canada', acceptedCountries: ['CA'] },
      { ...usNetworkTokens, id: 'second', acceptedCountries: ['CA', 'US'] },
    ];
    expect(pazeEligibility({ ...base, connections })).toEqual({ ok: true, connectionIds: ['first', 'second'] });
  });
});
