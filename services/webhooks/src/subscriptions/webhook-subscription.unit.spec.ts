import { DomainError } from '@switchyard/decider';
import {
  webhookSubscriptionDecider,
  type SubscriptionCaller,
  type WebhookSubscriptionCommand,
  type WebhookSubscriptionEvent,
  type WebhookSubscriptionSettings,
} from './webhook-subscription';
import { isPrivateAddress, webhookUrlProblem } from './webhook-url';

const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';
const id = '6f1c1b9e-2f0c-4c55-9a43-6f3a0c7d1e01';
const decider = webhookSubscriptionDecider({ allowPrivateUrls: false });
const permissive = webhookSubscriptionDecider({ allowPrivateUrls: true });

const shopA: SubscriptionCaller = { merchantAccountId: 'shop-a', instanceLevel: true };
const shopB: SubscriptionCaller = { merchantAccountId: 'shop-b', instanceLevel: true };
const limitedA: SubscriptionCaller = { merchantAccountId: 'shop-a', instanceLevel: false };

const settings: WebhookSubscriptionSettings = {
  url: 'https://hooks.example.com/switchyard',
  eventNames: null,
  active: true,
  basicAuth: null,
  description: null,
};

const create = (
  overrides: Partial<WebhookSubscriptionSettings> & { merchantAccountId?: string | null } = {},
  caller = shopA,
): WebhookSubscriptionCommand => ({
  type: 'CreateWebhookSubscription',
  data: { id, merchantAccountId: undefined, ...settings, ...overrides },
  caller,
  metadata: { now },
});
const update = (
  changes: Partial<WebhookSubscriptionSettings>,
  caller = shopA,
  merchantAccountId?: string | null,
): WebhookSubscriptionCommand => ({
  type: 'UpdateWebhookSubscription',
  data: { changes, ...(merchantAccountId !== undefined ? { merchantAccountId } : {}) },
  caller,
  metadata: { now: later },
});
const remove = (caller = shopA): WebhookSubscriptionCommand => ({
  type: 'DeleteWebhookSubscription',
  caller,
  metadata: { now: later },
});
const addSecret = (secretId: string, caller = shopA): WebhookSubscriptionCommand => ({
  type: 'CreateWebhookSecret',
  data: { secretId, secret: `v1.sealed-${secretId}`, last4: 'Ab3x' },
  caller,
  metadata: { now: later },
});
const revoke = (secretId: string, caller = shopA): WebhookSubscriptionCommand => ({
  type: 'RevokeWebhookSecret',
  data: { secretId },
  caller,
  metadata: { now: later },
});

const given = (events: readonly WebhookSubscriptionEvent[], rules = decider) => ({
  when: (command: WebhookSubscriptionCommand) =>
    rules.decide(command, events.reduce(rules.evolve, rules.initialState())),
});
const created = (merchantAccountId: string | null = 'shop-a'): WebhookSubscriptionEvent => ({
  type: 'WebhookSubscriptionCreated',
  data: { ...settings, id, merchantAccountId, at: now },
});
const secretCreated = (secretId: string): WebhookSubscriptionEvent => ({
  type: 'WebhookSecretCreated',
  data: { subscriptionId: id, secretId, secret: `v1.sealed-${secretId}`, last4: 'Ab3x', at: later },
});

function refusal(action: () => unknown): DomainError {
  try {
    action();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

describe('creating', () => {
  it("belongs to the request's merchant account unless the body says null (instance level)", () => {
    expect(given([]).when(create())).toEqual([
      { type: 'WebhookSubscriptionCreated', data: { ...settings, id, merchantAccountId: 'shop-a', at: now } },
    ]);
    expect(given([]).when(create({ merchantAccountId: 'shop-a' }))[0]!.data).toMatchObject({
      merchantAccountId: 'shop-a',
    });
    expect(given([]).when(create({ merchantAccountId: null }))[0]!.data).toMatchObject({ merchantAccountId: null });
  });

  it('refuses another merchant account in the body, and instance level for a key limited to some accounts', () => {
    const other = refusal(() => given([]).when(create({ merchantAccountId: 'shop-b' })));
    expect(other.code).toBe('invalid_webhook_subscription');
    expect(other.details).toEqual([
      { field: 'merchant_account_id', message: expect.stringContaining("request's merchant account") },
    ]);
    expect(refusal(() => given([]).when(create({ merchantAccountId: null }, limitedA))).code).toBe(
      'instance_level_forbidden',
    );
    expect(given([]).when(create({}, limitedA))[0]!.data).toMatchObject({ merchantAccountId: 'shop-a' });
  });

  it('refuses private, loopback and localhost URLs unless allowed, with the detail on url', () => {
    for (const url of [
      'http://localhost:8080/hook',
      'http://127.0.0.1/hook',
      'http://10.1.2.3/',
      'http://[::1]:9000/',
      'https://192.168.0.10/x',
      'http://api.localhost/',
    ]) {
      const error = refusal(() => given([]).when(create({ url })));
      expect(error.code).toBe('invalid_webhook_subscription');
      expect(error.details).toEqual([{ field: 'url', message: expect.stringMatching(/WEBHOOK_ALLOW_PRIVATE_URLS/) }]);
      expect(given([], permissive).when(create({ url }))[0]!.data).toMatchObject({ url });
    }
    const scheme = refusal(() => given([], permissive).when(create({ url: 'ftp://hooks.example.com/' })));
    expect(scheme.details).toEqual([{ field: 'url', message: 'must be an http or https URL' }]);
    const credentials = refusal(() =>
      given([], permissive).when(create({ url: 'https://user:pw@hooks.example.com/' })),
    );
    expect(credentials.details).toEqual([{ field: 'url', message: 'must not carry credentials; use basic_auth' }]);
  });

  it('takes known event names only, once each, and refuses an empty list', () => {
    expect(
      given([]).when(create({ eventNames: ['transaction.captured', 'refund.succeeded', 'transaction.captured'] }))[0]!
        .data,
    ).toMatchObject({
      eventNames: ['transaction.captured', 'refund.succeeded'],
    });
    expect(refusal(() => given([]).when(create({ eventNames: ['transaction.captured', 'nope'] }))).details).toEqual([
      { field: 'event_names/1', message: 'nope is not an event name' },
    ]);
    expect(refusal(() => given([]).when(create({ eventNames: [] }))).details).toEqual([
      { field: 'event_names', message: expect.stringContaining('must not be empty') },
    ]);
  });

  it('refuses a second creation of the same stream', () => {
    expect(refusal(() => given([created()]).when(create())).code).toBe('webhook_subscription_exists');
  });
});

describe('updating and deleting', () => {
  it('records only the fields given; null clears', () => {
    expect(
      given([created()]).when(update({ url: 'https://other.example.com/', eventNames: null, description: undefined })),
    ).toEqual([
      {
        type: 'WebhookSubscriptionUpdated',
        data: { id, merchantAccountId: 'shop-a', url: 'https://other.example.com/', eventNames: null, at: later },
      },
    ]);
    expect(
      given([created()]).when(update({ basicAuth: { username: 'u', password: 'v1.sealed' }, active: false }))[0]!.data,
    ).toEqual({
      id,
      merchantAccountId: 'shop-a',
      basicAuth: { username: 'u', password: 'v1.sealed' },
      active: false,
      at: later,
    });
  });

  it('checks the new URL and keeps the owner fixed', () => {
    expect(refusal(() => given([created()]).when(update({ url: 'http://169.254.169.254/latest' }))).details).toEqual([
      { field: 'url', message: expect.any(String) },
    ]);
    expect(refusal(() => given([created()]).when(update({}, shopA, null))).details).toEqual([
      { field: 'merchant_account_id', message: expect.stringContaining('cannot be changed') },
    ]);
    expect(given([created()]).when(update({ active: false }, shopA, 'shop-a'))).toHaveLength(1);
  });

  it('is not found for another merchant account, and an instance-level one for a key limited to some accounts', () => {
    for (const command of [
      update({ active: false }, shopB),
      remove(shopB),
      addSecret('s1', shopB),
      revoke('s1', shopB),
    ]) {
      expect(refusal(() => given([created(), secretCreated('s1')]).when(command)).code).toBe(
        'webhook_subscription_not_found',
      );
    }
    expect(given([created(null)]).when(update({ active: false }, shopB))).toHaveLength(1);
    expect(refusal(() => given([created(null)]).when(remove(limitedA))).code).toBe('webhook_subscription_not_found');
  });

  it('deletes once; afterwards nothing is found', () => {
    const deleted = given([created()]).when(remove());
    expect(deleted).toEqual([
      { type: 'WebhookSubscriptionDeleted', data: { id, merchantAccountId: 'shop-a', at: later } },
    ]);
    for (const command of [remove(), update({ active: true }), addSecret('s2'), create()]) {
      const error = refusal(() => given([created(), ...deleted]).when(command));
      expect(['webhook_subscription_not_found', 'webhook_subscription_exists']).toContain(error.code);
    }
    expect(refusal(() => given([]).when(remove())).code).toBe('webhook_subscription_not_found');
  });
});

describe('secrets', () => {
  it('adds several active secrets, sealed, up to the limit', () => {
    expect(given([created(), secretCreated('s1')]).when(addSecret('s2'))).toEqual([
      {
        type: 'WebhookSecretCreated',
        data: { subscriptionId: id, secretId: 's2', secret: 'v1.sealed-s2', last4: 'Ab3x', at: later },
      },
    ]);
    const five = ['s1', 's2', 's3', 's4', 's5'].map(secretCreated);
    expect(refusal(() => given([created(), ...five]).when(addSecret('s6'))).code).toBe('too_many_webhook_secrets');
    const oneRevoked: WebhookSubscriptionEvent = {
      type: 'WebhookSecretRevoked',
      data: { subscriptionId: id, secretId: 's3', at: later },
    };
    expect(given([created(), ...five, oneRevoked]).when(addSecret('s6'))).toHaveLength(1);
    expect(refusal(() => given([created(), secretCreated('s1')]).when(addSecret('s1'))).code).toBe(
      'webhook_secret_exists',
    );
  });

  it('revokes an active secret once; an unknown secret is not found', () => {
    const revoked = given([created(), secretCreated('s1')]).when(revoke('s1'));
    expect(revoked).toEqual([
      { type: 'WebhookSecretRevoked', data: { subscriptionId: id, secretId: 's1', at: later } },
    ]);
    expect(given([created(), secretCreated('s1'), ...revoked]).when(revoke('s1'))).toEqual([]);
    expect(refusal(() => given([created()]).when(revoke('unknown'))).code).toBe('webhook_secret_not_found');
  });
});

describe('the URL rule', () => {
  it.each([
    'http://localhost/',
    'http://LOCALHOST./',
    'http://127.0.0.1/',
    'http://127.255.0.9:8080/',
    'http://2130706433/', // 127.0.0.1 in decimal
    'http://0x7f.1/',
    'http://0.0.0.0/',
    'http://10.0.0.1/',
    'http://172.16.0.1/',
    'http://172.31.255.255/',
    'http://192.168.1.1/',
    'http://169.254.169.254/',
    'http://100.64.0.1/',
    'http://[::1]/',
    'http://[::]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:10.0.0.1]/',
    'http://[fc00::1]/',
    'http://[fd12:3456:789a::1]/',
    'http://[fe80::1]/',
    // Issue 22, item 3: NAT64 reaches any IPv4 host through a translator; 198.18/15 is often routed inside.
    'http://[64:ff9b::7f00:1]/',
    'http://[64:ff9b::a00:1]/',
    'http://[64:ff9b::808:808]/',
    'http://[64:ff9b:1::1]/',
    'http://198.18.0.1/',
    'http://198.19.255.254/',
    'http://192.0.0.8/',
    'http://224.0.0.1/',
    'http://[ff02::1]/',
  ])('refuses %s', (url) => {
    expect(webhookUrlProblem(url, { allowPrivate: false })).not.toBeNull();
    expect(webhookUrlProblem(url, { allowPrivate: true })).toBeNull();
  });

  it.each([
    'https://hooks.example.com/a?b=c',
    'http://8.8.8.8/',
    'http://172.32.0.1/',
    'http://192.169.0.1/',
    'http://198.20.0.1/',
    'http://[64:ff9c::1]/',
    'http://[2001:db8::1]/',
    'http://[::ffff:8.8.8.8]/',
    'http://localhost.example.com/',
  ])('takes %s', (url) => {
    expect(webhookUrlProblem(url, { allowPrivate: false })).toBeNull();
  });

  it('refuses what is not an absolute http(s) URL whatever the setting', () => {
    for (const url of ['hooks.example.com', 'ftp://example.com/', 'javascript:alert(1)', 'https://u:p@example.com/']) {
      expect(webhookUrlProblem(url, { allowPrivate: true })).not.toBeNull();
    }
    expect(isPrivateAddress('hooks.example.com')).toBe(false);
  });
});

describe('re-sealing under a new webhooks key', () => {
  const reseal = (
    data: Extract<WebhookSubscriptionCommand, { type: 'ResealWebhookSecrets' }>['data'],
  ): WebhookSubscriptionCommand => ({
    type: 'ResealWebhookSecrets',
    data,
    caller: shopA,
    metadata: { now: later },
  });
  const withPassword: WebhookSubscriptionEvent = {
    type: 'WebhookSubscriptionCreated',
    data: {
      ...settings,
      basicAuth: { username: 'u', password: 'v1.old-password' },
      id,
      merchantAccountId: 'shop-a',
      at: now,
    },
  };

  it('replaces the values still as the command read them, in one event', () => {
    expect(
      given([withPassword, secretCreated('s1'), secretCreated('s2')]).when(
        reseal({
          secrets: [{ secretId: 's1', from: 'v1.sealed-s1', to: 'v2.k2.s1' }],
          basicAuthPassword: { from: 'v1.old-password', to: 'v2.k2.password' },
          keyId: 'k2',
        }),
      ),
    ).toEqual([
      {
        type: 'WebhookSecretsResealed',
        data: {
          id,
          merchantAccountId: 'shop-a',
          secrets: [{ secretId: 's1', secret: 'v2.k2.s1' }],
          basicAuthPassword: 'v2.k2.password',
          keyId: 'k2',
          at: later,
        },
      },
    ]);
  });

  it('leaves alone a password replaced meanwhile, a secret it does not have, and re-sealed values (nothing: no event)', () => {
    const replaced: WebhookSubscriptionEvent = {
      type: 'WebhookSubscriptionUpdated',
      data: { basicAuth: { username: 'u', password: 'v2.k2.newer' }, id, merchantAccountId: 'shop-a', at: later },
    };
    expect(
      given([withPassword, replaced]).when(
        reseal({
          secrets: [{ secretId: 'nope', from: 'x', to: 'y' }],
          basicAuthPassword: { from: 'v1.old-password', to: 'v2.k2.p' },
          keyId: 'k2',
        }),
      ),
    ).toEqual([]);
    const resealed: WebhookSubscriptionEvent = {
      type: 'WebhookSecretsResealed',
      data: {
        id,
        merchantAccountId: 'shop-a',
        secrets: [{ secretId: 's1', secret: 'v2.k2.s1' }],
        keyId: 'k2',
        at: later,
      },
    };
    expect(
      given([created(), secretCreated('s1'), resealed]).when(
        reseal({ secrets: [{ secretId: 's1', from: 'v1.sealed-s1', to: 'v2.k2.again' }], keyId: 'k2' }),
      ),
    ).toEqual([]);
  });

  it('finds no deleted subscription', () => {
    expect(
      refusal(() =>
        given([
          created(),
          { type: 'WebhookSubscriptionDeleted', data: { id, merchantAccountId: 'shop-a', at: later } },
        ]).when(reseal({ secrets: [], keyId: 'k2' })),
      ).code,
    ).toBe('webhook_subscription_not_found');
  });
});
