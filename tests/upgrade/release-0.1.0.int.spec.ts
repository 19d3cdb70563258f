/**
 * An existing data directory keeps working: this release starts on a copy of the data directory that release 0.1.0
 * wrote (`tests/fixtures/release-0.1.0/`: every kind of resource, made by its `make-fixture.ts`) and answers every
 * read exactly as release 0.1.0 did.
 */
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { loadSettings } from '@switchyard/config';
import { startEmbedded, type EmbeddedService } from '@switchyard/standalone/src/embedded';
import { createTestDataDir, removeTestDataDir, repoRoot, signToken } from '@switchyard/testing';
import pino from 'pino';

const fixture = path.join(repoRoot, 'tests/fixtures/release-0.1.0');

interface Answer {
  readonly account: string | null;
  readonly path: string;
  readonly status: number;
  readonly body: unknown;
}

const { answers, publicBaseUrl } = JSON.parse(fs.readFileSync(path.join(fixture, 'answers.json'), 'utf8')) as { answers: Answer[]; publicBaseUrl: string };
const credentials = JSON.parse(fs.readFileSync(path.join(fixture, 'credentials.json'), 'utf8')) as {
  administrator: { kid: string; private_key: string };
};

let service: EmbeddedService;
let dataDir: string;
let base: string;
let token: string;

beforeAll(async () => {
  dataDir = createTestDataDir('upgrade-0.1.0');
  fs.cpSync(path.join(fixture, 'data-dir'), dataDir, { recursive: true });
  const settings = loadSettings({ DATA_DIR: dataDir, PUBLIC_BASE_URL: publicBaseUrl, LOG_LEVEL: 'silent', DEMO_CHECKOUT: 'false', JWT_VERIFY_WORKERS: '0' });
  service = await startEmbedded(settings, pino({ level: 'silent' }));
  await service.gateway.app.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${(service.gateway.app.getHttpServer().address() as AddressInfo).port}`;
  token = await signToken({ kid: credentials.administrator.kid, privateKeyPem: credentials.administrator.private_key, expiresIn: 600 });
});

afterAll(async () => {
  await service?.stop();
  if (dataDir) removeTestDataDir(dataDir);
});

it('holds answers for every kind of resource', () => {
  const kinds = new Set(answers.map((answer) => answer.path.split(/[/?]/)[1]));
  for (const kind of ['merchant-accounts', 'api-key-pairs', 'payment-services', 'flows', 'buyers', 'payment-methods', 'gift-cards', 'checkout', 'digital-wallets', 'transactions', 'refunds', 'webhook-subscriptions']) {
    expect(kinds).toContain(kind);
  }
});

it.each(answers.map((answer) => [`${answer.account ?? '-'} ${answer.path}`, answer] as const))('answers %s as release 0.1.0 did', async (_, answer) => {
  const response = await fetch(`${base}${answer.path}`, {
    headers: { authorization: `Bearer ${token}`, ...(answer.account ? { 'x-service-merchant-account-id': answer.account } : {}) },
  });
  expect(response.status).toBe(answer.status);
  const body = (await response.json()) as unknown;
  if (!answer.path.startsWith('/api-key-pairs')) return expect(body).toEqual(answer.body);
  expectLaterUse(body, answer.body);
  expect(withoutLastUse(body)).toEqual(withoutLastUse(answer.body));
});

/** A key's `last_used_at` moves with every use (the fixture's own reads included): only never earlier. */
const keysOf = (body: unknown): { id: string; last_used_at: string | null }[] => {
  const value = body as { items?: { id: string; last_used_at: string | null }[]; id?: string; last_used_at?: string | null };
  return value.items ?? (value.id ? [{ id: value.id, last_used_at: value.last_used_at ?? null }] : []);
};
function expectLaterUse(now: unknown, then: unknown): void {
  const before = new Map(keysOf(then).map((key) => [key.id, key.last_used_at]));
  for (const key of keysOf(now)) {
    const was = before.get(key.id);
    if (was) expect(key.last_used_at! >= was).toBe(true);
  }
}
const withoutLastUse = (body: unknown): unknown =>
  JSON.parse(JSON.stringify(body), (name, value: unknown) => (name === 'last_used_at' ? undefined : value));
