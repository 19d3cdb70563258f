import { signatureHeaders, signPayload, verifyWebhook } from './index';

const now = () => new Date('2026-11-22T12:00:00Z');
const timestamp = Math.floor(now().getTime() / 1000);
const rawBody = '{"type":"event","id":"e-1"}';

it('signs "{timestamp}.{raw body}" with HMAC-SHA256 as lower-case hex (a known vector)', () => {
  // printf '1795348800.{"type":"event","id":"e-1"}' | openssl dgst -sha256 -hmac whsec_one
  expect(signPayload('whsec_one', timestamp, rawBody)).toBe(
    'c672dab105a32bc92057efebe1387feec60da606c2455f131d78dd1e6000dbd0',
  );
  expect(signPayload('whsec_one', timestamp, rawBody)).toBe(signPayload('whsec_one', timestamp, Buffer.from(rawBody)));
});

it('verifies with any one of the active secrets, and refuses a revoked one', () => {
  const headers = signatureHeaders({ webhookId: 'w-1', secrets: ['old-secret', 'new-secret'], rawBody, timestamp });
  expect(headers['x-service-webhook-signatures']?.split(',')).toHaveLength(2);
  expect(verifyWebhook({ rawBody, headers, secrets: ['new-secret'], now })).toEqual({
    ok: true,
    webhookId: 'w-1',
    timestamp,
  });
  expect(verifyWebhook({ rawBody, headers, secrets: ['old-secret'], now }).ok).toBe(true);
  const afterRevoke = signatureHeaders({ webhookId: 'w-1', secrets: ['new-secret'], rawBody, timestamp });
  expect(verifyWebhook({ rawBody, headers: afterRevoke, secrets: ['old-secret'], now })).toEqual({
    ok: false,
    reason: 'no_matching_signature',
  });
});

it('refuses a changed body, a replay outside the tolerance, and missing headers', () => {
  const headers = signatureHeaders({ webhookId: 'w-1', secrets: ['s'], rawBody, timestamp });
  expect(verifyWebhook({ rawBody: `${rawBody} `, headers, secrets: ['s'], now }).ok).toBe(false);
  const later = () => new Date(now().getTime() + 301_000);
  expect(verifyWebhook({ rawBody, headers, secrets: ['s'], now: later })).toEqual({
    ok: false,
    reason: 'stale_timestamp',
  });
  expect(verifyWebhook({ rawBody, headers, secrets: ['s'], now: later, toleranceSeconds: 600 }).ok).toBe(true);
  expect(verifyWebhook({ rawBody, headers: {}, secrets: ['s'], now })).toEqual({
    ok: false,
    reason: 'missing_headers',
  });
  expect(
    verifyWebhook({ rawBody, headers: { ...headers, 'x-service-webhook-timestamp': 'soon' }, secrets: ['s'], now }),
  ).toEqual({ ok: false, reason: 'bad_timestamp' });
});

it('reads headers case-insensitively', () => {
  const headers = Object.fromEntries(
    Object.entries(signatureHeaders({ webhookId: 'w-1', secrets: ['s'], rawBody, timestamp })).map(([k, v]) => [
      k.toUpperCase(),
      v,
    ]),
  );
  expect(verifyWebhook({ rawBody, headers, secrets: ['s'], now }).ok).toBe(true);
});
