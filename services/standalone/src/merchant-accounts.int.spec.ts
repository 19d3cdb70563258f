/**
 * Merchant accounts and their 3-D Secure configurations over HTTP, on the embedded runtime: paging, settings,
 * duplicates, validation, and what a key limited to some merchant accounts can reach.
 */
import { expectErrorBody, signToken, threeDsConfigurationBody } from '@switchyard/testing';
import request from 'supertest';
import type { EmbeddedService } from './embedded';
import { startEmbeddedFixture, type EmbeddedFixture } from './embedded.fixture';

let service: EmbeddedService;
let fixture: EmbeddedFixture;
let http: () => request.Agent;
let admin: { kid: string; privateKeyPem: string };
const operator = { kind: 'operator' } as const;

beforeAll(async () => {
  fixture = await startEmbeddedFixture('merchant-accounts');
  service = fixture.service;
  http = () => request.agent(service.gateway.app.getHttpServer());
  const created = await service.identity.apiKeyPairs.create(
    { display_name: 'admin', roles: ['administrator'] },
    operator,
  );
  admin = { kid: created.kid, privateKeyPem: created.private_key! };
});

afterAll(() => fixture?.stop());

const bearer = async (key = admin, scopes?: readonly string[]) => ({
  authorization: `Bearer ${await signToken({ ...key, ...(scopes ? { scopes } : {}) })}`,
});
const isoWithOffset = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

async function createAccount(id: string, extra: Record<string, unknown> = {}) {
  return http()
    .post('/merchant-accounts')
    .set(await bearer())
    .send({ id, display_name: `Account ${id}`, ...extra })
    .expect(201);
}

const threeDs = { ...threeDsConfigurationBody, metadata: { region: 'us' } };

describe('merchant accounts', () => {
  it('creates an account with its settings, 201, timestamps with offset', async () => {
    const response = await createAccount('acme', {
      over_capture_amount: 500,
      over_capture_percentage: 10,
      multiple_captures_enabled: true,
      visa_network_tokens_requestor_id: 'visa-req',
      visa_network_tokens_app_id: 'visa-app',
      account_updater_enabled: true,
      async_network_tokens_enabled: true,
      loon_accepted_schemes: ['visa', 'mastercard'],
    });
    expect(response.headers['content-type']).toMatch(/application\/json/);
    expect(response.body).toEqual({
      type: 'merchant-account',
      id: 'acme',
      display_name: 'Account acme',
      account_updater_enabled: true,
      account_updater_request_encryption_key: null,
      account_updater_request_encryption_key_id: null,
      account_updater_response_decryption_key: null,
      account_updater_response_decryption_key_id: null,
      over_capture_amount: 500,
      over_capture_percentage: 10,
      multiple_captures_enabled: true,
      loon_client_key: null,
      loon_secret_key: null,
      loon_accepted_schemes: ['visa', 'mastercard'],
      visa_network_tokens_requestor_id: 'visa-req',
      visa_network_tokens_app_id: 'visa-app',
      amex_network_tokens_requestor_id: null,
      amex_network_tokens_app_id: null,
      mastercard_network_tokens_requestor_id: null,
      mastercard_network_tokens_app_id: null,
      discover_network_tokens_requestor_id: null,
      discover_network_tokens_app_id: null,
      async_network_tokens_enabled: true,
      network_tokens_enabled: false,
      created_at: expect.stringMatching(isoWithOffset),
      updated_at: expect.stringMatching(isoWithOffset),
    });
    expect(
      (
        await http()
          .get('/merchant-accounts/acme')
          .set(await bearer())
          .expect(200)
      ).body,
    ).toEqual(response.body);
  });

  it('gets the default account, ignoring the merchant account header', async () => {
    const response = await http()
      .get('/merchant-accounts/default')
      .set({ ...(await bearer()), 'x-service-merchant-account-id': 'elsewhere' })
      .expect(200);
    expect(response.body).toMatchObject({
      type: 'merchant-account',
      id: 'default',
      account_updater_enabled: false,
      async_network_tokens_enabled: false,
    });
  });

  it('has multiple captures off unless asked, and toggles them on update', async () => {
    const created = await createAccount('captures');
    expect(created.body.multiple_captures_enabled).toBe(false);
    const enabled = await http()
      .put('/merchant-accounts/captures')
      .set(await bearer())
      .send({ multiple_captures_enabled: true })
      .expect(200);
    expect(enabled.body).toMatchObject({ id: 'captures', multiple_captures_enabled: true });
    const renamed = await http()
      .put('/merchant-accounts/captures')
      .set(await bearer())
      .send({ display_name: 'Renamed' })
      .expect(200);
    expect(renamed.body.multiple_captures_enabled).toBe(true);
    const disabled = await http()
      .put('/merchant-accounts/captures')
      .set(await bearer())
      .send({ multiple_captures_enabled: false })
      .expect(200);
    expect(disabled.body.multiple_captures_enabled).toBe(false);
    expect(
      (
        await http()
          .get('/merchant-accounts/captures')
          .set(await bearer())
          .expect(200)
      ).body,
    ).toEqual(disabled.body);
  });

  it('updates only the fields sent; null clears a setting', async () => {
    await createAccount('to-update', { over_capture_amount: 100, amex_network_tokens_requestor_id: 'amex-req' });
    const response = await http()
      .put('/merchant-accounts/to-update')
      .set(await bearer())
      .send({
        display_name: 'Renamed',
        over_capture_amount: null,
        mastercard_network_tokens_app_id: 'mc-app',
        account_updater_enabled: true,
      })
      .expect(200);
    expect(response.body).toMatchObject({
      id: 'to-update',
      display_name: 'Renamed',
      over_capture_amount: null,
      amex_network_tokens_requestor_id: 'amex-req',
      mastercard_network_tokens_app_id: 'mc-app',
      account_updater_enabled: true,
    });
    expect(response.body.updated_at >= response.body.created_at).toBe(true);
    expect(
      (
        await http()
          .get('/merchant-accounts/to-update')
          .set(await bearer())
          .expect(200)
      ).body,
    ).toEqual(response.body);
  });

  it('409 duplicate_record for an existing id', async () => {
    await createAccount('twice');
    const response = await http()
      .post('/merchant-accounts')
      .set(await bearer())
      .send({ id: 'twice', display_name: 'Again' })
      .expect(409);
    expectErrorBody(response.body, 409, 'duplicate_record');
  });

  it('404 for an unknown account on get and update', async () => {
    expectErrorBody(
      (
        await http()
          .get('/merchant-accounts/nope')
          .set(await bearer())
          .expect(404)
      ).body,
      404,
      'not_found',
    );
    expectErrorBody(
      (
        await http()
          .put('/merchant-accounts/nope')
          .set(await bearer())
          .send({ display_name: 'x' })
          .expect(404)
      ).body,
      404,
      'not_found',
    );
  });

  it('400 with details for an id outside the pattern or a blank name; 422 for wrong types and unknown fields', async () => {
    const badId = await http()
      .post('/merchant-accounts')
      .set(await bearer())
      .send({ id: 'Not_Valid', display_name: 'x' })
      .expect(400);
    expect(badId.body).toMatchObject({
      type: 'error',
      code: 'bad_request',
      status: 400,
      details: [{ location: 'body', pointer: '/id', message: expect.any(String), type: 'invalid_merchant_account' }],
    });
    const blank = await http()
      .post('/merchant-accounts')
      .set(await bearer())
      .send({ id: 'blank-name', display_name: '  ' })
      .expect(400);
    expect(blank.body.details[0]).toMatchObject({ pointer: '/display_name' });

    const wrongType = await http()
      .post('/merchant-accounts')
      .set(await bearer())
      .send({ id: 'typed', display_name: 'x', over_capture_amount: 'lots' })
      .expect(422);
    expect(wrongType.body.detail[0]).toMatchObject({ loc: ['body', 'over_capture_amount'] });
    const unknown = await http()
      .put('/merchant-accounts/default')
      .set(await bearer())
      .send({ colour: 'blue' })
      .expect(422);
    expect(unknown.body.detail[0]).toMatchObject({ loc: ['body', 'colour'], type: 'extra_forbidden' });
    const negative = await http()
      .put('/merchant-accounts/default')
      .set(await bearer())
      .send({ over_capture_percentage: -5 })
      .expect(422);
    expect(negative.body.detail[0]).toMatchObject({ loc: ['body', 'over_capture_percentage'] });
    const notBoolean = await http()
      .post('/merchant-accounts')
      .set(await bearer())
      .send({ id: 'typed', display_name: 'x', multiple_captures_enabled: 'yes' })
      .expect(422);
    expect(notBoolean.body.detail[0]).toMatchObject({ loc: ['body', 'multiple_captures_enabled'] });
    const nullSwitch = await http()
      .put('/merchant-accounts/default')
      .set(await bearer())
      .send({ multiple_captures_enabled: null })
      .expect(422);
    expect(nullSwitch.body.detail[0]).toMatchObject({ loc: ['body', 'multiple_captures_enabled'] });
  });

  it('pages by id with limit=2, forward to next_cursor null and back to previous_cursor null', async () => {
    for (const id of ['page-c', 'page-a', 'page-e', 'page-b', 'page-d']) await createAccount(id);
    const headers = await bearer();
    const all = (await http().get('/merchant-accounts').query({ limit: 100 }).set(headers).expect(200)).body.items.map(
      (item: { id: string }) => item.id,
    );
    expect(all).toEqual([...all].sort());
    expect(all).toEqual(expect.arrayContaining(['default', 'page-a', 'page-b', 'page-c', 'page-d', 'page-e']));

    const pages: {
      items: { id: string }[];
      limit: number;
      next_cursor: string | null;
      previous_cursor: string | null;
    }[] = [];
    let cursor: string | null = null;
    do {
      const response: request.Response = await http()
        .get('/merchant-accounts')
        .query({ limit: 2, ...(cursor ? { cursor } : {}) })
        .set(headers)
        .expect(200);
      pages.push(response.body);
      cursor = response.body.next_cursor;
    } while (cursor);
    expect(pages.flatMap((page) => page.items.map((item) => item.id))).toEqual(all);
    expect(pages[0]).toMatchObject({ limit: 2, previous_cursor: null });
    expect(pages[pages.length - 1]?.next_cursor).toBeNull();
    expect(pages.every((page) => page.items.length <= 2)).toBe(true);

    const backward: string[][] = [];
    let previous: string | null = pages[pages.length - 1]!.previous_cursor;
    while (previous) {
      const response: request.Response = await http()
        .get('/merchant-accounts')
        .query({ limit: 2, cursor: previous })
        .set(headers)
        .expect(200);
      backward.unshift(response.body.items.map((item: { id: string }) => item.id));
      previous = response.body.previous_cursor;
    }
    expect([...backward.flat(), ...pages[pages.length - 1]!.items.map((item) => item.id)]).toEqual(all);
  });

  it('searches by part of the id or display name', async () => {
    const response = await http()
      .get('/merchant-accounts')
      .query({ search: 'PAGE-C' })
      .set(await bearer())
      .expect(200);
    expect(response.body.items.map((item: { id: string }) => item.id)).toEqual(['page-c']);
  });

  it('422 for a limit out of range or a bad cursor', async () => {
    await http()
      .get('/merchant-accounts')
      .query({ limit: 101 })
      .set(await bearer())
      .expect(422);
    await http()
      .get('/merchant-accounts')
      .query({ cursor: 'garbage' })
      .set(await bearer())
      .expect(422);
  });

  it('403 on POST for a token without merchant-accounts.write', async () => {
    const response = await http()
      .post('/merchant-accounts')
      .set(await bearer(admin, ['merchant-accounts.read']))
      .send({ id: 'denied', display_name: 'x' })
      .expect(403);
    expectErrorBody(response.body, 403, 'forbidden');
    await http()
      .get('/merchant-accounts')
      .set(await bearer(admin, ['merchant-accounts.read']))
      .expect(200);
  });
});

describe('3-D Secure configurations', () => {
  const base = (account: string) => `/merchant-accounts/${account}/three-ds-configurations`;

  beforeAll(async () => {
    await createAccount('tds-a');
    await createAccount('tds-b');
  });

  it('creates (201), lists ({items} only), filters by currency, updates and deletes (204)', async () => {
    const headers = await bearer();
    const usd = await http().post(base('tds-a')).set(headers).send(threeDs).expect(201);
    expect(usd.body).toEqual({
      type: 'merchant-account.three-ds-configuration',
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      merchant_account_id: 'tds-a',
      ...threeDs,
      created_at: expect.stringMatching(isoWithOffset),
      updated_at: expect.stringMatching(isoWithOffset),
    });
    const eur = await http()
      .post(base('tds-a'))
      .set(headers)
      .send({ ...threeDs, currency: 'EUR', scheme: 'mastercard' })
      .expect(201);

    const list = await http().get(base('tds-a')).set(headers).expect(200);
    expect(Object.keys(list.body)).toEqual(['items']);
    expect(list.body.items.map((item: { id: string }) => item.id)).toEqual([usd.body.id, eur.body.id]);
    const filtered = await http().get(base('tds-a')).query({ currency: 'EUR' }).set(headers).expect(200);
    expect(filtered.body).toEqual({ items: [eur.body] });

    const updated = await http()
      .put(`${base('tds-a')}/${usd.body.id}`)
      .set(headers)
      .send({ merchant_name: 'Shop US', metadata: { region: 'us-east' } })
      .expect(200);
    expect(updated.body).toEqual({
      ...usd.body,
      merchant_name: 'Shop US',
      metadata: { region: 'us-east' },
      updated_at: expect.stringMatching(isoWithOffset),
    });

    const deleted = await http()
      .delete(`${base('tds-a')}/${eur.body.id}`)
      .set(headers)
      .expect(204);
    expect(deleted.text).toBe('');
    expect((await http().get(base('tds-a')).set(headers).expect(200)).body).toEqual({ items: [updated.body] });
    await http()
      .delete(`${base('tds-a')}/${eur.body.id}`)
      .set(headers)
      .expect(404);
  });

  it('422 in the spec body for currency=usd on the list, and for a bad currency or missing field on create', async () => {
    const headers = await bearer();
    const response = await http().get(base('tds-a')).query({ currency: 'usd' }).set(headers).expect(422);
    expect(response.body).toEqual({
      detail: [
        {
          loc: ['query', 'currency'],
          msg: expect.any(String),
          type: 'string_pattern_mismatch',
          input: 'usd',
          ctx: expect.any(Object),
        },
      ],
    });
    await http()
      .post(base('tds-a'))
      .set(headers)
      .send({ ...threeDs, currency: 'usd' })
      .expect(422);
    const { merchant_name: _omitted, ...missing } = threeDs;
    const missingName = await http().post(base('tds-a')).set(headers).send(missing).expect(422);
    expect(missingName.body.detail[0]).toMatchObject({ loc: ['body', 'merchant_name'], type: 'missing' });
  });

  it('400 with details for a blank profile field', async () => {
    const response = await http()
      .post(base('tds-a'))
      .set(await bearer())
      .send({ ...threeDs, merchant_url: ' ' })
      .expect(400);
    expect(response.body.details).toEqual([
      {
        location: 'body',
        pointer: '/merchant_url',
        message: expect.any(String),
        type: 'invalid_three_ds_configuration',
      },
    ]);
  });

  it('404 for an unknown merchant account', async () => {
    const headers = await bearer();
    expectErrorBody((await http().get(base('nope')).set(headers).expect(404)).body, 404, 'not_found');
    await http().post(base('nope')).set(headers).send(threeDs).expect(404);
  });

  it("404 for B's configuration addressed under A", async () => {
    const headers = await bearer();
    const ofB = await http().post(base('tds-b')).set(headers).send(threeDs).expect(201);
    await http()
      .put(`${base('tds-a')}/${ofB.body.id}`)
      .set(headers)
      .send({ merchant_name: 'hijack' })
      .expect(404);
    await http()
      .delete(`${base('tds-a')}/${ofB.body.id}`)
      .set(headers)
      .expect(404);
    expect((await http().get(base('tds-b')).set(headers).expect(200)).body.items).toEqual([ofB.body]);
  });

  it('403 on POST for a token without merchant-accounts.write', async () => {
    await http()
      .post(base('tds-a'))
      .set(await bearer(admin, ['merchant-accounts.read']))
      .send(threeDs)
      .expect(403);
  });
});

describe('a key limited to merchant account A', () => {
  let limited: { kid: string; privateKeyPem: string };
  let configurationOfB: string;

  beforeAll(async () => {
    await createAccount('only-a');
    await createAccount('only-b');
    configurationOfB = (
      await http()
        .post('/merchant-accounts/only-b/three-ds-configurations')
        .set(await bearer())
        .send(threeDs)
        .expect(201)
    ).body.id;
    const created = await service.identity.apiKeyPairs.create(
      { display_name: 'limited', roles: ['system-manager'], merchant_account_ids: ['only-a'] },
      operator,
    );
    limited = { kid: created.kid, privateKeyPem: created.private_key! };
  });

  it('reaches A and its configurations', async () => {
    const headers = await bearer(limited);
    await http().get('/merchant-accounts/only-a').set(headers).expect(200);
    await http().put('/merchant-accounts/only-a').set(headers).send({ display_name: 'Mine' }).expect(200);
    const created = await http()
      .post('/merchant-accounts/only-a/three-ds-configurations')
      .set(headers)
      .send(threeDs)
      .expect(201);
    await http().get('/merchant-accounts/only-a/three-ds-configurations').set(headers).expect(200);
    await http()
      .delete(`/merchant-accounts/only-a/three-ds-configurations/${created.body.id}`)
      .set(headers)
      .expect(204);
  });

  it("gets 403 on B and on B's configurations", async () => {
    const headers = await bearer(limited);
    expectErrorBody((await http().get('/merchant-accounts/only-b').set(headers).expect(403)).body, 403, 'forbidden');
    await http().put('/merchant-accounts/only-b').set(headers).send({ display_name: 'Theirs' }).expect(403);
    await http().get('/merchant-accounts/only-b/three-ds-configurations').set(headers).expect(403);
    await http().post('/merchant-accounts/only-b/three-ds-configurations').set(headers).send(threeDs).expect(403);
    await http()
      .put(`/merchant-accounts/only-b/three-ds-configurations/${configurationOfB}`)
      .set(headers)
      .send({ merchant_name: 'x' })
      .expect(403);
    await http()
      .delete(`/merchant-accounts/only-b/three-ds-configurations/${configurationOfB}`)
      .set(headers)
      .expect(403);
    expect(
      (
        await http()
          .get('/merchant-accounts/only-b')
          .set(await bearer())
          .expect(200)
      ).body.display_name,
    ).toBe('Account only-b');
  });

  it('gets 404 for a resource of B addressed under A', async () => {
    const headers = await bearer(limited);
    expectErrorBody(
      (
        await http()
          .put(`/merchant-accounts/only-a/three-ds-configurations/${configurationOfB}`)
          .set(headers)
          .send({ merchant_name: 'x' })
          .expect(404)
      ).body,
      404,
      'not_found',
    );
    await http()
      .delete(`/merchant-accounts/only-a/three-ds-configurations/${configurationOfB}`)
      .set(headers)
      .expect(404);
  });

  it('lists only A', async () => {
    const response = await http()
      .get('/merchant-accounts')
      .set(await bearer(limited))
      .expect(200);
    expect(response.body).toMatchObject({ limit: 20, next_cursor: null, previous_cursor: null });
    expect(response.body.items.map((item: { id: string }) => item.id)).toEqual(['only-a']);
  });

  it('gets 403 on POST /merchant-accounts', async () => {
    const response = await http()
      .post('/merchant-accounts')
      .set(await bearer(limited))
      .send({ id: 'sneaky', display_name: 'x' })
      .expect(403);
    expectErrorBody(response.body, 403, 'forbidden');
    await http()
      .get('/merchant-accounts/sneaky')
      .set(await bearer())
      .expect(404);
  });
});

describe('the OpenAPI document', () => {
  it('lists the merchant account and 3-D Secure configuration paths with their schemas', async () => {
    const document = (await http().get('/openapi.json').expect(200)).body;
    expect(Object.keys(document.paths['/merchant-accounts']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(document.paths['/merchant-accounts/{merchant_account_id}']).sort()).toEqual(['get', 'put']);
    expect(
      Object.keys(document.paths['/merchant-accounts/{merchant_account_id}/three-ds-configurations']).sort(),
    ).toEqual(['get', 'post']);
    expect(
      Object.keys(
        document.paths['/merchant-accounts/{merchant_account_id}/three-ds-configurations/{three_ds_configuration_id}'],
      ).sort(),
    ).toEqual(['delete', 'put']);
    expect(document.paths['/merchant-accounts'].post.responses['201'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/MerchantAccount',
    });
    expect(document.paths['/merchant-accounts'].get.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/MerchantAccounts',
    });
    expect(document.components.schemas).toHaveProperty('MerchantAccountCreate');
    expect(document.components.schemas).toHaveProperty('MerchantAccountUpdate');
    expect(document.components.schemas).toHaveProperty('MerchantAccountThreeDSConfiguration');
    expect(document.components.schemas).toHaveProperty('MerchantAccountThreeDSConfigurations');
    expect(document.components.schemas.MerchantAccount.properties.over_capture_amount).toBeDefined();
    expect(document.components.schemas.MerchantAccount.properties.multiple_captures_enabled).toMatchObject({
      type: 'boolean',
      description: expect.any(String),
    });
    expect(document.components.schemas.MerchantAccount.required).toContain('multiple_captures_enabled');
    expect(document.components.schemas.MerchantAccountUpdate.properties.multiple_captures_enabled).toMatchObject({
      type: 'boolean',
    });
  });
});
