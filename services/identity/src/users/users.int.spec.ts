/** The users slice over the embedded store: what only shows with a real store (races, a create cut short). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiError } from '@switchyard/api';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { IdentityService } from '../identity-service';
import { userEmailStream } from './user-email';

let dir: string;
let storage: ServiceStorage;
let identity: IdentityService;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-users-slice-'));
  storage = openServiceStorage('identity', { dataDir: dir });
  identity = new IdentityService({ store: storage.store, db: storage.db });
  await identity.catchUp();
});
afterEach(async () => {
  await storage.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('lets exactly one of two racing creates with the same email through; the other is a 409', async () => {
  const results = await Promise.allSettled([
    identity.users.create({ email: 'ada@example.com', display_name: 'Ada', roles: ['analyst'] }),
    identity.users.create({ email: 'ADA@example.com', display_name: 'Ada too', roles: ['analyst'] }),
  ]);
  expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
  const refused = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  expect(refused?.reason).toBeInstanceOf(ApiError);
  expect((refused?.reason as ApiError).status).toBe(409);
  expect(identity.users.all()).toHaveLength(1);
});

it('does not take the email for a user refused by the role rules', async () => {
  await expect(identity.users.create({ email: 'ada@example.com', display_name: 'Ada', roles: ['integration'] })).rejects.toMatchObject({ status: 400 });
  expect(await storage.store.readStream(userEmailStream('ada@example.com'))).toEqual([]);
  await expect(identity.users.create({ email: 'ada@example.com', display_name: 'Ada', roles: ['analyst'] })).resolves.toMatchObject({ email: 'ada@example.com' });
});

it('finishes a create cut short after its email claim, under the claimed id', async () => {
  const orphan = '11111111-1111-4111-8111-111111111111';
  await storage.store.append(userEmailStream('kim@example.com'), [{ type: 'UserEmailClaimed', data: { email: 'kim@example.com', userId: orphan, at: '2026-01-01T00:00:00.000Z' } }], {
    expectedRevision: 'no_stream',
  });
  const signedIn = await identity.users.signInWithSingleSignOn({ email: 'Kim@example.com', claim: ['pii-viewer'] });
  expect(signedIn.user).toMatchObject({ id: orphan, email: 'Kim@example.com' });
  expect(signedIn.user.roles.map((role) => role.slug)).toEqual(['pii-viewer', 'analyst']);
  expect(signedIn.resolution.added).toHaveLength(1);
});
