/** The users slice over the embedded store: what only shows with a real store (races, a create cut short). */
import { ApiError } from '@switchyard/api';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { IdentityService } from '../identity-service';
import { withoutSecrets } from '../identity-relay';
import { userEmailStream } from './user-email';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';

let dir: string;
let storage: ServiceStorage;
let identity: IdentityService;

beforeEach(async () => {
  dir = createTestDataDir('users-slice');
  storage = openServiceStorage('identity', { dataDir: dir });
  identity = new IdentityService({ store: storage.store, db: storage.db });
  await identity.catchUp();
});
afterEach(async () => {
  await storage.close();
  removeTestDataDir(dir);
});

it('lets exactly one of two racing creates with the same email through; the other is a 409', async () => {
  const results = await Promise.allSettled([
    identity.users.create({ email: 'ada@example.com', display_name: 'Ada', roles: ['analyst'] }),
    identity.users.create({ email: 'ADA@example.com', display_name: 'Ada too', roles: ['analyst'] }),
  ]);
  expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
  const refused = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  expect(refused?.reason).toBeInstanceOf(ApiError);
  expect((refused!.reason as ApiError).status).toBe(409);
  expect(identity.users.all()).toHaveLength(1);
});

it('does not take the email for a user refused by the role rules', async () => {
  await expect(
    identity.users.create({ email: 'ada@example.com', display_name: 'Ada', roles: ['integration'] }),
  ).rejects.toMatchObject({ status: 400 });
  expect(await storage.store.readStream(userEmailStream('ada@example.com'))).toEqual([]);
  await expect(
    identity.users.create({ email: 'ada@example.com', display_name: 'Ada', roles: ['analyst'] }),
  ).resolves.toMatchObject({ email: 'ada@example.com' });
});

it('finishes a create cut short after its email claim, under the claimed id', async () => {
  const orphan = '11111111-1111-4111-8111-111111111111';
  await storage.store.append(
    userEmailStream('kim@example.com'),
    [{ type: 'UserEmailClaimed', data: { email: 'kim@example.com', userId: orphan, at: '2026-01-01T00:00:00.000Z' } }],
    {
      expectedRevision: 'no_stream',
    },
  );
  const signedIn = await identity.users.signInWithSingleSignOn({ email: 'Kim@example.com', claim: ['pii-viewer'] });
  expect(signedIn.user).toMatchObject({ id: orphan, email: 'Kim@example.com' });
  expect(signedIn.user.roles.map((role) => role.slug)).toEqual(['pii-viewer', 'analyst']);
  expect(signedIn.resolution.added).toHaveLength(1);
});

describe('dashboard sign-in', () => {
  const password = 'correct horse battery staple';

  it('signs in with the right password, whatever the case of the email, and refuses a wrong one with the same 401 as an unknown email', async () => {
    const ada = await identity.users.create({
      email: 'ada@example.com',
      display_name: 'Ada',
      roles: ['analyst'],
      password,
    });
    expect(ada.has_password).toBe(true);
    await expect(identity.users.signIn({ email: 'Ada@Example.com', password })).resolves.toMatchObject({
      id: ada.id,
      has_password: true,
    });
    const wrong = await identity.users
      .signIn({ email: 'ada@example.com', password: 'correct horse battery stapler' })
      .catch((error: unknown) => error);
    const unknown = await identity.users
      .signIn({ email: 'nobody@example.com', password })
      .catch((error: unknown) => error);
    for (const refused of [wrong, unknown]) {
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).toBody()).toEqual({
        type: 'error',
        code: 'unauthorized',
        status: 401,
        message: 'The email or password is wrong',
        details: [],
      });
    }
  });

  it('refuses a user without a password, and a deactivated user (403, only once the password is right)', async () => {
    await identity.users.create({ email: 'sso@example.com', display_name: 'SSO only', roles: ['analyst'] });
    await expect(identity.users.signIn({ email: 'sso@example.com', password })).rejects.toMatchObject({ status: 401 });

    const kim = await identity.users.create({
      email: 'kim@example.com',
      display_name: 'Kim',
      roles: ['analyst'],
      password,
    });
    await identity.users.update(kim.id, { active: false });
    await expect(identity.users.signIn({ email: 'kim@example.com', password })).rejects.toMatchObject({
      status: 403,
      message: expect.stringMatching(/deactivated/),
      details: [expect.objectContaining({ type: 'user_inactive' })],
    });
    await expect(
      identity.users.signIn({ email: 'kim@example.com', password: 'not the password at all' }),
    ).rejects.toMatchObject({ status: 401 });
  });

  it('refuses an unacceptable password before anything is stored', async () => {
    await expect(
      identity.users.create({ email: 'bo@example.com', display_name: 'Bo', roles: ['analyst'], password: 'too short' }),
    ).rejects.toMatchObject({
      status: 400,
      details: [expect.objectContaining({ pointer: '/password', message: 'must be at least 12 characters' })],
    });
    expect(identity.users.findByEmail('bo@example.com')).toBeNull();
    expect(await storage.store.readStream(userEmailStream('bo@example.com'))).toEqual([]);
  });

  it('never lets the hash out: not in a user, and not on the bus', async () => {
    const ada = await identity.users.create({
      email: 'ada@example.com',
      display_name: 'Ada',
      roles: ['analyst'],
      password,
    });
    expect(JSON.stringify(identity.users.get(ada.id))).not.toMatch(/argon2/);
    const [, passwordSet] = await storage.store.readStream(`user-${ada.id}`);
    expect(passwordSet?.type).toBe('UserPasswordSet');
    expect(JSON.stringify(passwordSet?.data)).toMatch(/argon2id/);
    expect(withoutSecrets(passwordSet!).data).toEqual({ id: ada.id, at: expect.any(String) });
  });
});
