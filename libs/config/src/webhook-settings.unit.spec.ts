/**
 * The webhooks settings: defaults, the boolean switch, and the secret key kept out of anything that prints settings.
 */
import { inspect } from 'node:util';
import { loadSettings } from './index';

it('has the documented defaults', () => {
  expect(loadSettings({})).toMatchObject({
    WEBHOOKS_RPC_URL: 'tcp://127.0.0.1:4003',
    WEBHOOK_ALLOW_PRIVATE_URLS: false,
    WEBHOOK_RETRY_BASE_MS: 30_000,
    WEBHOOK_RETRY_MAX_MS: 6 * 60 * 60 * 1000,
    WEBHOOK_MAX_AGE_MS: 7 * 24 * 60 * 60 * 1000,
    WEBHOOK_TIMEOUT_MS: 5_000,
    WEBHOOK_WORKER_INTERVAL_MS: 250,
  });
  expect(loadSettings({}).WEBHOOK_SECRETS_KEY).toBeUndefined();
});

it('reads WEBHOOK_ALLOW_PRIVATE_URLS as a boolean: "false" is false, anything unclear stops start-up', () => {
  expect(loadSettings({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }).WEBHOOK_ALLOW_PRIVATE_URLS).toBe(true);
  expect(loadSettings({ WEBHOOK_ALLOW_PRIVATE_URLS: 'false' }).WEBHOOK_ALLOW_PRIVATE_URLS).toBe(false);
  expect(() => loadSettings({ WEBHOOK_ALLOW_PRIVATE_URLS: 'sometimes' })).toThrow(/WEBHOOK_ALLOW_PRIVATE_URLS/);
  expect(() => loadSettings({ WEBHOOK_RETRY_BASE_MS: '0' })).toThrow(/WEBHOOK_RETRY_BASE_MS/);
});

it('keeps WEBHOOK_SECRETS_KEY readable but out of anything that prints the settings, and never echoes a bad one', () => {
  const configured = Buffer.alloc(32, 42).toString('base64url');
  const settings = loadSettings({ WEBHOOK_SECRETS_KEY: configured });
  expect(settings.WEBHOOK_SECRETS_KEY).toBe(configured);
  expect(JSON.stringify(settings)).not.toContain(configured);
  expect(inspect(settings)).not.toContain(configured);
  expect(Object.keys(settings)).not.toContain('WEBHOOK_SECRETS_KEY');

  const bad = 'my-very-secret-webhooks-passphrase';
  let message = '';
  try {
    loadSettings({ WEBHOOK_SECRETS_KEY: bad });
  } catch (error) {
    message = (error as Error).message;
  }
  expect(message).toMatch(/^invalid configuration: WEBHOOK_SECRETS_KEY: must be base64/);
  expect(message).not.toContain(bad);
});
