import { findRoleBySlug } from '../roles/role-catalog';
import { user, type UserCommand, type UserEvent } from './user';

const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';
const id = (slug: string) => findRoleBySlug(slug)!.id;

type CreateCommand = Extract<UserCommand, { type: 'CreateUser' }>;
const create = (overrides: Partial<CreateCommand['data']> = {}): CreateCommand => ({
  type: 'CreateUser',
  data: { id: 'u1', email: 'Ada@Example.com', displayName: 'Ada', roleIds: [id('analyst')], ...overrides },
  metadata: { now },
});
const update = (data: Extract<UserCommand, { type: 'UpdateUser' }>['data']): UserCommand => ({
  type: 'UpdateUser',
  data,
  metadata: { now: later },
});

const given = (events: UserEvent[]) => ({
  when: (command: UserCommand) => user.decide(command, events.reduce(user.evolve, user.initialState())),
});

describe('when no user exists', () => {
  it('creates it with its roles, deduplicated', () =>
    expect(given([]).when(create({ roleIds: [id('analyst'), id('pii-viewer'), id('analyst')] }))).toEqual([
      {
        type: 'UserCreated',
        data: {
          id: 'u1',
          email: 'Ada@Example.com',
          displayName: 'Ada',
          roleIds: [id('analyst'), id('pii-viewer')],
          at: now,
        },
      },
    ]));

  it.each([
    [['integration'], /role integration cannot be assigned to a user/],
    [['key-manager'], /the set needs at least one role that can stand alone/],
    [['administrator', 'analyst'], /administrator must be the only role of its set/],
    [['pii-viewer', 'system-manager'], /role pii-viewer needs one of these roles beside it: analyst/],
    [[], /at least one role is required/],
  ])('refuses the role set %j naming the rule', (slugs, rule) =>
    expect(() => given([]).when(create({ roleIds: slugs.map(id) }))).toThrow(
      expect.objectContaining({ code: 'invalid_role_set', message: expect.stringMatching(rule) }),
    ),
  );

  it('takes administrator and key-manager: users are assigned roles as a dashboard user would', () => {
    expect(given([]).when(create({ roleIds: [id('administrator')] }))).toHaveLength(1);
    expect(given([]).when(create({ roleIds: [id('key-manager'), id('system-manager')] }))).toHaveLength(1);
  });

  it('refuses a malformed email and an empty display name', () => {
    expect(() => given([]).when(create({ email: 'not-an-email' }))).toThrow(
      expect.objectContaining({ code: 'invalid_user' }),
    );
    expect(() => given([]).when(create({ displayName: '  ' }))).toThrow(
      expect.objectContaining({ code: 'invalid_user' }),
    );
  });

  it('refuses an update', () =>
    expect(() => given([]).when(update({ active: false }))).toThrow(
      expect.objectContaining({ code: 'user_not_found' }),
    ));
});

describe('when the user exists', () => {
  const created = given([]).when(create()) as UserEvent[];

  it('refuses to create it again', () =>
    expect(() => given(created).when(create())).toThrow(expect.objectContaining({ code: 'user_exists' })));

  it('replaces its roles, checking the new set', () => {
    expect(given(created).when(update({ roleIds: [id('system-manager'), id('key-manager')] }))).toEqual([
      { type: 'UserUpdated', data: { id: 'u1', roleIds: [id('system-manager'), id('key-manager')], at: later } },
    ]);
    expect(() => given(created).when(update({ roleIds: [id('integration')] }))).toThrow(
      expect.objectContaining({ code: 'invalid_role_set' }),
    );
  });

  it('deactivates it and renames it, recording only what changes', () =>
    expect(given(created).when(update({ active: false, displayName: 'Ada L', roleIds: [id('analyst')] }))).toEqual([
      { type: 'UserUpdated', data: { id: 'u1', active: false, displayName: 'Ada L', at: later } },
    ]));

  it('records nothing when nothing changes (a sign-in with the same roles)', () =>
    expect(given(created).when(update({ roleIds: [id('analyst')], active: true, displayName: 'Ada' }))).toEqual([]));

  it('folds updates into its state', () => {
    const updated = [...created, { type: 'UserUpdated', data: { id: 'u1', active: false, at: later } } as UserEvent];
    expect(given(updated).when(update({ active: false }))).toEqual([]);
    expect(given(updated).when(update({ active: true }))).toHaveLength(1);
  });
});

describe('setting a password', () => {
  const created = given([]).when(create()) as UserEvent[];
  const setPassword = (passwordHash: string): UserCommand => ({
    type: 'SetUserPassword',
    data: { passwordHash },
    metadata: { now: later },
  });

  it('records the hash it is given, for a user that exists, deactivated or not', () => {
    expect(given(created).when(setPassword('$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA'))).toEqual([
      {
        type: 'UserPasswordSet',
        data: { id: 'u1', passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA', at: later },
      },
    ]);
    const deactivated = [
      ...created,
      { type: 'UserUpdated', data: { id: 'u1', active: false, at: later } } as UserEvent,
    ];
    expect(given(deactivated).when(setPassword('$argon2id$x'))).toHaveLength(1);
  });

  it('refuses it for a user that does not exist', () =>
    expect(() => given([]).when(setPassword('$argon2id$x'))).toThrow(
      expect.objectContaining({ code: 'user_not_found' }),
    ));

  it('changes nothing else of the user', () => {
    const withPassword = [...created, ...(given(created).when(setPassword('$argon2id$x')) as UserEvent[])];
    expect(given(withPassword).when(update({ roleIds: [id('analyst')], active: true, displayName: 'Ada' }))).toEqual(
      [],
    );
  });
});
