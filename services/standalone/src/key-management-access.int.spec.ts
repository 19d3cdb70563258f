/**
 * Who may manage API keys (issue 22, items 5 and 6), over HTTP on the embedded runtime: an administrator API key
 * cannot change keys over the API (spec, Authentication rule 6); a caller grants only the permissions and merchant
 * accounts it holds, and a key limited to merchant accounts lists and reads only the keys within them.
 */
import { signToken } from '@switchyard/testing';
import request from 'supertest';
import { startEmbeddedFixture, type EmbeddedFixture } from './embedded.fixture';

type Key = { id: string; kid: string; private_key: string };
const operator = { kind: 'operator' } as const;
const ROLE = {
  administrator: '5b3ac0a4-7e2a-4c61-9d11-6f1c2e8b0a01',
  analyst: '5b3ac0a4-7e2a-4c61-9d11-6f1c2e8b0a02',
  integration: '5b3ac0a4-7e2a-4c61-9d11-6f1c2e8b0a05',
  systemManager: '5b3ac0a4-7e2a-4c61-9d11-6f1c2e8b0a06',
};

let fixture: EmbeddedFixture;
let http: () => request.Agent;
let admin: Key;
let analystManager: Key;
let managerOfA: Key;
let keyOfB: Key;

const bearer = async (key: Key) => ({
  authorization: `Bearer ${await signToken({ kid: key.kid, privateKeyPem: key.private_key, scopes: ['*.read', '*.write'] })}`,
});
const operatorKey = async (name: string, roles: string[], merchantAccountIds: string[] = []): Promise<Key> => {
  const created = await fixture.service.identity.apiKeyPairs.create(
    { display_name: name, roles, merchant_account_ids: merchantAccountIds },
    operator,
  );
  return { id: created.id, kid: created.kid, private_key: created.private_key! };
};

beforeAll(async () => {
  fixture = await startEmbeddedFixture('key-management-access');
  http = () => request.agent(fixture.service.gateway.app.getHttpServer());
  for (const id of ['shop-a', 'shop-b'])
    await fixture.service.identity.merchantAccounts.create({ id, displayName: id });
  admin = await operatorKey('admin', ['administrator']);
  analystManager = await operatorKey('analyst manager', ['analyst', 'key-manager']);
  managerOfA = await operatorKey('manager of A', ['analyst', 'key-manager'], ['shop-a']);
  keyOfB = await operatorKey('key of B', ['analyst'], ['shop-b']);
});

afterAll(() => fixture?.stop());

describe('an administrator API key (spec, Authentication rule 6: managing keys over the API needs key-manager)', () => {
  it('reads keys, but POST, PUT and DELETE /api-key-pairs are 403 naming the rule; nothing changes', async () => {
    await http()
      .get('/api-key-pairs')
      .set(await bearer(admin))
      .expect(200);
    const calls = [
      http()
        .post('/api-key-pairs')
        .send({ display_name: 'by admin', role_ids: [ROLE.analyst] }),
      http().put(`/api-key-pairs/${keyOfB.id}`).send({ active: false }),
      http().delete(`/api-key-pairs/${keyOfB.id}`),
    ];
    for (const call of calls) {
      const response = await call.set(await bearer(admin));
      expect(response.status, response.text).toBe(403);
      expect(response.body).toMatchObject({
        code: 'forbidden',
        message: expect.stringMatching(/needs the key-manager role/),
      });
    }
    const target = await http()
      .get(`/api-key-pairs/${keyOfB.id}`)
      .set(await bearer(admin))
      .expect(200);
    expect(target.body.active).toBe(true);
  });
});

describe('a caller grants only what it holds', () => {
  it('an analyst + key-manager key cannot make an integration or system-manager key (403), but an analyst one', async () => {
    for (const role of [ROLE.integration, ROLE.systemManager]) {
      const response = await http()
        .post('/api-key-pairs')
        .set(await bearer(analystManager))
        .send({ display_name: 'wider', role_ids: [role] });
      expect(response.status, response.text).toBe(403);
      expect(response.body.message).toMatch(/you can grant only permissions you hold/);
      expect(response.body.details[0]).toMatchObject({
        pointer: '/role_ids',
        message: expect.stringMatching(/\.write/),
      });
    }
    await http()
      .post('/api-key-pairs')
      .set(await bearer(analystManager))
      .send({ display_name: 'same', role_ids: [ROLE.analyst] })
      .expect(201);
  });

  it('nor give an existing key more than it holds, nor change one that holds more', async () => {
    const integration = await operatorKey('integration', ['integration']);
    const widened = await http()
      .put(`/api-key-pairs/${keyOfB.id}`)
      .set(await bearer(analystManager))
      .send({ role_ids: [ROLE.integration] });
    expect(widened.status, widened.text).toBe(403);
    const revoked = await http()
      .put(`/api-key-pairs/${integration.id}`)
      .set(await bearer(analystManager))
      .send({ active: false });
    expect(revoked.status, revoked.text).toBe(403);
    expect(
      (
        await http()
          .get(`/api-key-pairs/${integration.id}`)
          .set(await bearer(analystManager))
          .expect(200)
      ).body.active,
    ).toBe(true);
  });

  it('a key-manager limited to shop-a makes keys only for shop-a, with roles it holds', async () => {
    const everywhere = await http()
      .post('/api-key-pairs')
      .set(await bearer(managerOfA))
      .send({ display_name: 'x', role_ids: [ROLE.analyst] });
    expect(everywhere.status).toBe(403);
    const payments = await http()
      .post('/api-key-pairs')
      .set(await bearer(managerOfA))
      .send({ display_name: 'x', role_ids: [ROLE.integration], merchant_account_ids: ['shop-a'] });
    expect(payments.status).toBe(403);
    await http()
      .post('/api-key-pairs')
      .set(await bearer(managerOfA))
      .send({ display_name: 'reader of A', role_ids: [ROLE.analyst], merchant_account_ids: ['shop-a'] })
      .expect(201);
  });
});

describe('listing keys as a key limited to merchant accounts', () => {
  it('shows only the keys limited to its own accounts; another account’s key is a 404', async () => {
    const listed = (
      await http()
        .get('/api-key-pairs')
        .query({ limit: 100 })
        .set(await bearer(managerOfA))
        .expect(200)
    ).body.items as { id: string; merchant_account_ids: string[] }[];
    expect(listed.length).toBeGreaterThan(0);
    for (const key of listed) expect(key.merchant_account_ids).toEqual(['shop-a']);
    expect(listed.map((key) => key.id)).not.toContain(keyOfB.id);
    expect(listed.map((key) => key.id)).not.toContain(admin.id);
    await http()
      .get(`/api-key-pairs/${keyOfB.id}`)
      .set(await bearer(managerOfA))
      .expect(404);
    await http()
      .get(`/api-key-pairs/${admin.id}`)
      .set(await bearer(managerOfA))
      .expect(404);

    const all = (
      await http()
        .get('/api-key-pairs')
        .query({ limit: 100 })
        .set(await bearer(analystManager))
        .expect(200)
    ).body.items as { id: string }[];
    expect(all.map((key) => key.id)).toEqual(expect.arrayContaining([keyOfB.id, admin.id, managerOfA.id]));
  });
});
