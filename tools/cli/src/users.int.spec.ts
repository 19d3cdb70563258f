/** Dashboard users and single sign-on through the operator CLI, run as an operator runs it: a separate process. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli, runCliWithInput } from '@switchyard/testing';
import { findRoleBySlug, IdentityService } from '@switchyard/identity';
import { openServiceStorage } from '@switchyard/readmodel';

const cli = (dataDir: string, ...args: string[]) => runCli({ DATA_DIR: dataDir }, ...args);

/** Runs a command that must succeed and returns its JSON. */
async function ok<T = Record<string, unknown>>(dataDir: string, ...args: string[]): Promise<T> {
  const result = await cli(dataDir, ...args);
  expect(result.stderr.replace(/^note: .*\n/m, '')).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as T;
}

const dirs: string[] = [];
const freshDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-users-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

const id = (slug: string) => findRoleBySlug(slug)!.id;
const slugsOf = (printed: { roles: { slug: string }[] }) => printed.roles.map((role) => role.slug);

interface PrintedUser {
  type: string;
  id: string;
  email: string;
  display_name: string;
  role_ids: string[];
  roles: { slug: string }[];
  active: boolean;
  has_password: boolean;
  created_at: string;
  updated_at: string;
}

describe('users', () => {
  it('creates, edits and lists a user', async () => {
    const dataDir = freshDir();
    const created = await ok<PrintedUser>(
      dataDir,
      'users',
      'create',
      '--email',
      'ada@example.com',
      '--display-name',
      'Ada',
      '--role',
      'analyst',
      '--role',
      'pii-viewer',
    );
    expect(Object.keys(created).sort()).toEqual([
      'active',
      'created_at',
      'display_name',
      'email',
      'has_password',
      'id',
      'role_ids',
      'roles',
      'type',
      'updated_at',
    ]);
    expect(created).toMatchObject({
      type: 'user',
      email: 'ada@example.com',
      display_name: 'Ada',
      role_ids: [id('analyst'), id('pii-viewer')],
      active: true,
    });
    expect(slugsOf(created)).toEqual(['analyst', 'pii-viewer']);

    const renamed = await ok<PrintedUser>(
      dataDir,
      'users',
      'update',
      '--id',
      created.id,
      '--display-name',
      'Ada L',
      '--active',
      'false',
    );
    expect(renamed).toMatchObject({ display_name: 'Ada L', active: false, role_ids: created.role_ids });
    const reRoled = await ok<PrintedUser>(
      dataDir,
      'users',
      'update',
      '--id',
      created.id,
      '--role',
      'system-manager',
      '--role',
      'key-manager',
    );
    expect(slugsOf(reRoled)).toEqual(['system-manager', 'key-manager']);

    await ok(
      dataDir,
      'users',
      'create',
      '--email',
      'root@example.com',
      '--display-name',
      'Root',
      '--role',
      'administrator',
    );
    const listed = await ok<{ items: PrintedUser[] }>(dataDir, 'users', 'list');
    expect(listed.items.map((user) => [user.email, user.display_name, user.active, slugsOf(user)])).toEqual([
      ['ada@example.com', 'Ada L', false, ['system-manager', 'key-manager']],
      ['root@example.com', 'Root', true, ['administrator']],
    ]);
  });

  it.each([
    [['--role', 'integration'], /role integration cannot be assigned to a user/],
    [['--role', 'key-manager'], /needs at least one role that can stand alone/],
    [['--role', 'administrator', '--role', 'analyst'], /administrator must be the only role/],
    [
      ['--role', 'pii-viewer', '--role', 'system-manager'],
      /role pii-viewer needs one of these roles beside it: analyst/,
    ],
    [['--role', 'no-such-role'], /unknown role id no-such-role/],
  ])('refuses to create a user with %j, naming the rule, printing nothing on stdout', async (roles, rule) => {
    const result = await cli(
      freshDir(),
      'users',
      'create',
      '--email',
      'bad@example.com',
      '--display-name',
      'Bad',
      ...roles,
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(rule);
    expect(result.stdout).toBe('');
  });

  it('refuses a role edit that breaks a rule, and leaves the user as it was', async () => {
    const dataDir = freshDir();
    const created = await ok<PrintedUser>(
      dataDir,
      'users',
      'create',
      '--email',
      'sam@example.com',
      '--display-name',
      'Sam',
      '--role',
      'system-manager',
    );
    const result = await cli(dataDir, 'users', 'update', '--id', created.id, '--role', 'key-manager');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/needs at least one role that can stand alone/);
    expect(result.stdout).toBe('');
    expect((await ok<{ items: PrintedUser[] }>(dataDir, 'users', 'list')).items.map(slugsOf)).toEqual([
      ['system-manager'],
    ]);
  });

  it('refuses a second user with the same email in another case, and an unknown user', async () => {
    const dataDir = freshDir();
    await ok(dataDir, 'users', 'create', '--email', 'ada@example.com', '--display-name', 'Ada', '--role', 'analyst');
    const again = await cli(
      dataDir,
      'users',
      'create',
      '--email',
      'ADA@Example.com',
      '--display-name',
      'Other Ada',
      '--role',
      'analyst',
    );
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/already exists/);
    expect(again.stdout).toBe('');

    const unknown = await cli(
      dataDir,
      'users',
      'update',
      '--id',
      '00000000-0000-4000-8000-000000000000',
      '--active',
      'false',
    );
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/could not be found/);
  });
});

describe('dashboard passwords', () => {
  const password = 'correct horse battery staple';

  /** The events of a user's stream, as stored. */
  async function storedEvents(dataDir: string, userId: string) {
    const storage = openServiceStorage('identity', { dataDir });
    try {
      return await storage.store.readStream(`user-${userId}`);
    } finally {
      await storage.close();
    }
  }

  it('creates a user with a password read from standard input; only its argon2id hash is stored, and it signs in', async () => {
    const dataDir = freshDir();
    const result = await runCliWithInput(
      { DATA_DIR: dataDir },
      `${password}\n`,
      'users',
      'create',
      '--email',
      'ada@example.com',
      '--display-name',
      'Ada',
      '--role',
      'analyst',
      '--password-stdin',
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const created = JSON.parse(result.stdout) as PrintedUser;
    expect(created).toMatchObject({ email: 'ada@example.com', has_password: true });
    expect(result.stdout).not.toContain(password);
    expect(result.stdout).not.toContain('$argon2');

    const events = await storedEvents(dataDir, created.id);
    expect(events.map((event) => event.type)).toEqual(['UserCreated', 'UserPasswordSet']);
    const stored = JSON.stringify(events);
    expect(stored).not.toContain(password);
    expect((events[1]!.data as { passwordHash: string }).passwordHash).toMatch(
      /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/,
    );

    const storage = openServiceStorage('identity', { dataDir });
    try {
      const identity = new IdentityService({ store: storage.store, db: storage.db });
      await expect(identity.users.signIn({ email: 'ADA@example.com', password })).resolves.toMatchObject({
        id: created.id,
      });
      await expect(identity.users.signIn({ email: 'ada@example.com', password: `${password}!` })).rejects.toMatchObject(
        { status: 401 },
      );
    } finally {
      await storage.close();
    }
  });

  it('sets and replaces a password with set-password; the old one stops working', async () => {
    const dataDir = freshDir();
    const created = await ok<PrintedUser>(
      dataDir,
      'users',
      'create',
      '--email',
      'sam@example.com',
      '--display-name',
      'Sam',
      '--role',
      'system-manager',
    );
    expect(created.has_password).toBe(false);
    const first = await runCliWithInput(
      { DATA_DIR: dataDir },
      password,
      'users',
      'set-password',
      '--id',
      created.id,
      '--password-stdin',
    );
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ id: created.id, has_password: true });
    const second = await runCliWithInput(
      { DATA_DIR: dataDir },
      'a different passphrase\r\n',
      'users',
      'set-password',
      '--id',
      created.id,
      '--password-stdin',
    );
    expect(second.code).toBe(0);

    const storage = openServiceStorage('identity', { dataDir });
    try {
      const identity = new IdentityService({ store: storage.store, db: storage.db });
      await expect(identity.users.signIn({ email: 'sam@example.com', password })).rejects.toMatchObject({
        status: 401,
      });
      await expect(
        identity.users.signIn({ email: 'sam@example.com', password: 'a different passphrase' }),
      ).resolves.toMatchObject({ id: created.id });
    } finally {
      await storage.close();
    }
  });

  it.each([
    ['short', /at least 12 characters/],
    ['', /no password on standard input/],
    ['two\nlines are not one password', /must be one line/],
  ])('refuses the password %j, printing nothing on stdout', async (input, reason) => {
    const dataDir = freshDir();
    const created = await ok<PrintedUser>(
      dataDir,
      'users',
      'create',
      '--email',
      'lee@example.com',
      '--display-name',
      'Lee',
      '--role',
      'analyst',
    );
    const result = await runCliWithInput(
      { DATA_DIR: dataDir },
      input,
      'users',
      'set-password',
      '--id',
      created.id,
      '--password-stdin',
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(reason);
    expect(result.stdout).toBe('');
    expect((await storedEvents(dataDir, created.id)).map((event) => event.type)).toEqual(['UserCreated']);
  });

  it('refuses a password for an unknown user', async () => {
    const result = await runCliWithInput(
      { DATA_DIR: freshDir() },
      password,
      'users',
      'set-password',
      '--id',
      '00000000-0000-4000-8000-000000000000',
      '--password-stdin',
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/could not be found/);
  });
});

describe('sso', () => {
  it.each([
    [['system-manager'], ['system-manager'], [], []],
    [['pii-viewer', 'nope'], ['pii-viewer', 'analyst'], ['analyst'], ['nope']],
    [['administrator', 'pii-viewer'], ['analyst'], ['analyst'], ['administrator', 'pii-viewer']],
  ])('resolve %j gives %j', async (claim, roles, added, ignored) => {
    const printed = await ok<{ role_ids: string[]; roles: { slug: string }[]; added: string[]; ignored: string[] }>(
      freshDir(),
      'sso',
      'resolve',
      ...claim.flatMap((entry) => ['--claim', entry]),
    );
    expect(printed).toMatchObject({ role_ids: roles.map(id), added: added.map(id), ignored });
    expect(slugsOf(printed)).toEqual(roles);
  });

  it('signs a new user in with analyst added to an unusable claim, then replaces its roles on the next sign-in', async () => {
    const dataDir = freshDir();
    const first = await cli(dataDir, 'sso', 'sign-in', '--email', 'Kim@Example.com', '--claim', 'key-manager');
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(/\["analyst"\] added/);
    const created = JSON.parse(first.stdout) as PrintedUser;
    expect(created).toMatchObject({ type: 'user', email: 'Kim@Example.com', active: true });
    expect(slugsOf(created)).toEqual(['key-manager', 'analyst']);

    const again = await ok<PrintedUser>(
      dataDir,
      'sso',
      'sign-in',
      '--email',
      'kim@example.com',
      '--claim',
      'system-manager',
      '--claim',
      'key-manager',
    );
    expect(again.id).toBe(created.id);
    expect(slugsOf(again)).toEqual(['system-manager', 'key-manager']);
    expect((await ok<{ items: PrintedUser[] }>(dataDir, 'users', 'list')).items).toHaveLength(1);
  });

  it('gives analyst alone when even the claim plus analyst breaks a rule, and refuses a deactivated user', async () => {
    const dataDir = freshDir();
    const user = await ok<PrintedUser>(
      dataDir,
      'sso',
      'sign-in',
      '--email',
      'lee@example.com',
      '--claim',
      'administrator',
      '--claim',
      'pii-viewer',
    );
    expect(slugsOf(user)).toEqual(['analyst']);

    await ok(dataDir, 'users', 'update', '--id', user.id, '--active', 'false');
    const refused = await cli(dataDir, 'sso', 'sign-in', '--email', 'lee@example.com', '--claim', 'analyst');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/deactivated/);
    expect(refused.stdout).toBe('');
  });
});
