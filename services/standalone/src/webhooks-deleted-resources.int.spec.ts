/**
 * A backlog of events about a resource that is gone by the time the webhooks service ingests them (after an outage
 * of the webhooks service) must not stall ingestion: a 404 from the owning service waits for its read model only
 * for a resource never seen before, once (`TargetMemory` in services/webhooks/src/delivery/event-targets.ts);
 * before that fix every such event cost a 1.6 s catch-up wait, one message at a time for the whole group.
 */
import { signToken } from '@switchyard/testing';
import request from 'supertest';
import { startEmbeddedFixture, type EmbeddedFixture } from './embedded.fixture';
import { WebhookReceiver } from './webhooks.receiver';

const UPDATES = 20;
let fixture: EmbeddedFixture;
let baseUrl: string;
let token: string;
/** API keys are managed over the API by a key-manager key (an administrator key is refused: spec rule 6). */
let managerToken: string;
const receiver = new WebhookReceiver();

beforeAll(async () => {
  fixture = await startEmbeddedFixture('webhooks-deleted-resources', { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', POLL_INTERVAL_MS: '20', WEBHOOK_WORKER_INTERVAL_MS: '20' }, { listen: true });
  baseUrl = `http://127.0.0.1:${(fixture.service.gateway.app.getHttpServer().address() as { port: number }).port}`;
  const admin = await fixture.service.identity.apiKeyPairs.create({ display_name: 'admin', roles: ['administrator'] }, { kind: 'operator' });
  token = await signToken({ kid: admin.kid, privateKeyPem: admin.private_key!, expiresIn: 3600 });
  const manager = await fixture.service.identity.apiKeyPairs.create({ display_name: 'keys', roles: ['key-manager', 'analyst'] }, { kind: 'operator' });
  managerToken = await signToken({ kid: manager.kid, privateKeyPem: manager.private_key!, expiresIn: 3600 });
  await receiver.up();
});

afterAll(async () => {
  await receiver.down();
  await fixture?.stop();
});

const http = () => request(baseUrl);
const auth = () => ({ authorization: `Bearer ${token}` });
const asManager = () => ({ authorization: `Bearer ${managerToken}` });

it(`after an outage, ${UPDATES} updates of an API key pair deleted meanwhile are ingested in seconds, not ${UPDATES} × 1.6 s`, async () => {
  await http().post('/webhook-subscriptions').set(auth()).send({ url: receiver.url, merchant_account_id: null, event_names: ['api-key-pair.updated', 'api-key-pair.deleted'] }).expect(201);
  const roles = (await http().get('/roles').set(auth()).expect(200)).body.items as { id: string; slug: string }[];
  const pair = (await http().post('/api-key-pairs').set(asManager()).send({ display_name: 'rotated', role_ids: [roles.find((r) => r.slug === 'analyst')!.id] }).expect(201)).body;

  // The webhooks service's consumer stops (an outage); the key is changed, then deleted (a rotation).
  await fixture.service.webhooks.deliveries.stop();
  for (let i = 0; i < UPDATES; i += 1) await http().put(`/api-key-pairs/${pair.id}`).set(asManager()).send({ display_name: `rotated-${i}` }).expect(200);
  await http().delete(`/api-key-pairs/${pair.id}`).set(asManager()).expect(204);
  await new Promise((resolve) => setTimeout(resolve, 200));

  // Back: it resumes from its committed offset.
  const resumed = Date.now();
  await fixture.service.webhooks.deliveries.start();
  await receiver.waitFor(`${UPDATES + 1} webhooks`, () => receiver.succeeded.length === UPDATES + 1, 5_000, () => `${receiver.succeeded.length} delivered after ${Date.now() - resumed} ms`);
  expect(receiver.succeeded.at(-1)!.event.name).toBe('api-key-pair.deleted');
});
