import { DomainError } from '@switchyard/decider';
import { findRoleBySlug } from '../roles/role-catalog';
import { apiKeyPair, type ApiKeyPairCommand, type ApiKeyPairEvent } from './api-key-pair';

const now = '2026-01-01T00:00:00.000Z';
const integration = findRoleBySlug('integration')!.id;
const keyManager = findRoleBySlug('key-manager')!.id;
const jwk = { kty: 'EC', crv: 'P-521', x: 'x', y: 'y' } as const;

type CreateCommand = Extract<ApiKeyPairCommand, { type: 'CreateApiKeyPair' }>;
const create = (
  overrides: Partial<CreateCommand['data']> = {},
  assigner: 'user' | 'api-key-pair' = 'user',
): CreateCommand => ({
  type: 'CreateApiKeyPair',
  data: {
    id: 'k1',
    displayName: 'server',
    kid: 'kid-1',
    publicJwk: jwk,
    roleIds: [integration],
    merchantAccountIds: ['default'],
    active: true,
    generated: true,
    ...overrides,
  },
  metadata: { now, assigner, by: { kind: 'operator' } },
});

const given = (events: ApiKeyPairEvent[]) => ({
  when: (command: ApiKeyPairCommand) =>
    apiKeyPair.decide(command, events.reduce(apiKeyPair.evolve, apiKeyPair.initialState())),
});

describe('when no key pair exists', () => {
  it('creates it with its roles, accounts and public key, deduplicating lists', () =>
    expect(
      given([]).when(create({ roleIds: [integration, integration], merchantAccountIds: ['default', 'default'] })),
    ).toEqual([{ type: 'ApiKeyPairCreated', data: { ...create().data, createdBy: { kind: 'operator' }, at: now } }]));

  it('refuses a role set that breaks the rules', () =>
    expect(() => given([]).when(create({ roleIds: [keyManager] }))).toThrow(DomainError));

  it('refuses key-manager when the assigner is an API key', () =>
    expect(() => given([]).when(create({ roleIds: [keyManager, integration] }, 'api-key-pair'))).toThrow(
      expect.objectContaining({ code: 'role_assignment_forbidden' }),
    ));
});

const update = (
  data: Extract<ApiKeyPairCommand, { type: 'UpdateApiKeyPair' }>['data'],
  assigner: 'user' | 'api-key-pair' = 'api-key-pair',
): ApiKeyPairCommand => ({
  type: 'UpdateApiKeyPair',
  data,
  metadata: { now, assigner, by: { kind: 'api-key-pair', id: 'admin-key' } },
});

describe('when the key pair exists', () => {
  const created = given([]).when(create()) as ApiKeyPairEvent[];
  it('refuses to create it again', () =>
    expect(() => given(created).when(create())).toThrow(expect.objectContaining({ code: 'api_key_pair_exists' })));

  it('revokes and restores it without touching anything else', () => {
    expect(given(created).when(update({ active: false }))).toEqual([
      {
        type: 'ApiKeyPairUpdated',
        data: { id: 'k1', kid: 'kid-1', active: false, by: { kind: 'api-key-pair', id: 'admin-key' }, at: now },
      },
    ]);
  });

  it('replaces roles and merchant accounts, checking the new role set', () => {
    expect(
      given(created).when(update({ roleIds: [integration, keyManager].slice(0, 1), merchantAccountIds: ['a', 'b'] }))[0]
        ?.data,
    ).toMatchObject({
      roleIds: [integration],
      merchantAccountIds: ['a', 'b'],
    });
    expect(() => given(created).when(update({ roleIds: [keyManager] }, 'user'))).toThrow(
      expect.objectContaining({ code: 'invalid_role_set' }),
    );
  });

  it('records a use only when it is later than the last one', () => {
    const used = [
      ...created,
      { type: 'ApiKeyPairUsed', data: { id: 'k1', at: '2026-01-01T00:05:00.000Z' } } as ApiKeyPairEvent,
    ];
    expect(given(used).when({ type: 'RecordApiKeyPairUse', data: { at: '2026-01-01T00:01:00.000Z' } })).toEqual([]);
    expect(given(used).when({ type: 'RecordApiKeyPairUse', data: { at: '2026-01-01T00:06:00.000Z' } })).toHaveLength(1);
  });
});

describe('when a key holds key-manager alone (made before the companion rule)', () => {
  const legacy: ApiKeyPairEvent[] = [
    {
      type: 'ApiKeyPairCreated',
      data: { ...create().data, roleIds: [keyManager], createdBy: { kind: 'operator' }, at: now },
    },
  ];
  it('still toggles active without a role edit', () =>
    expect(given(legacy).when(update({ active: false }))).toHaveLength(1));
  it('refuses a role edit that leaves key-manager alone', () =>
    expect(() => given(legacy).when(update({ roleIds: [keyManager] }, 'user'))).toThrow(
      expect.objectContaining({ code: 'invalid_role_set' }),
    ));
});

describe('when the key pair was deleted', () => {
  const deleted: ApiKeyPairEvent[] = [
    ...(given([]).when(create()) as ApiKeyPairEvent[]),
    { type: 'ApiKeyPairDeleted', data: { id: 'k1', kid: 'kid-1', by: { kind: 'operator' }, at: now } },
  ];
  it('is not found for updates and deletes', () => {
    expect(() => given(deleted).when(update({ active: true }))).toThrow(
      expect.objectContaining({ code: 'api_key_pair_not_found' }),
    );
    expect(() =>
      given(deleted).when({ type: 'DeleteApiKeyPair', metadata: { now, assigner: 'user', by: { kind: 'operator' } } }),
    ).toThrow(expect.objectContaining({ code: 'api_key_pair_not_found' }));
  });
  it('ignores late uses', () =>
    expect(given(deleted).when({ type: 'RecordApiKeyPairUse', data: { at: now } })).toEqual([]));
});
