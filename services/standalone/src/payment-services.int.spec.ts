/**
 * Payment services (connections) and payment service definitions over HTTP, on the embedded runtime: status codes,
 * routing order, paging, validation, per-connection capabilities, and merchant account scoping by header.
 */
import { expectErrorBody, signToken } from '@switchyard/testing';
import request from 'supertest';
import type { EmbeddedService } from './embedded';
import { startEmbeddedFixture, type EmbeddedFixture } from './embedded.fixture';

let service: EmbeddedService;
let fixture: EmbeddedFixture;
let http: () => request.Agent;
let admin: { kid: string; privateKeyPem: string };
const operator = { kind: 'operator' } as const;
const header = 'x-service-merchant-account-id';

beforeAll(async () => {
  // Providers reach the gateway at PUBLIC_BASE_URL: each connection shows its notification endpoint there.
  fixture = await startEmbeddedFixture('payment-services', { PUBLIC_BASE_URL: 'https://pay.example.com' });
  service = fixture.service;
  http = () => request.agent(service.gateway.app.getHttpServer());
  const created = await service.identity.apiKeyPairs.create(
    { display_name: 'admin', roles: ['administrator'] },
    operator,
  );
  admin = { kid: created.kid, privateKeyPem: created.private_key! };
  for (const id of ['ps-a', 'ps-b']) {
    await http()
      .post('/merchant-accounts')
      .set(await bearer())
      .send({ id, display_name: id })
      .expect(201);
  }
});

afterAll(() => fixture?.stop());

const bearer = async (key = admin, scopes?: readonly string[]) => ({
  authorization: `Bearer ${await signToken({ ...key, ...(scopes ? { scopes } : {}) })}`,
});
const isoWithOffset = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const connection = (overrides: Record<string, unknown> = {}) => ({
  display_name: 'Card simulator',
  payment_service_definition_id: 'mock-card',
  fields: [{ key: 'merchant_id', value: 'sim-merchant' }],
  accepted_currencies: ['USD', 'EUR'],
  accepted_countries: ['US', 'DE'],
  ...overrides,
});

describe('payment service definitions', () => {
  it('lists mock-card in a paged envelope, ignoring the merchant account header', async () => {
    const response = await http()
      .get('/payment-service-definitions')
      .set(await bearer())
      .set(header, 'nope')
      .expect(200);
    expect(response.body).toMatchObject({ limit: 20, next_cursor: null, previous_cursor: null });
    const mockCard = response.body.items.find((item: { id: string }) => item.id === 'mock-card');
    expect(mockCard).toMatchObject({
      id: 'mock-card',
      type: 'payment-service-definition',
      display_name: expect.any(String),
      method: 'card',
      mode: 'card',
      fields: expect.any(Array),
      reporting_fields: [],
      supported_currencies: expect.arrayContaining(['USD']),
      supported_countries: expect.arrayContaining(['US']),
      supported_features: expect.any(Object),
      required_checkout_fields: [],
      configuration: expect.any(Object),
      capabilities: { multiple_captures: true, delayed_capture: true, three_d_secure: true, network_tokens: true },
    });
    expect(
      (
        await http()
          .get('/payment-service-definitions/mock-card')
          .set(await bearer())
          .expect(200)
      ).body,
    ).toEqual(mockCard);
    expectErrorBody(
      (
        await http()
          .get('/payment-service-definitions/nope')
          .set(await bearer())
          .expect(404)
      ).body,
      404,
      'not_found',
    );
  });

  it('403 without payment-service-definitions.read', async () => {
    await http()
      .get('/payment-service-definitions')
      .set(await bearer(admin, ['payment-services.read']))
      .expect(403);
  });
});

describe('payment services', () => {
  it('creates (201) in the default account, gets, updates, deletes (204) and is 404 afterwards', async () => {
    const headers = await bearer();
    const created = await http()
      .post('/payment-services')
      .set(headers)
      .send(connection({ three_d_secure_enabled: true }))
      .expect(201);
    expect(created.headers['content-type']).toMatch(/application\/json/);
    expect(created.body).toMatchObject({
      type: 'payment-service',
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      merchant_account_id: 'default',
      payment_service_definition_id: 'mock-card',
      method: 'card',
      display_name: 'Card simulator',
      active: true,
      position: 1,
      status: 'created',
      accepted_currencies: ['USD', 'EUR'],
      accepted_countries: ['US', 'DE'],
      three_d_secure_enabled: true,
      network_tokens_enabled: false,
      payment_method_tokenization_enabled: false,
      open_loop: false,
      settlement_reporting_enabled: false,
      is_deleted: false,
      fields: [{ key: 'merchant_id', value: 'sim-merchant' }],
      created_at: expect.stringMatching(isoWithOffset),
      updated_at: expect.stringMatching(isoWithOffset),
    });
    expect(created.body.webhook_url).toBe(`https://pay.example.com/payment-services/${created.body.id}/notifications`);
    const url = `/payment-services/${created.body.id}`;
    expect((await http().get(url).set(headers).expect(200)).body).toEqual(created.body);

    const updated = await http()
      .put(url)
      .set(headers)
      .send({ display_name: 'Sim', network_tokens_enabled: true, active: false, accepted_countries: ['GB'] })
      .expect(200);
    expect(updated.body).toEqual({
      ...created.body,
      display_name: 'Sim',
      network_tokens_enabled: true,
      active: false,
      accepted_countries: ['GB'],
      updated_at: expect.stringMatching(isoWithOffset),
    });

    const deleted = await http().delete(url).set(headers).expect(204);
    expect(deleted.text).toBe('');
    expectErrorBody((await http().get(url).set(headers).expect(404)).body, 404, 'not_found');
    await http().put(url).set(headers).send({ display_name: 'x' }).expect(404);
    await http().delete(url).set(headers).expect(404);
    const withDeleted = await http().get('/payment-services').query({ deleted: true }).set(headers).expect(200);
    expect(withDeleted.body.items).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: created.body.id, is_deleted: true })]),
    );
  });

  it('lists the header account only, by position then age, paged to next_cursor null', async () => {
    const headers = { ...(await bearer()), [header]: 'ps-a' };
    const second = await http()
      .post('/payment-services')
      .set(headers)
      .send(connection({ display_name: 'second', position: 5 }))
      .expect(201);
    const first = await http()
      .post('/payment-services')
      .set(headers)
      .send(connection({ display_name: 'first', position: 2 }))
      .expect(201);
    const third = await http()
      .post('/payment-services')
      .set(headers)
      .send(connection({ display_name: 'third' }))
      .expect(201);
    expect(third.body.position).toBe(6);
    await http()
      .post('/payment-services')
      .set({ ...(await bearer()), [header]: 'ps-b' })
      .send(connection({ display_name: 'of B' }))
      .expect(201);

    const all = await http().get('/payment-services').set(headers).expect(200);
    expect(all.body).toMatchObject({ limit: 20, next_cursor: null, previous_cursor: null });
    expect(all.body.items.map((item: { id: string }) => item.id)).toEqual([
      first.body.id,
      second.body.id,
      third.body.id,
    ]);

    const page1 = await http().get('/payment-services').query({ limit: 2 }).set(headers).expect(200);
    expect(page1.body.items.map((item: { display_name: string }) => item.display_name)).toEqual(['first', 'second']);
    const page2 = await http()
      .get('/payment-services')
      .query({ limit: 2, cursor: page1.body.next_cursor })
      .set(headers)
      .expect(200);
    expect(page2.body.items.map((item: { display_name: string }) => item.display_name)).toEqual(['third']);
    expect(page2.body.next_cursor).toBeNull();
    expect(
      (await http().get('/payment-services').query({ method: 'paypal' }).set(headers).expect(200)).body.items,
    ).toEqual([]);
  });

  it("404 for B's payment service addressed under A", async () => {
    const ofB = await http()
      .post('/payment-services')
      .set({ ...(await bearer()), [header]: 'ps-b' })
      .send(connection())
      .expect(201);
    const underA = { ...(await bearer()), [header]: 'ps-a' };
    expectErrorBody(
      (await http().get(`/payment-services/${ofB.body.id}`).set(underA).expect(404)).body,
      404,
      'not_found',
    );
    await http().put(`/payment-services/${ofB.body.id}`).set(underA).send({ display_name: 'hijack' }).expect(404);
    await http().delete(`/payment-services/${ofB.body.id}`).set(underA).expect(404);
    await http()
      .get(`/payment-services/${ofB.body.id}`)
      .set({ ...(await bearer()), [header]: 'ps-b' })
      .expect(200);
  });

  it('turns capabilities off per connection, and refuses unknown capability names', async () => {
    const headers = await bearer();
    const created = await http()
      .post('/payment-services')
      .set(headers)
      .send(connection({ capabilities: { multiple_captures: false } }))
      .expect(201);
    expect(created.body.capabilities).toEqual({
      multiple_captures: false,
      incremental_authorization: true,
      network_tokens: true,
      tracking_forwarding: true,
      asynchronous_refund_settlement: true,
      three_d_secure: true,
      delayed_capture: true,
    });
    const updated = await http()
      .put(`/payment-services/${created.body.id}`)
      .set(headers)
      .send({ capabilities: { delayed_capture: false, multiple_captures: true } })
      .expect(200);
    expect(updated.body.capabilities).toMatchObject({ multiple_captures: true, delayed_capture: false });
    const unknown = await http()
      .put(`/payment-services/${created.body.id}`)
      .set(headers)
      .send({ capabilities: { teleport: false } })
      .expect(422);
    expect(unknown.body.detail[0]).toMatchObject({
      loc: ['body', 'capabilities', 'teleport'],
      type: 'extra_forbidden',
    });
  });

  it('400 with details for an unknown definition, a blank name or a field the definition lacks', async () => {
    const headers = await bearer();
    const unknown = await http()
      .post('/payment-services')
      .set(headers)
      .send(connection({ payment_service_definition_id: 'nope' }))
      .expect(400);
    expect(unknown.body).toMatchObject({
      type: 'error',
      code: 'bad_request',
      status: 400,
      details: [
        {
          location: 'body',
          pointer: '/payment_service_definition_id',
          message: expect.any(String),
          type: 'unknown_payment_service_definition',
        },
      ],
    });
    const blank = await http()
      .post('/payment-services')
      .set(headers)
      .send(connection({ display_name: ' ' }))
      .expect(400);
    expect(blank.body.details[0]).toMatchObject({ pointer: '/display_name' });
    const field = await http()
      .post('/payment-services')
      .set(headers)
      .send(connection({ fields: [{ key: 'colour', value: 'blue' }] }))
      .expect(400);
    expect(field.body.details[0]).toMatchObject({ pointer: '/fields/0/key' });
  });

  it('422 for malformed currencies and countries, missing or unknown fields, a bad id', async () => {
    const headers = await bearer();
    const currency = await http()
      .post('/payment-services')
      .set(headers)
      .send(connection({ accepted_currencies: ['usd'] }))
      .expect(422);
    expect(currency.body.detail[0]).toMatchObject({
      loc: ['body', 'accepted_currencies', 0],
      type: 'string_pattern_mismatch',
    });
    const country = await http()
      .post('/payment-services')
      .set(headers)
      .send(connection({ accepted_countries: ['USA'] }))
      .expect(422);
    expect(country.body.detail[0]).toMatchObject({ loc: ['body', 'accepted_countries', 0] });
    const { accepted_currencies: _omitted, ...missing } = connection();
    const absent = await http().post('/payment-services').set(headers).send(missing).expect(422);
    expect(absent.body.detail[0]).toMatchObject({ loc: ['body', 'accepted_currencies'], type: 'missing' });
    await http()
      .post('/payment-services')
      .set(headers)
      .send(connection({ colour: 'blue' }))
      .expect(422);
    await http().get('/payment-services/not-a-uuid').set(headers).expect(422);
    await http().get('/payment-services').query({ limit: 101 }).set(headers).expect(422);
  });

  it('403 without payment-services.write, and for a key limited to other merchant accounts', async () => {
    await http()
      .post('/payment-services')
      .set(await bearer(admin, ['payment-services.read']))
      .send(connection())
      .expect(403);
    await http()
      .get('/payment-services')
      .set(await bearer(admin, ['payment-services.read']))
      .expect(200);

    const created = await service.identity.apiKeyPairs.create(
      { display_name: 'limited', roles: ['system-manager'], merchant_account_ids: ['ps-a'] },
      operator,
    );
    const limited = await bearer({ kid: created.kid, privateKeyPem: created.private_key! });
    await http()
      .get('/payment-services')
      .set({ ...limited, [header]: 'ps-a' })
      .expect(200);
    expectErrorBody(
      (
        await http()
          .get('/payment-services')
          .set({ ...limited, [header]: 'ps-b' })
          .expect(403)
      ).body,
      403,
      'forbidden',
    );
    await http()
      .post('/payment-services')
      .set({ ...limited, [header]: 'ps-b' })
      .send(connection())
      .expect(403);
    await http().get('/payment-service-definitions').set(limited).expect(200);
  });
});

describe('the OpenAPI document', () => {
  it('lists the payment service paths with their schemas', async () => {
    const document = (await http().get('/openapi.json').expect(200)).body;
    expect(Object.keys(document.paths['/payment-services']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(document.paths['/payment-services/{payment_service_id}']).sort()).toEqual([
      'delete',
      'get',
      'put',
    ]);
    expect(Object.keys(document.paths['/payment-service-definitions']).sort()).toEqual(['get']);
    expect(document.paths['/payment-services'].post.responses['201'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/PaymentService',
    });
    for (const name of [
      'PaymentService',
      'PaymentServices',
      'PaymentServiceCreate',
      'PaymentServiceUpdate',
      'PaymentServiceDefinition',
      'PaymentServiceDefinitions',
      'PaymentServiceCapabilities',
      'PaymentServiceConfiguration',
    ]) {
      expect(document.components.schemas).toHaveProperty(name);
    }
  });

  it("documents every definition's fields (adyen-card's, stripe-card's) on create and update as listed", async () => {
    const document = (await http().get('/openapi.json').expect(200)).body;
    const { PaymentServiceCreate: create, PaymentServiceUpdate: update } = document.components.schemas;
    const described = [create.properties.fields.description as string, update.properties.fields.description as string];
    const listed = await http()
      .get('/payment-service-definitions')
      .set(await bearer())
      .expect(200);
    type Listed = { id: string; fields: { key: string; required: boolean; secret: boolean }[] };
    const definitions = listed.body.items as Listed[];
    expect(definitions.map((d) => d.id)).toEqual(expect.arrayContaining(['adyen-card', 'stripe-card']));
    for (const description of described) {
      for (const definition of definitions) {
        const line = description.split('\n').find((text) => text.startsWith(`- \`${definition.id}\`:`));
        expect(line, `${definition.id} in ${description}`).toBeDefined();
        for (const field of definition.fields) {
          const flags = [field.required ? 'required' : 'optional', ...(field.secret ? ['secret'] : [])].join(', ');
          expect(line).toContain(`\`${field.key}\` (${flags})`);
        }
      }
    }
    // An example connection per real provider, with its required fields.
    const examples = create.examples as { payment_service_definition_id: string; fields: { key: string }[] }[];
    for (const id of ['adyen-card', 'stripe-card']) {
      const example = examples.find((e) => e.payment_service_definition_id === id);
      const required = definitions
        .find((d) => d.id === id)!
        .fields.filter((f) => f.required)
        .map((f) => f.key);
      expect(example?.fields.map((f) => f.key)).toEqual(expect.arrayContaining(required));
    }
  });
});
