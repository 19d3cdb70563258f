/**
 * Issue 6 acceptance (digital wallets, item 6; the Paze decryption key of item 7), over HTTP on the embedded runtime:
 * register → get → list → update → delete, one wallet per provider and merchant account (also under concurrent
 * creates), the terms, the Paze key (required, validated, sealed, shown by its thumbprint, rotated, usable by the
 * transaction flow through `pazeKeyFor`), 404/409/400/422, scopes, and no private key in any response, event or file.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { openServiceStorage } from '@switchyard/readmodel';
import { expectErrorBody, signToken } from '@switchyard/testing';
import { DigitalWalletsReadModel } from '@switchyard/vault/src/digital-wallets/digital-wallets.read-model';
import { decryptPazePayload } from '@switchyard/vault/src/digital-wallets/paze';
import { sealPazePayload } from '@switchyard/vault/src/digital-wallets/paze-development-signing-key';
import { pazeDevelopmentSigningKeys } from '@switchyard/vault/src/digital-wallets/paze-signing-keys';
import { dataFiles, isoWithOffset, startHarness, type Harness } from './transactions.harness';

let h: Harness;
const account = 'dw';
const other = 'dw-other';

beforeAll(async () => {
  h = await startHarness('digital-wallets', { env: { VAULT_THREAD: 'false' } });
  await h.createAccount(account);
  await h.createAccount(other);
});

afterAll(() => h?.stop());

interface TestKey {
  readonly pem: string;
  readonly publicKey: KeyObject;
  readonly thumbprint: string;
  /** The private scalar / exponent bytes: what a clear key in a file would hold. */
  readonly secret: Buffer;
}

/** Every private key the spec sends: none may come back, or reach an event or a file in clear. */
const sentKeys: TestKey[] = [];
async function testKey(kind: 'ec' | 'rsa' = 'ec'): Promise<TestKey> {
  const pair =
    kind === 'ec'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = {
    pem: pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicKey: pair.publicKey,
    thumbprint: await calculateJwkThumbprint(pair.publicKey.export({ format: 'jwk' }) as JWK, 'sha256'),
    secret: Buffer.from(pair.privateKey.export({ format: 'jwk' }).d!, 'base64url').subarray(0, 32),
  };
  sentKeys.push(key);
  return key;
}
/** The base64 lines of a PEM after the first (whose start is the same ASN.1 header for every key of a type). */
const pemMarkers = (pem: string) =>
  pem
    .split('\n')
    .filter((line) => line && !line.startsWith('-----'))
    .slice(1, -1);
/** Whether a text (a response, the events) holds any sent private key, whole or in part. */
const leaksKey = (text: string) =>
  sentKeys.some((key) => text.includes(key.pem) || pemMarkers(key.pem).some((line) => text.includes(line)));

const post = (body: unknown, acct = account) =>
  h
    .http()
    .post('/digital-wallets')
    .set(h.headers(acct))
    .send(body as object);
const put = (id: string, body: unknown, acct = account) =>
  h
    .http()
    .put(`/digital-wallets/${id}`)
    .set(h.headers(acct))
    .send(body as object);
const get = (url: string, acct = account) => h.http().get(url).set(h.headers(acct));
const del = (id: string, acct = account) => h.http().delete(`/digital-wallets/${id}`).set(h.headers(acct));

const wallet = (overrides: Record<string, unknown> = {}) => ({
  provider: 'google',
  merchant_name: 'Switchyard Shop',
  accept_terms_and_conditions: true,
  ...overrides,
});

async function register(
  body: Record<string, unknown>,
  acct = account,
): Promise<{ id: string } & Record<string, unknown>> {
  const response = await post(body, acct);
  if (response.status !== 201) throw new Error(`POST /digital-wallets answered ${response.status}: ${response.text}`);
  expect(leaksKey(response.text)).toBe(false);
  return response.body as { id: string } & Record<string, unknown>;
}

/** A token of a new API key carrying only `scopes`. */
async function tokenWith(scopes: string[]): Promise<Record<string, string>> {
  const key = await h.fixture.service.identity.apiKeyPairs.create(
    { display_name: `scopes ${scopes.join(' ')}`, roles: ['administrator'] },
    { kind: 'operator' },
  );
  const token = await signToken({ kid: key.kid, privateKeyPem: key.private_key!, scopes, expiresIn: 600 });
  return { authorization: `Bearer ${token}`, 'x-service-merchant-account-id': account };
}

describe('register, read, list, update, delete', () => {
  it('registers an Apple Pay wallet (201): get and list show it; the provider is then taken (409)', async () => {
    const created = await register(
      wallet({
        provider: 'apple',
        merchant_display_name: 'Switchyard',
        merchant_url: 'https://shop.example',
        merchant_country_code: 'GB',
        domain_names: ['Shop.Example', 'pay.shop.example'],
      }),
    );
    expect(created).toEqual({
      type: 'digital-wallet',
      id: expect.any(String),
      merchant_account_id: account,
      provider: 'apple',
      merchant_name: 'Switchyard Shop',
      merchant_display_name: 'Switchyard',
      merchant_url: 'https://shop.example',
      merchant_country_code: 'GB',
      domain_names: ['shop.example', 'pay.shop.example'],
      active_certificate_count: 0,
      pending_certificate_count: 0,
      expired_certificate_count: 0,
      fields: null,
      created_at: expect.stringMatching(isoWithOffset),
      updated_at: expect.stringMatching(isoWithOffset),
    });
    expect((await get(`/digital-wallets/${created.id}`).expect(200)).body).toEqual(created);
    expect((await get('/digital-wallets').expect(200)).body.items).toContainEqual(created);

    const again = await post(wallet({ provider: 'apple' })).expect(409);
    expect(again.body).toEqual({
      type: 'error',
      code: 'duplicate_record',
      status: 409,
      message: expect.stringMatching(/already has a wallet of provider apple/),
      details: [
        expect.objectContaining({ location: 'body', pointer: '/provider', type: 'digital_wallet_provider_taken' }),
      ],
      resource_id: created.id,
    });
  });

  it('is another merchant account’s business: not listed, not found (404), and its provider still free there', async () => {
    const created = await register(wallet({ provider: 'click-to-pay' }));
    await get(`/digital-wallets/${created.id}`, other).expect(404);
    await put(created.id, { merchant_name: 'x' }, other).expect(404);
    await del(created.id, other).expect(404);
    expect(
      (await get('/digital-wallets', other).expect(200)).body.items.map((item: { id: string }) => item.id),
    ).not.toContain(created.id);
    const theirs = await register(wallet({ provider: 'click-to-pay' }), other);
    expect(theirs.merchant_account_id).toBe(other);
  });

  it('updates only the fields sent (200): null clears, domain_names is replaced; an empty body changes nothing', async () => {
    const created = await register(
      wallet({
        provider: 'google',
        merchant_url: 'https://old.example',
        merchant_country_code: 'US',
        domain_names: ['a.example'],
      }),
      other,
    );
    const updated = await put(
      created.id,
      { merchant_name: 'Renamed', merchant_url: null, domain_names: ['B.example', 'c.example'] },
      other,
    ).expect(200);
    expect(updated.body).toEqual({
      ...created,
      merchant_name: 'Renamed',
      merchant_url: null,
      domain_names: ['b.example', 'c.example'],
      updated_at: expect.stringMatching(isoWithOffset),
    });
    expect(updated.body.updated_at >= String(created.created_at)).toBe(true);
    expect((await put(created.id, {}, other).expect(200)).body).toEqual(updated.body);
    expect((await get(`/digital-wallets/${created.id}`, other).expect(200)).body).toEqual(updated.body);
  });

  it('deletes (204, no body): then 404 everywhere, and the provider can be registered again', async () => {
    const created = await register(wallet({ provider: 'google' }));
    const deleted = await del(created.id).expect(204);
    expect(deleted.text).toBe('');
    await get(`/digital-wallets/${created.id}`).expect(404);
    await put(created.id, { merchant_name: 'x' }).expect(404);
    await del(created.id).expect(404);
    expect((await get('/digital-wallets').expect(200)).body.items.map((item: { id: string }) => item.id)).not.toContain(
      created.id,
    );
    const replacement = await register(wallet({ provider: 'google' }));
    expect(replacement.id).not.toBe(created.id);
    await del(replacement.id).expect(204);
  });

  it('holds one wallet per provider under concurrent creates: one 201, the others 409', async () => {
    const racing = 'dw-race';
    await h.createAccount(racing);
    const responses = await Promise.all(Array.from({ length: 6 }, () => post(wallet({ provider: 'google' }), racing)));
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
    const winner = responses.find((response) => response.status === 201)!.body.id as string;
    for (const response of responses.filter((r) => r.status === 409)) expect(response.body.resource_id).toBe(winner);
    expect(
      (await get('/digital-wallets', racing).expect(200)).body.items.map((item: { id: string }) => item.id),
    ).toEqual([winner]);
  });
});

describe('a create or delete that stopped half-way (another writer on the store)', () => {
  const at = '2026-01-01T00:00:00.000Z';
  async function appendAsAnotherProcess(streamId: string, events: { type: string; data: unknown }[]): Promise<void> {
    const writer = openServiceStorage('vault', { dataDir: h.fixture.dataDir });
    try {
      await writer.store.append(streamId, events, { expectedRevision: 'no_stream' });
    } finally {
      await writer.close();
    }
  }

  it('a claim whose wallet was never written: the next create finishes under the claimed id', async () => {
    const acct = 'dw-orphan';
    await h.createAccount(acct);
    const orphan = 'c0ffee00-0000-4000-8000-000000000001';
    await appendAsAnotherProcess(`digital-wallet-provider-apple-${acct}`, [
      {
        type: 'DigitalWalletProviderClaimed',
        data: { merchantAccountId: acct, provider: 'apple', digitalWalletId: orphan, at },
      },
    ]);
    expect((await register(wallet({ provider: 'apple' }), acct)).id).toBe(orphan);
    await post(wallet({ provider: 'apple' }), acct).expect(409);
  });

  it('a claim still held by a deleted wallet: the next create takes it over', async () => {
    const acct = 'dw-stale';
    await h.createAccount(acct);
    const gone = 'c0ffee00-0000-4000-8000-000000000002';
    const settings = {
      merchantName: 'Old',
      merchantDisplayName: null,
      merchantUrl: null,
      merchantCountryCode: null,
      domainNames: [],
    };
    await appendAsAnotherProcess(`digital-wallet-${gone}`, [
      {
        type: 'DigitalWalletRegistered',
        data: { id: gone, merchantAccountId: acct, provider: 'google', ...settings, decryptionKey: null, at },
      },
      { type: 'DigitalWalletDeleted', data: { id: gone, merchantAccountId: acct, provider: 'google', at } },
    ]);
    await appendAsAnotherProcess(`digital-wallet-provider-google-${acct}`, [
      {
        type: 'DigitalWalletProviderClaimed',
        data: { merchantAccountId: acct, provider: 'google', digitalWalletId: gone, at },
      },
    ]);
    const created = await register(wallet({ provider: 'google' }), acct);
    expect(created.id).not.toBe(gone);
    await post(wallet({ provider: 'google' }), acct).expect(409);
  });
});

describe('refusals', () => {
  it('terms not accepted → 400 naming the field; nothing stored, the provider stays free', async () => {
    const before = (await get('/digital-wallets', other).expect(200)).body.items.length;
    const refused = await post(wallet({ provider: 'apple', accept_terms_and_conditions: false }), other).expect(400);
    expectErrorBody(refused.body, 400, 'bad_request');
    expect(refused.body.details).toEqual([
      expect.objectContaining({
        location: 'body',
        pointer: '/accept_terms_and_conditions',
        type: 'terms_and_conditions_not_accepted',
      }),
    ]);
    expect((await get('/digital-wallets', other).expect(200)).body.items).toHaveLength(before);
    await register(wallet({ provider: 'apple' }), other);
  });

  it('bodies that do not fit the schema → 422 naming the field', async () => {
    const cases: [Record<string, unknown>, (string | number)[], string?][] = [
      [{ provider: 'apple', accept_terms_and_conditions: true }, ['body', 'merchant_name'], 'missing'],
      [wallet({ provider: 'samsung' }), ['body', 'provider'], 'enum'],
      [wallet({ accept_terms_and_conditions: undefined }), ['body', 'accept_terms_and_conditions'], 'missing'],
      [wallet({ merchant_country_code: 'usa' }), ['body', 'merchant_country_code'], 'string_pattern_mismatch'],
      [wallet({ domain_names: ['https://shop.example/'] }), ['body', 'domain_names', 0], 'string_pattern_mismatch'],
      [wallet({ domain_names: ['shop'] }), ['body', 'domain_names', 0], 'string_pattern_mismatch'],
      [wallet({ domain_names: ['10.0.0.1'] }), ['body', 'domain_names', 0], 'string_pattern_mismatch'],
      [wallet({ domain_names: ['-bad.example'] }), ['body', 'domain_names', 0], 'string_pattern_mismatch'],
      [wallet({ domain_names: ['shop.example', 'SHOP.example'] }), ['body', 'domain_names']],
      [wallet({ merchant_url: 'ftp://shop.example' }), ['body', 'merchant_url']],
      [wallet({ merchant_name: '' }), ['body', 'merchant_name'], 'string_too_short'],
      [wallet({ colour: 'blue' }), ['body', 'colour'], 'extra_forbidden'],
    ];
    for (const [body, loc, type] of cases) {
      const response = await post(body).expect(422);
      expect(response.body.detail[0], JSON.stringify(body)).toMatchObject({ loc, ...(type ? { type } : {}) });
    }
    await put('9b0c3c1e-0f5a-4d7e-8a61-3f5d2c1b0a99', { provider: 'apple' }).expect(422);
    await get('/digital-wallets/not-a-uuid').expect(422);
  });

  it('an unknown wallet → 404', async () => {
    const id = '9b0c3c1e-0f5a-4d7e-8a61-3f5d2c1b0a99';
    expectErrorBody((await get(`/digital-wallets/${id}`).expect(404)).body, 404, 'not_found');
    await put(id, { merchant_name: 'x' }).expect(404);
    await del(id).expect(404);
  });
});

describe('Paze and its decryption key', () => {
  it('needs a key, takes only a usable PKCS#8 EC P-256 or RSA ≥ 2048 key, and only for paze (400 naming decryption_key, never echoing it)', async () => {
    const needed = await post(wallet({ provider: 'paze' })).expect(400);
    expect(needed.body.details).toEqual([
      expect.objectContaining({ pointer: '/decryption_key', type: 'decryption_key_required' }),
    ]);

    const ec = await testKey();
    const notPaze = await post(wallet({ provider: 'apple', decryption_key: ec.pem }), other).expect(400);
    expect(notPaze.body.details).toEqual([
      expect.objectContaining({ pointer: '/decryption_key', type: 'decryption_key_not_supported' }),
    ]);
    expect(leaksKey(notPaze.text)).toBe(false);

    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    const sec1 = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ format: 'pem', type: 'sec1' })
      .toString();
    const encrypted = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'secret' })
      .toString();
    const publicOnly = ec.publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const garbled = ec.pem.replace(/[A-Za-z]{8}/, 'AAAAAAAA');
    for (const unusable of [p384, rsa1024, sec1, encrypted, publicOnly, garbled, 'not a key', `${ec.pem}`.repeat(10)]) {
      const response = await post(
        wallet({ provider: 'paze', merchant_country_code: 'US', decryption_key: unusable }),
      ).expect(400);
      expectErrorBody(response.body, 400, 'bad_request');
      expect(response.body.details).toEqual([
        expect.objectContaining({ location: 'body', pointer: '/decryption_key', type: 'invalid_decryption_key' }),
      ]);
      for (const line of pemMarkers(unusable)) expect(response.text).not.toContain(line);
      expect(response.text).not.toContain('not a key');
    }
    // A 422 about another field does not echo the key either.
    const invalid = await post(wallet({ provider: 'paze', merchant_url: 'nope', decryption_key: ec.pem })).expect(422);
    expect(leaksKey(invalid.text)).toBe(false);
    expect(
      (await get('/digital-wallets').expect(200)).body.items.filter(
        (item: { provider: string }) => item.provider === 'paze',
      ),
    ).toEqual([]);
  });

  it('keeps the key sealed, shows its thumbprint, decrypts payloads with it, and rotates it', async () => {
    expect(h.fixture.service.vault.slices.digitalWallets.pazeKeyFor(account)).toBeNull();
    const ec = await testKey('ec');
    const created = await register(
      wallet({ provider: 'paze', merchant_country_code: 'US', domain_names: ['shop.example'], decryption_key: ec.pem }),
    );
    expect(created).toMatchObject({
      provider: 'paze',
      merchant_country_code: 'US',
      fields: { decryption_key_id: ec.thumbprint },
    });
    expect(created.fields).toEqual({ decryption_key_id: ec.thumbprint });
    const read = await get(`/digital-wallets/${created.id}`).expect(200);
    expect(leaksKey(read.text)).toBe(false);
    expect(leaksKey((await get('/digital-wallets').expect(200)).text)).toBe(false);

    // The transaction flow's view: the wallet and a key that opens what Paze encrypted to the registered public key.
    const payload = {
      token: { paymentToken: '4895370016781988', tokenExpirationMonth: '05', tokenExpirationYear: '2032' },
      dynamicData: [
        { dynamicDataType: 'CARD_APPLICATION_CRYPTOGRAM_SHORT_FORM', dynamicDataValue: 'AwAAAAAAZnOgmOovPMniQOQAAAA=' },
      ],
      cardNetwork: 'VISA',
      eci: '07',
    };
    const jwe = await sealPazePayload(payload, ec.publicKey, { alg: 'ECDH-ES' });
    const signingKeys = pazeDevelopmentSigningKeys();
    const found = h.fixture.service.vault.slices.digitalWallets.pazeKeyFor(account)!;
    expect(found.wallet).toMatchObject({ id: created.id, merchantCountryCode: 'US', decryptionKeyId: ec.thumbprint });
    expect(
      await decryptPazePayload(jwe, { decryptionKey: found.key, signingKeys }, new Date('2026-03-15T12:00:00Z')),
    ).toMatchObject({ token: '4895370016781988', expirationDate: '05/32', scheme: 'visa', eci: '07' });

    // Rotation: a new (RSA) key replaces the old; the same key again changes nothing.
    const rsa = await testKey('rsa');
    const rotated = await put(created.id, { decryption_key: rsa.pem }).expect(200);
    expect(rotated.body.fields).toEqual({ decryption_key_id: rsa.thumbprint });
    expect(leaksKey(rotated.text)).toBe(false);
    const same = await put(created.id, { decryption_key: rsa.pem }).expect(200);
    expect(same.body).toEqual(rotated.body);
    const rsaJwe = await sealPazePayload(payload, rsa.publicKey);
    const current = h.fixture.service.vault.slices.digitalWallets.pazeKeyFor(account)!;
    expect(
      (await decryptPazePayload(rsaJwe, { decryptionKey: current.key, signingKeys }, new Date('2026-03-15T12:00:00Z')))
        .cryptogram,
    ).toBe('AwAAAAAAZnOgmOovPMniQOQAAAA=');
    await expect(
      decryptPazePayload(jwe, { decryptionKey: current.key, signingKeys }, new Date('2026-03-15T12:00:00Z')),
    ).rejects.toMatchObject({ code: 'paze_decryption_failed' });

    const badRotation = await put(created.id, { decryption_key: 'nope' }).expect(400);
    expect(badRotation.body.details[0]).toMatchObject({ pointer: '/decryption_key' });
    const keyForApple = await put(
      (await get('/digital-wallets').expect(200)).body.items.find(
        (item: { provider: string }) => item.provider === 'apple',
      ).id,
      { decryption_key: rsa.pem },
    ).expect(400);
    expect(keyForApple.body.details[0]).toMatchObject({
      pointer: '/decryption_key',
      type: 'decryption_key_not_supported',
    });
    expect(h.fixture.service.vault.slices.digitalWallets.pazeKeyFor(other)).toBeNull();
  });
});

describe('access', () => {
  it('reads need digital-wallets.read, writes digital-wallets.write', async () => {
    const reader = await tokenWith(['digital-wallets.read']);
    const writer = await tokenWith(['digital-wallets.write']);
    const listed = await h.http().get('/digital-wallets').set(reader).expect(200);
    const some = listed.body.items[0] as { id: string };
    await h.http().get(`/digital-wallets/${some.id}`).set(reader).expect(200);
    expectErrorBody(
      (
        await h
          .http()
          .post('/digital-wallets')
          .set(reader)
          .send(wallet({ provider: 'google' }))
          .expect(403)
      ).body,
      403,
      'forbidden',
    );
    await h.http().put(`/digital-wallets/${some.id}`).set(reader).send({ merchant_name: 'x' }).expect(403);
    await h.http().delete(`/digital-wallets/${some.id}`).set(reader).expect(403);

    await h.http().get('/digital-wallets').set(writer).expect(403);
    const created = await h
      .http()
      .post('/digital-wallets')
      .set(writer)
      .send(wallet({ provider: 'google' }))
      .expect(201);
    await h.http().delete(`/digital-wallets/${created.body.id}`).set(writer).expect(204);
    await h.http().get('/digital-wallets').expect(401);
  });

  it('documents every digital wallet endpoint in /openapi.json', async () => {
    const document = (await h.http().get('/openapi.json').expect(200)).body;
    const operations = (p: string) =>
      Object.values(document.paths[p] ?? {})
        .map((operation) => (operation as { operationId: string }).operationId)
        .sort();
    expect(operations('/digital-wallets')).toEqual(['list_digital_wallets', 'register_digital_wallet']);
    expect(operations('/digital-wallets/{digital_wallet_id}')).toEqual([
      'delete_digital_wallet',
      'get_digital_wallet',
      'update_digital_wallet',
    ]);
    expect(document.components.schemas.DigitalWallet.required).toEqual(
      expect.arrayContaining(['provider', 'merchant_name', 'domain_names', 'fields']),
    );
    expect(document.components.schemas.DigitalWalletCreate.properties.provider.enum).toEqual([
      'apple',
      'google',
      'click-to-pay',
      'paze',
    ]);
  });
});

describe('no private key kept in clear', () => {
  it('events hold the sealed key and its thumbprint only; the read model rebuilds from them; no file holds a key', async () => {
    const db = new Database(path.join(h.fixture.dataDir, 'vault.db'), { readonly: true });
    let events: { stream_id: string; type: string; data: string; metadata: string }[];
    let rows: { sealed_decryption_key: string | null }[];
    try {
      events = db
        .prepare(
          "SELECT stream_id, type, data, metadata FROM events WHERE stream_id LIKE 'digital-wallet-%' ORDER BY position",
        )
        .all() as typeof events;
      rows = db.prepare('SELECT sealed_decryption_key FROM digital_wallets').all() as typeof rows;
    } finally {
      db.close();
    }
    expect(new Set(events.map((event) => event.type))).toEqual(
      new Set([
        'DigitalWalletRegistered',
        'DigitalWalletUpdated',
        'DigitalWalletDeleted',
        'DigitalWalletProviderClaimed',
        'DigitalWalletProviderReleased',
      ]),
    );
    const registered = events
      .filter((event) => event.type === 'DigitalWalletRegistered')
      .map((event) => JSON.parse(event.data) as Record<string, unknown>);
    const paze = registered.find((data) => data.provider === 'paze')!;
    expect(Object.keys(paze).sort()).toEqual([
      'at',
      'decryptionKey',
      'domainNames',
      'id',
      'merchantAccountId',
      'merchantCountryCode',
      'merchantDisplayName',
      'merchantName',
      'merchantUrl',
      'provider',
    ]);
    expect(Object.keys(paze.decryptionKey as object).sort()).toEqual(['keyId', 'sealed']);

    expect(sentKeys.length).toBeGreaterThanOrEqual(3);
    const everything =
      events.map((event) => `${event.data}${event.metadata}`).join('\n') +
      rows.map((row) => row.sealed_decryption_key ?? '').join('\n');
    expect(leaksKey(everything)).toBe(false);
    expect(everything).not.toContain('PRIVATE KEY');

    // The read model is the fold of the events: replayed into an empty table, the same rows come out.
    const scratch = new Database(':memory:');
    try {
      const rebuilt = new DigitalWalletsReadModel(scratch);
      const storage = openServiceStorage('vault', { dataDir: h.fixture.dataDir });
      try {
        for (const event of await storage.store.readAll()) rebuilt.projection.apply(event, scratch);
      } finally {
        await storage.close();
      }
      const live = h.fixture.service.vault.slices.digitalWallets.readModel;
      for (const acct of [account, other]) expect(rebuilt.list(acct)).toEqual(live.list(acct));
      expect(rebuilt.ofProvider(account, 'paze')?.sealedDecryptionKey).toBe(
        live.ofProvider(account, 'paze')?.sealedDecryptionKey,
      );
    } finally {
      scratch.close();
    }

    const files = dataFiles(h);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const bytes = fs.readFileSync(file);
      for (const key of sentKeys) {
        expect(bytes.includes(key.secret), `a private key in ${file}`).toBe(false);
        expect(
          pemMarkers(key.pem).some((line) => bytes.includes(Buffer.from(line, 'latin1'))),
          `a PEM in ${file}`,
        ).toBe(false);
      }
    }
  });
});
