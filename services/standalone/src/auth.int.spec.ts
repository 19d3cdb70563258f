/**
 * The gateway's authentication and error surface, over the embedded runtime (real SQLite, in-process bus/RPC),
 * through HTTP.
 */
import { findRoleBySlug } from '@switchyard/identity';
import {
  expectErrorBody,
  hs256WithPublicKey,
  signToken,
  swapPayload,
  tamperSignature,
  unsignedToken,
} from '@switchyard/testing';
import request from 'supertest';
import type { EmbeddedService } from './embedded';
import { startEmbeddedFixture, type EmbeddedFixture } from './embedded.fixture';

let service: EmbeddedService;
let fixture: EmbeddedFixture;
let http: () => request.Agent;
let admin: { kid: string; privateKeyPem: string };
const operator = { kind: 'operator' } as const;

beforeAll(async () => {
  fixture = await startEmbeddedFixture('auth');
  service = fixture.service;
  const server = service.gateway.app.getHttpServer();
  http = () => request.agent(server);
  const created = await service.identity.apiKeyPairs.create(
    { display_name: 'admin', roles: ['administrator'] },
    operator,
  );
  admin = { kid: created.kid, privateKeyPem: created.private_key! };
});

afterAll(() => fixture?.stop());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('GET /roles with a valid ES512 token', () => {
  it('lists the six roles with all their metadata', async () => {
    const token = await signToken({ ...admin, scopes: ['*.read'] });
    const response = await http()
      .get('/roles')
      .set(bearer(token))
      .expect(200)
      .expect('content-type', /application\/json/);
    expect(response.body).toMatchObject({ limit: 20, next_cursor: null, previous_cursor: null });
    expect(response.body.items.map((role: { slug: string }) => role.slug).sort()).toEqual([
      'administrator',
      'analyst',
      'integration',
      'key-manager',
      'pii-viewer',
      'system-manager',
    ]);
    for (const role of response.body.items) {
      expect(role).toEqual({
        type: 'role',
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        slug: expect.any(String),
        name: expect.any(String),
        description: expect.any(String),
        assignable_to: expect.any(Array),
        applies_to: expect.any(Array),
        is_standalone_assignable: expect.any(Boolean),
        permissions: expect.any(Array),
      });
    }
  });

  it('pages with cursors until next_cursor is null', async () => {
    const token = await signToken({ ...admin, scopes: ['roles.read'] });
    const slugs: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const response: request.Response = await http()
        .get('/roles')
        .query({ limit: 4, ...(cursor ? { cursor } : {}) })
        .set(bearer(token))
        .expect(200);
      slugs.push(...response.body.items.map((role: { slug: string }) => role.slug));
      cursor = response.body.next_cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(2);
    expect(new Set(slugs).size).toBe(6);
  });

  it('ignores the merchant account header, and accepts an empty Cookie header', async () => {
    const token = await signToken({ ...admin, scopes: ['*.read'] });
    await http()
      .get('/roles')
      .set({ ...bearer(token), 'x-service-merchant-account-id': 'elsewhere', cookie: '' })
      .expect(200);
  });

  it('refuses a limit out of range with the 422 body', async () => {
    const token = await signToken({ ...admin, scopes: ['*.read'] });
    for (const limit of ['0', '101', 'ten']) {
      const response = await http().get('/roles').query({ limit }).set(bearer(token)).expect(422);
      expect(response.body).toEqual({
        detail: [
          {
            loc: ['query', 'limit'],
            msg: expect.any(String),
            type: expect.any(String),
            input: limit,
            ctx: expect.any(Object),
          },
        ],
      });
    }
  });
});

describe('refusals', () => {
  it('403 when the token lacks the scope', async () => {
    const token = await signToken({ ...admin, scopes: ['buyers.read'] });
    const response = await http().get('/roles').set(bearer(token)).expect(403);
    expectErrorBody(response.body, 403, 'forbidden');
  });

  it("403 when the key's roles do not grant the scope, whatever the token claims", async () => {
    const created = await service.identity.apiKeyPairs.create(
      { display_name: 'keys only', roles: ['key-manager', 'analyst'] },
      operator,
    );
    const token = await signToken({ kid: created.kid, privateKeyPem: created.private_key!, scopes: ['*.write'] });
    const response = await http().get('/roles').set(bearer(token)).expect(403);
    expectErrorBody(response.body, 403, 'forbidden');
  });

  const unauthorized: [string, () => Promise<Record<string, string>>][] = [
    ['no Authorization header', async () => ({})],
    ['a non-Bearer scheme', async () => ({ authorization: 'Basic dXNlcjpwYXNz' })],
    ['a token that is not a JWT', async () => bearer('not-a-jwt')],
    ['an expired token', async () => bearer(await signToken({ ...admin, iatOffset: -120, expiresIn: 30 }))],
    ['a token not yet valid', async () => bearer(await signToken({ ...admin, nbfOffset: 300, expiresIn: 600 }))],
    ['a token issued in the future', async () => bearer(await signToken({ ...admin, iatOffset: 300 }))],
    ['alg none', async () => bearer(unsignedToken(admin.kid))],
    ['HS256 signed with the public key', async () => bearer(hs256WithPublicKey(admin.privateKeyPem, admin.kid))],
    ['a tampered signature', async () => bearer(tamperSignature(await signToken(admin)))],
    [
      'a swapped payload',
      async () =>
        bearer(
          swapPayload(await signToken({ ...admin, scopes: ['buyers.read'] }), {
            scopes: ['*.read'],
            exp: Math.floor(Date.now() / 1000) + 30,
          }),
        ),
    ],
    ['an unknown kid', async () => bearer(await signToken({ ...admin, kid: 'unknown-kid' }))],
    ['a token without exp', async () => bearer(swapPayload(await signToken(admin), { scopes: ['*.read'] }))],
  ];
  it.each(unauthorized)('401 for %s', async (_case, headers) => {
    const response = await http()
      .get('/roles')
      .set(await headers())
      .expect(401);
    expectErrorBody(response.body, 401, 'unauthorized');
  });

  it('401 for a key that is not active', async () => {
    const created = await service.identity.apiKeyPairs.create(
      { display_name: 'inactive', roles: ['analyst'], active: false },
      operator,
    );
    const token = await signToken({ kid: created.kid, privateKeyPem: created.private_key!, scopes: ['*.read'] });
    expectErrorBody((await http().get('/roles').set(bearer(token)).expect(401)).body, 401, 'unauthorized');
  });

  it('404 for an unknown route and 405 for a wrong method, in the error body', async () => {
    const token = await signToken(admin);
    expectErrorBody((await http().get('/no-such-thing').set(bearer(token)).expect(404)).body, 404, 'not_found');
    const wrongMethod = await http().delete('/roles').set(bearer(token)).expect(405);
    expectErrorBody(wrongMethod.body, 405, 'method_not_allowed');
    expect(wrongMethod.headers.allow).toBe('GET');
  });
});

describe('merchant account scoping', () => {
  it('a key limited to other merchant accounts still lists roles (the header has no effect there)', async () => {
    await service.identity.merchantAccounts.create({ id: 'shop-1', displayName: 'Shop 1' });
    const created = await service.identity.apiKeyPairs.create(
      { display_name: 'shop key', roles: [findRoleBySlug('integration')!.id], merchant_account_ids: ['shop-1'] },
      operator,
    );
    const token = await signToken({ kid: created.kid, privateKeyPem: created.private_key!, scopes: ['*.read'] });
    await http()
      .get('/roles')
      .set({ ...bearer(token), 'x-service-merchant-account-id': 'default' })
      .expect(200);
  });
});

describe('operations endpoints', () => {
  it('serves /healthz and /readyz without a token', async () => {
    expect((await http().get('/healthz').expect(200)).body).toEqual({ status: 'ok', node: process.version });
    expect((await http().get('/readyz').expect(200)).body).toMatchObject({
      status: 'ready',
      checks: { identity: 'ok', bus: 'ok' },
    });
  });

  it('serves an OpenAPI 3.1.0 document generated from the endpoints', async () => {
    const document = (await http().get('/openapi.json').expect(200)).body;
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe('1.0.0');
    expect(document.paths['/roles'].get.operationId).toBe('list_roles');
    expect(document.paths['/roles'].get.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Roles',
    });
    expect(document.components.schemas.Role.properties.is_standalone_assignable).toBeDefined();
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});
