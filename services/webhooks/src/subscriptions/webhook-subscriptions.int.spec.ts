/** The subscriptions slice over a real store and read model: scoping, the URL rule, secrets, the directory, encryption at rest. */
import fs from 'node:fs';
import path from 'node:path';
import { ApiError } from '@switchyard/api';
import { webhookPatterns, type WebhookCaller, type WebhookSubscriptionCreateInput } from '@switchyard/contracts';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { InProcessRpc } from '@switchyard/rpc';
import { ServiceHost } from '@switchyard/service';
import { visibleTo } from '../subscription-directory';
import { loadWebhooksKey } from './secret-box';
import { WebhookSubscriptions } from './webhook-subscriptions.slice';
import { webhooksKeyRing, type WebhooksKeyRing } from './webhooks-keys';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';

let dir: string;
let storage: ServiceStorage;
let host: ServiceHost;
let subscriptions: WebhookSubscriptions;
let key: Buffer;
let clock = Date.parse('2026-01-01T00:00:00.000Z');

const open = async (options: { key?: Buffer | WebhooksKeyRing; allowPrivateUrls?: boolean } = {}) => {
  storage = openServiceStorage('webhooks', { dataDir: dir });
  host = new ServiceHost({ store: storage.store, db: storage.db, now: () => new Date((clock += 1000)) });
  subscriptions = new WebhookSubscriptions(host.context, {
    key: options.key ?? key,
    allowPrivateUrls: options.allowPrivateUrls ?? false,
  });
  host.add(subscriptions);
  await host.catchUp();
};
const close = async () => {
  await host.stop();
  await storage.close();
};

beforeEach(async () => {
  dir = createTestDataDir('webhook-subscriptions');
  key = loadWebhooksKey({ dataDir: dir });
  await open();
});
afterEach(async () => {
  await close();
  removeTestDataDir(dir);
});

const shopA: WebhookCaller = { merchant_account_id: 'shop-a' };
const shopB: WebhookCaller = { merchant_account_id: 'shop-b', caller_merchant_account_ids: [] };
const limitedA: WebhookCaller = { merchant_account_id: 'shop-a', caller_merchant_account_ids: ['shop-a'] };
const body = (overrides: Partial<WebhookSubscriptionCreateInput> = {}): WebhookSubscriptionCreateInput => ({
  url: 'https://hooks.example.com/in',
  ...overrides,
});

async function apiError(action: () => unknown): Promise<ApiError> {
  try {
    await action();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError');
}

it('creates with defaults, never shows the basic-auth password, and gets it back', async () => {
  const created = await subscriptions.create({
    ...shopA,
    body: body({ basic_auth: { username: 'hooks', password: 'pa55-w0rd-in-clear' }, description: 'ERP' }),
  });
  expect(created).toEqual({
    type: 'webhook-subscription',
    id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    url: 'https://hooks.example.com/in',
    event_names: null,
    merchant_account_id: 'shop-a',
    active: true,
    basic_auth: { username: 'hooks' },
    description: 'ERP',
    created_at: expect.any(String),
    updated_at: expect.any(String),
  });
  expect(JSON.stringify(created)).not.toContain('pa55');
  expect(subscriptions.get({ ...shopA, subscription_id: created.id })).toEqual(created);
  expect(subscriptions.find(created.id)).toEqual({
    id: created.id,
    url: created.url,
    merchantAccountId: 'shop-a',
    eventNames: null,
    active: true,
    basicAuth: { username: 'hooks', password: 'pa55-w0rd-in-clear' },
    billingDetails: false, // the RPC caller did not say it reads billing details (issue 22, item 4)
  });
});

it("lists the account's own and the instance-level subscriptions, oldest first, paged; limited keys see their account's only", async () => {
  const a1 = await subscriptions.create({ ...shopA, body: body({ description: 'a1' }) });
  const instance = await subscriptions.create({
    ...shopA,
    body: body({ merchant_account_id: null, description: 'instance' }),
  });
  const b1 = await subscriptions.create({ ...shopB, body: body({ description: 'b1' }) });
  const a2 = await subscriptions.create({ ...shopA, body: body({ merchant_account_id: 'shop-a', description: 'a2' }) });
  expect(instance.merchant_account_id).toBeNull();

  expect(subscriptions.list({ ...shopA, limit: 20 }).items.map((item) => item.description)).toEqual([
    'a1',
    'instance',
    'a2',
  ]);
  expect(subscriptions.list({ ...shopB, limit: 20 }).items.map((item) => item.description)).toEqual(['instance', 'b1']);
  expect(subscriptions.list({ ...limitedA, limit: 20 }).items.map((item) => item.description)).toEqual(['a1', 'a2']);

  const first = subscriptions.list({ ...shopA, limit: 2 });
  expect(first.items.map((item) => item.id)).toEqual([a1.id, instance.id]);
  expect(first.previous_cursor).toBeNull();
  const second = subscriptions.list({ ...shopA, limit: 2, cursor: first.next_cursor });
  expect(second.items.map((item) => item.id)).toEqual([a2.id]);
  expect(second.next_cursor).toBeNull();
  expect(
    subscriptions.list({ ...shopA, limit: 2, cursor: second.previous_cursor }).items.map((item) => item.id),
  ).toEqual([a1.id, instance.id]);

  // Another account's subscription is not found; an instance-level one is, unless the key is limited.
  expect((await apiError(() => subscriptions.get({ ...shopA, subscription_id: b1.id }))).status).toBe(404);
  expect(subscriptions.get({ ...shopB, subscription_id: instance.id }).id).toBe(instance.id);
  expect((await apiError(() => subscriptions.get({ ...limitedA, subscription_id: instance.id }))).status).toBe(404);
  expect(
    (await apiError(() => subscriptions.update({ ...shopA, subscription_id: b1.id, body: { active: false } }))).status,
  ).toBe(404);
  expect((await apiError(() => subscriptions.delete({ ...limitedA, subscription_id: instance.id }))).status).toBe(404);
  expect((await apiError(() => subscriptions.secrets({ ...shopA, subscription_id: b1.id }))).status).toBe(404);
  expect(visibleTo(shopB, { merchantAccountId: null })).toBe(true);
  expect(visibleTo(limitedA, { merchantAccountId: null })).toBe(false);
  expect(visibleTo(limitedA, { merchantAccountId: 'shop-a' })).toBe(true);
  expect(visibleTo(shopB, { merchantAccountId: 'shop-a' })).toBe(false);
});

it('refuses what the rules refuse: private URLs (detail on /url), other accounts, instance level for limited keys', async () => {
  for (const url of [
    'http://localhost:3000/hook',
    'http://127.0.0.1/hook',
    'http://192.168.1.20/hook',
    'http://[::1]/hook',
    'http://[fd00::2]/',
  ]) {
    const error = await apiError(() => subscriptions.create({ ...shopA, body: body({ url }) }));
    expect(error.status).toBe(400);
    expect(error.details).toEqual([
      {
        location: 'body',
        pointer: '/url',
        message: expect.stringContaining('WEBHOOK_ALLOW_PRIVATE_URLS'),
        type: 'invalid_webhook_subscription',
      },
    ]);
  }
  const scheme = await apiError(() =>
    subscriptions.create({ ...shopA, body: body({ url: 'ftp://hooks.example.com/' }) }),
  );
  expect(scheme.status).toBe(400);
  expect(scheme.details[0]?.pointer).toBe('/url');

  const other = await apiError(() => subscriptions.create({ ...shopA, body: body({ merchant_account_id: 'shop-b' }) }));
  expect(other.status).toBe(400);
  expect(other.details[0]?.pointer).toBe('/merchant_account_id');
  expect(
    (await apiError(() => subscriptions.create({ ...limitedA, body: body({ merchant_account_id: null }) }))).status,
  ).toBe(403);

  const created = await subscriptions.create({ ...shopA, body: body() });
  const update = await apiError(() =>
    subscriptions.update({ ...shopA, subscription_id: created.id, body: { url: 'http://10.0.0.8/' } }),
  );
  expect(update.details).toEqual([expect.objectContaining({ pointer: '/url' })]);
  expect(subscriptions.list({ ...shopA, limit: 20 }).items).toHaveLength(1);

  await close();
  await open({ allowPrivateUrls: true });
  const local = await subscriptions.create({ ...shopA, body: body({ url: 'http://127.0.0.1:9999/hook' }) });
  expect(local.url).toBe('http://127.0.0.1:9999/hook');
});

it('updates only what is sent; null clears', async () => {
  const created = await subscriptions.create({
    ...shopA,
    body: body({
      event_names: ['transaction.captured'],
      basic_auth: { username: 'u', password: 'first-password' },
      description: 'd',
    }),
  });
  const ref = { ...shopA, subscription_id: created.id };
  const renamed = await subscriptions.update({
    ...ref,
    body: { url: 'https://other.example.com/hook', active: false },
  });
  expect(renamed).toMatchObject({
    url: 'https://other.example.com/hook',
    active: false,
    event_names: ['transaction.captured'],
    basic_auth: { username: 'u' },
    description: 'd',
  });
  expect(renamed.updated_at > created.updated_at).toBe(true);
  expect(renamed.created_at).toBe(created.created_at);

  await subscriptions.update({ ...ref, body: { basic_auth: { username: 'v', password: 'second-password' } } });
  expect(subscriptions.find(created.id)?.basicAuth).toEqual({ username: 'v', password: 'second-password' });
  const cleared = await subscriptions.update({
    ...ref,
    body: { event_names: null, basic_auth: null, description: null },
  });
  expect(cleared).toMatchObject({
    event_names: null,
    basic_auth: null,
    description: null,
    url: 'https://other.example.com/hook',
    active: false,
  });
  expect(subscriptions.find(created.id)?.basicAuth).toBeNull();

  const owner = await apiError(() => subscriptions.update({ ...ref, body: { merchant_account_id: null } }));
  expect(owner.details[0]?.pointer).toBe('/merchant_account_id');
  const invalid = await apiError(() =>
    subscriptions.update({ ...ref, body: { event_names: ['not.an-event'] } as never }),
  );
  expect(invalid.status).toBe(400);
});

it('deletes softly: not found afterwards, gone from lists and from the directory', async () => {
  const created = await subscriptions.create({ ...shopA, body: body() });
  const ref = { ...shopA, subscription_id: created.id };
  await subscriptions.createSecret(ref);
  expect(subscriptions.matching('shop-a', 'transaction.captured')).toHaveLength(1);
  await subscriptions.delete(ref);
  expect((await apiError(() => subscriptions.get(ref))).status).toBe(404);
  expect((await apiError(() => subscriptions.delete(ref))).status).toBe(404);
  expect((await apiError(() => subscriptions.createSecret(ref))).status).toBe(404);
  expect(subscriptions.list({ ...shopA, limit: 20 }).items).toEqual([]);
  expect(subscriptions.matching('shop-a', 'transaction.captured')).toEqual([]);
  expect(subscriptions.find(created.id)).toBeNull();
  expect(subscriptions.activeSecrets(created.id)).toEqual([]);
  expect(storage.db.prepare('SELECT deleted FROM webhook_subscriptions WHERE id = ?').get(created.id)).toEqual({
    deleted: 1,
  });
});

it('makes secrets shown once, lists them masked, signs with every active one, and stops on revoke', async () => {
  const created = await subscriptions.create({ ...shopA, body: body() });
  const ref = { ...shopA, subscription_id: created.id };
  expect(subscriptions.activeSecrets(created.id)).toEqual([]);
  const first = await subscriptions.createSecret(ref);
  expect(first).toEqual({
    type: 'webhook-secret',
    id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    subscription_id: created.id,
    secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
    masked: `••••${first.secret!.slice(-4)}`,
    active: true,
    created_at: expect.any(String),
    revoked_at: null,
  });
  expect(Buffer.from(first.secret!.slice('whsec_'.length), 'base64url')).toHaveLength(32);
  const second = await subscriptions.createSecret(ref);
  expect(second.secret).not.toBe(first.secret);

  expect(
    subscriptions.secrets(ref).items.map(({ id, secret, active, masked }) => ({ id, secret, active, masked })),
  ).toEqual([
    { id: first.id, secret: null, active: true, masked: first.masked },
    { id: second.id, secret: null, active: true, masked: second.masked },
  ]);
  expect(subscriptions.activeSecrets(created.id)).toEqual([
    { id: first.id, secret: first.secret },
    { id: second.id, secret: second.secret },
  ]);

  const revoked = await subscriptions.revokeSecret({ ...ref, secret_id: first.id });
  expect(revoked).toMatchObject({ id: first.id, active: false, secret: null, revoked_at: expect.any(String) });
  expect(subscriptions.activeSecrets(created.id)).toEqual([{ id: second.id, secret: second.secret }]);
  expect(await subscriptions.revokeSecret({ ...ref, secret_id: first.id })).toEqual(revoked);
  expect(
    (await apiError(() => subscriptions.revokeSecret({ ...ref, secret_id: 'e0c5f0f4-1111-4111-8111-000000000000' })))
      .status,
  ).toBe(404);
  expect(
    (await apiError(() => subscriptions.revokeSecret({ ...shopB, subscription_id: created.id, secret_id: second.id })))
      .status,
  ).toBe(404);
  expect(subscriptions.secrets(ref).items.map((secret) => secret.active)).toEqual([false, true]);

  for (let i = 0; i < 4; i++) await subscriptions.createSecret(ref);
  const tooMany = await apiError(() => subscriptions.createSecret(ref));
  expect(tooMany.status).toBe(400);
  expect(tooMany.message).toMatch(/at most 5 active secrets/);
});

it('tells delivery which active subscriptions want an event, the instance-level ones included', async () => {
  const all = await subscriptions.create({ ...shopA, body: body({ description: 'all of shop-a' }) });
  const captures = await subscriptions.create({
    ...shopA,
    body: body({ event_names: ['transaction.captured', 'capture.succeeded'] }),
  });
  const instance = await subscriptions.create({
    ...shopA,
    body: body({ merchant_account_id: null, event_names: ['api-key-pair.created', 'transaction.captured'] }),
  });
  const inactive = await subscriptions.create({ ...shopA, body: body({ active: false }) });
  const other = await subscriptions.create({ ...shopB, body: body() });

  const ids = (merchantAccountId: string | null, eventName: string) =>
    subscriptions
      .matching(merchantAccountId, eventName)
      .map((target) => target.id)
      .sort();
  expect(ids('shop-a', 'transaction.captured')).toEqual([all.id, captures.id, instance.id].sort());
  expect(ids('shop-a', 'refund.succeeded')).toEqual([all.id]);
  expect(ids('shop-b', 'transaction.captured')).toEqual([instance.id, other.id].sort());
  expect(ids(null, 'api-key-pair.created')).toEqual([instance.id]);
  expect(ids('shop-c', 'refund.failed')).toEqual([]);
  expect(subscriptions.find(inactive.id)).toMatchObject({ id: inactive.id, active: false });

  await subscriptions.update({ ...shopA, subscription_id: all.id, body: { active: false } });
  expect(ids('shop-a', 'refund.succeeded')).toEqual([]);
  await subscriptions.update({ ...shopA, subscription_id: inactive.id, body: { active: true } });
  expect(ids('shop-a', 'refund.succeeded')).toEqual([inactive.id]);
});

it('never writes a signing secret or a basic-auth password in clear to the SQLite file or its WAL', async () => {
  const password = 'basic-auth-password-0123456789';
  const created = await subscriptions.create({ ...shopA, body: body({ basic_auth: { username: 'hooks', password } }) });
  const ref = { ...shopA, subscription_id: created.id };
  const secrets = [await subscriptions.createSecret(ref), await subscriptions.createSecret(ref)].map(
    (secret) => secret.secret!,
  );
  await subscriptions.update({ ...ref, body: { basic_auth: { username: 'hooks', password: `${password}-2` } } });
  const clear = [password, `${password}-2`, ...secrets, ...secrets.map((secret) => secret.slice('whsec_'.length, -4))];

  const file = path.join(dir, 'webhooks.db');
  const onDisk = () =>
    ['', '-wal', '-journal']
      .map((suffix) => `${file}${suffix}`)
      .filter((name) => fs.existsSync(name))
      .map((name) => fs.readFileSync(name));
  const check = (files: Buffer[]) => {
    const bytes = Buffer.concat(files);
    expect(bytes.includes(Buffer.from('webhook-subscription-', 'latin1'))).toBe(true); // we do look at the events
    for (const value of clear) {
      expect(bytes.includes(Buffer.from(value, 'latin1'))).toBe(false);
      expect(bytes.includes(Buffer.from(value, 'utf16le'))).toBe(false);
    }
  };
  check(onDisk());
  const events = await storage.store.readStream(`webhook-subscription-${created.id}`);
  expect(events.map((event) => event.type)).toEqual([
    'WebhookSubscriptionCreated',
    'WebhookSecretCreated',
    'WebhookSecretCreated',
    'WebhookSubscriptionUpdated',
  ]);
  expect(JSON.stringify(events)).toMatch(/"secret":"v2\.[0-9a-f]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"/);
  await close(); // checkpoints the WAL into the main file
  check(onDisk());
  await open();
});

it('rebuilds the same read model from the log, and needs the same key to open the secrets', async () => {
  const created = await subscriptions.create({
    ...shopA,
    body: body({ basic_auth: { username: 'u', password: 'p-123456' } }),
  });
  const secret = await subscriptions.createSecret({ ...shopA, subscription_id: created.id });
  storage.db.exec(
    "DROP TABLE webhook_subscriptions; DROP TABLE webhook_secrets; DELETE FROM checkpoints WHERE name LIKE 'projection:webhook-subscriptions'",
  );
  await close();

  await open({ key: loadWebhooksKey({ dataDir: dir }) });
  expect(subscriptions.get({ ...shopA, subscription_id: created.id })).toEqual(created);
  expect(subscriptions.activeSecrets(created.id)).toEqual([{ id: secret.id, secret: secret.secret }]);
  expect(subscriptions.find(created.id)?.basicAuth?.password).toBe('p-123456');
  await close();

  await open({ key: loadWebhooksKey({}) }); // another key
  let message = '';
  try {
    subscriptions.activeSecrets(created.id);
  } catch (error) {
    message = (error as Error).message;
  }
  expect(message).toMatch(
    /sealed under webhooks key [0-9a-f]{16}, which is neither WEBHOOK_SECRETS_KEY nor a retired key/,
  );
  expect(message).not.toContain(secret.secret!);
});

it('serves the RPC patterns, errors as values', async () => {
  const rpc = new InProcessRpc(() => undefined);
  rpc.register(subscriptions.rpcHandlers());
  const created = await rpc.call<{ id: string }>(webhookPatterns.create, { ...shopA, body: body() });
  const ref = { ...shopA, subscription_id: created.id };
  expect(await rpc.call(webhookPatterns.get, ref)).toMatchObject({ id: created.id });
  expect(await rpc.call(webhookPatterns.list, { ...shopA, limit: 10 })).toMatchObject({
    items: [{ id: created.id }],
    limit: 10,
    next_cursor: null,
  });
  expect(await rpc.call(webhookPatterns.update, { ...ref, body: { description: 'x' } })).toMatchObject({
    description: 'x',
  });
  const secret = await rpc.call<{ id: string; secret: string }>(webhookPatterns.secretCreate, ref);
  expect(secret.secret).toMatch(/^whsec_/);
  expect(await rpc.call(webhookPatterns.secretsList, ref)).toMatchObject({ items: [{ id: secret.id, secret: null }] });
  expect(await rpc.call(webhookPatterns.secretRevoke, { ...ref, secret_id: secret.id })).toMatchObject({
    active: false,
  });
  expect(await rpc.call(webhookPatterns.delete, ref)).toBeNull();
  const missing = await apiError(() => rpc.call(webhookPatterns.get, ref));
  expect(missing.toBody()).toMatchObject({ status: 404, code: 'not_found' });
  const invalid = await apiError(() => rpc.call(webhookPatterns.create, { ...shopA, body: { url: 'not a url' } }));
  expect(invalid.status).toBe(400);
});

it('rotates the webhooks key: the old key opens until everything is re-sealed, then the new one alone opens everything, also after a rebuild', async () => {
  const created = await subscriptions.create({
    ...shopA,
    body: body({ basic_auth: { username: 'u', password: 'p-rotate-1' } }),
  });
  const kept = await subscriptions.createSecret({ ...shopA, subscription_id: created.id });
  const revoked = await subscriptions.createSecret({ ...shopA, subscription_id: created.id });
  await subscriptions.revokeSecret({ ...shopA, subscription_id: created.id, secret_id: revoked.id });
  const gone = await subscriptions.create({ ...shopA, body: body() });
  await subscriptions.createSecret({ ...shopA, subscription_id: gone.id });
  await subscriptions.delete({ ...shopA, subscription_id: gone.id });
  const oldStatus = subscriptions.keyStatus();
  expect(Object.values(oldStatus.values_by_key_id)).toEqual([3]); // password, two secrets; the deleted one is skipped
  await close();

  const next = loadWebhooksKey({});
  await open({ key: webhooksKeyRing(next, [key]) });
  expect(subscriptions.activeSecrets(created.id)).toEqual([{ id: kept.id, secret: kept.secret }]);
  const outcome = await subscriptions.resealAll();
  expect(outcome).toMatchObject({
    resealed: 3,
    subscriptions: 1,
    values_by_key_id: { [outcome.active_key_id]: 3 },
    deleted_subscriptions_skipped: 1,
  });
  expect(await subscriptions.resealAll()).toMatchObject({ resealed: 0, subscriptions: 0 }); // safe to repeat
  // Nothing a client sees changed.
  expect(subscriptions.get({ ...shopA, subscription_id: created.id })).toEqual(
    await subscriptions.get({ ...shopA, subscription_id: created.id }),
  );
  expect(subscriptions.secrets({ ...shopA, subscription_id: created.id }).items.map((secret) => secret.active)).toEqual(
    [true, false],
  );
  await close();

  await open({ key: next }); // the old key dropped
  expect(subscriptions.activeSecrets(created.id)).toEqual([{ id: kept.id, secret: kept.secret }]);
  expect(subscriptions.find(created.id)?.basicAuth?.password).toBe('p-rotate-1');
  storage.db.exec(
    "DROP TABLE webhook_subscriptions; DROP TABLE webhook_secrets; DELETE FROM checkpoints WHERE name LIKE 'projection:webhook-subscriptions'",
  );
  await close();
  await open({ key: next }); // rebuilt from the log: the re-sealed values are the ones it ends with
  expect(subscriptions.activeSecrets(created.id)).toEqual([{ id: kept.id, secret: kept.secret }]);
  expect(subscriptions.find(created.id)?.basicAuth?.password).toBe('p-rotate-1');
  const events = await storage.store.readStream(`webhook-subscription-${created.id}`);
  expect(events.map((event) => event.type).slice(-1)).toEqual(['WebhookSecretsResealed']);
  expect(JSON.stringify(events)).not.toContain('p-rotate-1');
  expect(JSON.stringify(events)).not.toContain(kept.secret!);
});
