import { DomainError } from '@switchyard/decider';
import { findRoleBySlug } from './role-catalog';
import {
  assertApiKeyMayManageKeys,
  assertAssignerHolds,
  assertAssignerMayAssign,
  assertValidRoleSet,
  roleSetViolations,
} from './role-rules';

const id = (slug: string): string => {
  const role = findRoleBySlug(slug);
  if (!role) throw new Error(`no role ${slug}`);
  return role.id;
};
const rolesOf = (...slugs: string[]) => slugs.map(id);

describe('role sets for an API key pair, assigned by a dashboard user', () => {
  it.each([
    ['administrator'],
    ['analyst'],
    ['integration'],
    ['system-manager'],
    ['key-manager', 'integration'],
    ['pii-viewer', 'analyst'],
  ])('accepts %s', (...slugs) => expect(roleSetViolations(rolesOf(...slugs), 'api-key-pair')).toEqual([]));

  it('refuses administrator with another role', () =>
    expect(roleSetViolations(rolesOf('administrator', 'analyst'), 'api-key-pair')).toContainEqual({
      field: 'role_ids',
      message: 'administrator must be the only role of its set',
    }));

  it('refuses key-manager alone: it cannot stand alone and needs a companion', () => {
    const messages = roleSetViolations(rolesOf('key-manager'), 'api-key-pair').map((v) => v.message);
    expect(messages).toContain('the set needs at least one role that can stand alone');
    expect(messages).toContain(
      'role key-manager needs one of these roles beside it: analyst, integration, system-manager',
    );
  });

  it('refuses pii-viewer without the analyst role it extends', () =>
    expect(roleSetViolations(rolesOf('pii-viewer', 'integration'), 'api-key-pair').map((v) => v.message)).toContain(
      'role pii-viewer needs one of these roles beside it: analyst',
    ));

  it('refuses an empty set and unknown ids', () => {
    expect(roleSetViolations([], 'api-key-pair').map((v) => v.message)).toContain('at least one role is required');
    expect(roleSetViolations(['00000000-0000-4000-8000-000000000000'], 'api-key-pair').map((v) => v.message)).toEqual([
      'unknown role id 00000000-0000-4000-8000-000000000000',
    ]);
  });
});

describe('assignee kinds and assigners', () => {
  it('refuses integration for a dashboard user', () =>
    expect(roleSetViolations(rolesOf('integration'), 'user').map((v) => v.message)).toContain(
      'role integration cannot be assigned to a user',
    ));

  it('forbids an API key to assign administrator or key-manager', () => {
    expect(() => assertAssignerMayAssign(rolesOf('administrator'), 'api-key-pair')).toThrow(
      expect.objectContaining({
        code: 'role_assignment_forbidden',
        message: 'only a dashboard user can assign administrator',
      }),
    );
    expect(() => assertAssignerMayAssign(rolesOf('key-manager', 'analyst'), 'api-key-pair')).toThrow(
      expect.objectContaining({ code: 'role_assignment_forbidden' }),
    );
    expect(() => assertAssignerMayAssign(rolesOf('key-manager', 'analyst'), 'user')).not.toThrow();
  });

  it('raises a DomainError with one detail per violation', () => {
    expect(() => assertValidRoleSet(rolesOf('key-manager'), 'api-key-pair', 'user')).toThrow(DomainError);
  });
});

describe('a caller grants only what it holds (issue 22, item 5)', () => {
  const forbidden = (run: () => void) => {
    try {
      run();
    } catch (error) {
      return error instanceof DomainError && error.code === 'role_assignment_forbidden' ? error : null;
    }
    return null;
  };

  it('an analyst + key-manager grants analyst, never administrator, integration or system-manager', () => {
    const own = rolesOf('analyst', 'key-manager');
    expect(() => assertAssignerHolds(rolesOf('analyst'), own)).not.toThrow();
    for (const slug of ['administrator', 'integration', 'system-manager']) {
      expect(forbidden(() => assertAssignerHolds(rolesOf(slug), own))?.message).toMatch(
        new RegExp(`${slug} would grant more`),
      );
    }
  });

  it('administrator only from an administrator, who may give any role (embed included)', () => {
    expect(
      forbidden(() => assertAssignerHolds(rolesOf('administrator'), rolesOf('system-manager', 'key-manager'))),
    ).not.toBeNull();
    for (const slug of ['administrator', 'integration', 'analyst'])
      expect(() => assertAssignerHolds(rolesOf(slug), rolesOf('administrator'))).not.toThrow();
  });
});

describe('managing keys over the API needs key-manager (spec, Authentication rule 6)', () => {
  it('refuses an administrator key and one without key-manager; takes a key-manager', () => {
    for (const own of [rolesOf('administrator'), rolesOf('integration')])
      expect(() => assertApiKeyMayManageKeys(own)).toThrow(/needs the key-manager role/);
    expect(() => assertApiKeyMayManageKeys(rolesOf('key-manager', 'integration'))).not.toThrow();
  });
});
