import { findRoleBySlug, roleCatalog } from './role-catalog';
import { roleSetViolations } from './role-rules';
import { resolveSingleSignOnRoles } from './single-sign-on';

const id = (slug: string) => findRoleBySlug(slug)!.id;
const analyst = id('analyst');
const usable = (roleIds: readonly string[]) => roleSetViolations(roleIds, 'user').length === 0;

/** Every claim made of catalog slugs: all 2^6 subsets of the roles, in catalog order. */
const everyClaim: string[][] = Array.from({ length: 2 ** roleCatalog.length }, (_, mask) =>
  roleCatalog.filter((_, bit) => mask & (1 << bit)).map((role) => role.slug),
);

describe('resolving a roles claim', () => {
  it.each([
    // claim, roles the user gets, added, ignored
    [[], ['analyst'], ['analyst'], []],
    [['analyst'], ['analyst'], [], []],
    [['administrator'], ['administrator'], [], []],
    [['analyst', 'pii-viewer'], ['analyst', 'pii-viewer'], [], []],
    [['system-manager', 'key-manager'], ['system-manager', 'key-manager'], [], []],
    [['pii-viewer'], ['pii-viewer', 'analyst'], ['analyst'], []],
    [['key-manager'], ['key-manager', 'analyst'], ['analyst'], []],
    [['pii-viewer', 'system-manager'], ['pii-viewer', 'system-manager', 'analyst'], ['analyst'], []],
    [['no-such-role'], ['analyst'], ['analyst'], ['no-such-role']],
    [['system-manager', 'Finance Team'], ['system-manager'], [], ['Finance Team']],
    // Even the claim plus analyst breaks a rule: analyst alone, the claim's other roles dropped (reported as ignored).
    [['administrator', 'pii-viewer'], ['analyst'], ['analyst'], ['administrator', 'pii-viewer']],
    [['administrator', 'analyst'], ['analyst'], [], ['administrator']],
    [['integration'], ['analyst'], ['analyst'], ['integration']],
    [['system-manager', 'integration', 'typo'], ['analyst'], ['analyst'], ['system-manager', 'integration', 'typo']],
  ])('%j gives %j (added %j, ignored %j)', (claim, roles, added, ignored) =>
    expect(resolveSingleSignOnRoles(claim)).toEqual({ roleIds: roles.map(id), added: added.map(id), ignored }),
  );

  it('takes role ids as well as slugs, trims entries and counts a role named twice once', () =>
    expect(resolveSingleSignOnRoles([id('system-manager'), ' system-manager ', 'key-manager'])).toEqual({
      roleIds: [id('system-manager'), id('key-manager')],
      added: [],
      ignored: [],
    }));

  describe.each(everyClaim.map((claim) => [claim]))('for the claim %j', (claim) => {
    const resolved = resolveSingleSignOnRoles(claim);
    const fromClaim = claim.map(id);

    it('gives a set that passes every role rule for a user', () => expect(usable(resolved.roleIds)).toBe(true));

    it('adds nothing but analyst', () => {
      expect(resolved.added).toEqual(resolved.roleIds.filter((role) => !fromClaim.includes(role)));
      expect(resolved.added.every((role) => role === analyst)).toBe(true);
    });

    it('keeps a usable claim as it is, and otherwise adds analyst to it unless that still breaks a rule', () => {
      if (usable(fromClaim)) expect(resolved.roleIds).toEqual(fromClaim);
      else if (usable([...new Set([...fromClaim, analyst])]))
        expect(new Set(resolved.roleIds)).toEqual(new Set([...fromClaim, analyst]));
      else expect(resolved.roleIds).toEqual([analyst]);
    });

    it('reports every claim entry left out as ignored', () =>
      expect(resolved.ignored).toEqual(claim.filter((slug) => !resolved.roleIds.includes(id(slug)))));
  });

  it('drops roles from the claim exactly when it holds a role a user cannot have, or administrator beside another role', () => {
    const dropsRoles = (claim: string[]) =>
      claim.some((slug) => !resolveSingleSignOnRoles(claim).roleIds.includes(id(slug)));
    const cannotBeFixedByAddingAnalyst = (claim: string[]) =>
      claim.some((slug) => !findRoleBySlug(slug)!.assignableTo.includes('user')) ||
      (claim.includes('administrator') && claim.length > 1);
    expect(everyClaim.filter(dropsRoles)).toEqual(everyClaim.filter(cannotBeFixedByAddingAnalyst));
  });
});
