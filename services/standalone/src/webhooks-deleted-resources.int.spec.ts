/**
 * A backlog of events about a resource that is gone by the time the webhooks service ingests them (after an outage
 * of the webhooks service) must not stall ingestion: a 404 from the owning service waits for its read model only
 * for a resource never seen before, once (`TargetMemory` in services/webhooks/src/delivery/event-targets.ts);
 * before that fix every such event cost a 1.6 s catch-up wait, one message at a time for the whole group.
 *
 * Counted, not timed: the webhooks service's lookups of the key pair are counted. One catch-up in all (the first
 * 404: a first try and six waits) and a lookup or two for each later event, where each event once cost a catch-up.
 */
import { apiKeyPairPatterns } from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
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
  fixture = await startEmbeddedFixture(
    'webhooks-deleted-resources',
    { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', POLL_INTERVAL_MS: '20', WEBHOOK_WORKER_INTERVAL_MS: '20' },
    { listen: true },
  );
  baseUrl = `http://127.0.0.1:${(fixture.service.gateway.app.getHttpServer().address() as { port: number }).port}`;
  const admin = await fixture.service.identity.apiKeyPairs.create(
    { display_name: 'admin', roles: ['administrator'] },
    { kind: 'operator' },
  );
  token = await signToken({ kid: admin.kid, privateKeyPem: admin.private_key!, expiresIn: 3600 });
  const manager = await fixture.service.identity.apiKeyPairs.create(
    { display_name: 'keys', roles: ['key-manager', 'analyst'] },
    { kind: 'operator' },
  );
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

/** Tries of one catch-up for a resource never seen (services/webhooks/src/delivery/event-targets.ts): 1 + 6 waits. */
const ONE_CATCH_UP = 7;

it(`after an outage, ${UPDATES} updates of a key pair deleted meanwhile cost one catch-up, not one each`, async () => {
  await http()
    .post('/webhook-subscriptions')
    .set(auth())
    .send({
      url: receiver.url,
      merchant_account_id: null,
      event_names: ['api-key-pair.updated', 'api-key-pair.deleted'],
    })
    .expect(201);
  const roles = (await http().get('/roles').set(auth()).expect(200)).body.items as { id: string; slug: string }[];
  const pair = (
    await http()
      .post('/api-key-pairs')
      .set(asManager())
      .send({ display_name: 'rotated', role_ids: [roles.find((r) => r.slug === 'analyst')!.id] })
      .expect(201)
  ).body;

  // The webhooks service's consumer stops (an outage); the key is changed, then deleted (a rotation).
  await fixture.service.webhooks.deliveries.stop();
  for (let i = 0; i < UPDATES; i += 1)
    await http()
      .put(`/api-key-pairs/${pair.id}`)
      .set(asManager())
      .send({ display_name: `rotated-${i}` })
      .expect(200);
  await http().delete(`/api-key-pairs/${pair.id}`).set(asManager()).expect(204);
  await new Promise((resolve) => setTimeout(resolve, 200));

  // The webhooks service's lookups of this key pair, counted from here on.
  const rpc = (fixture.service.webhooks.deliveries as unknown as { options: { rpc: RpcClient } }).options.rpc;
  const call = rpc.call.bind(rpc);
  let lookups = 0;
  rpc.call = ((pattern: string, payload: unknown, ...rest: unknown[]) => {
    if (pattern === apiKeyPairPatterns.get && (payload as { id?: string }).id === pair.id) lookups += 1;
    return (call as (...args: unknown[]) => unknown)(pattern, payload, ...rest);
  }) as RpcClient['call'];

  // Back: it resumes from its committed offset. (The wait's limit is a guard: the count is what is checked.)
  await fixture.service.webhooks.deliveries.start();
  // Long enough for the slow path too (21 catch-ups of 1.6 s), so that the count, not the clock, decides.
  const allDelivered = () => receiver.succeeded.length === UPDATES + 1;
  await receiver.waitFor(`${UPDATES + 1} webhooks`, allDelivered, 50_000, () => `${lookups} lookups`);
  expect(receiver.succeeded.at(-1)!.event.name).toBe('api-key-pair.deleted');
  // At least one per event; at most one catch-up in all and two per event (a message may be handled twice, the bus
  // retrying a slow first handling). A catch-up per event, as before the fix, would be over 140.
  expect(lookups, 'lookups of the deleted key pair').toBeGreaterThanOrEqual(UPDATES + 1);
  expect(lookups, 'lookups of the deleted key pair').toBeLessThanOrEqual(ONE_CATCH_UP + 2 * (UPDATES + 1));
}, 60_000);
