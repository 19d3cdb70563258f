/**
 * Single sign-on as a role assignment path (spec, Authentication 8 and 10): the identity provider's roles claim
 * is mapped to catalog roles, and the usual role-set rules apply. Pure.
 *
 * - Each claim entry may be a role slug or a role id; entries matching no role are ignored.
 * - A claim that resolves to a usable set is taken as it is.
 * - A claim that resolves to an unusable set (any rule broken, an empty set included) gets `analyst` added to the
 *   roles from the claim, rather than the sign-in being refused.
 * - When even the claim plus `analyst` breaks a rule (`administrator` beside anything, or a role that cannot go to
 *   a user such as `integration`), the user gets `analyst` alone: the least the spec grants a signed-in user. We
 *   never drop just the offending roles, because guessing which of `administrator` + `pii-viewer` the provider
 *   "meant" could hand out administrator by accident; the provider's mapping has to be fixed instead.
 */
import { findRole, findRoleBySlug, type RoleDefinition } from './role-catalog';
import { roleSetViolations } from './role-rules';

export interface SingleSignOnRoles {
  /** The role ids the user gets: always a set that passes `roleSetViolations(..., 'user')`. */
  readonly roleIds: string[];
  /** Role ids the claim did not hold but the user gets (only ever `analyst`). */
  readonly added: string[];
  /** Claim entries, as given, that are not reflected in `roleIds`: unknown ones, and the claim's roles dropped by the fallback. */
  readonly ignored: string[];
}

export const singleSignOnFallbackRole = 'analyst';

export function resolveSingleSignOnRoles(claim: readonly string[]): SingleSignOnRoles {
  const analyst = requireRole(singleSignOnFallbackRole).id;
  const fromClaim: string[] = [];
  const unknown: string[] = [];
  for (const entry of claim) {
    const role = resolveEntry(entry);
    if (!role) unknown.push(entry);
    else if (!fromClaim.includes(role.id)) fromClaim.push(role.id);
  }

  if (roleSetViolations(fromClaim, 'user').length === 0) return { roleIds: fromClaim, added: [], ignored: unknown };

  const added = fromClaim.includes(analyst) ? [] : [analyst];
  const withAnalyst = [...fromClaim, ...added];
  if (roleSetViolations(withAnalyst, 'user').length === 0) return { roleIds: withAnalyst, added, ignored: unknown };

  return { roleIds: [analyst], added, ignored: claim.filter((entry) => resolveEntry(entry)?.id !== analyst) };
}

const resolveEntry = (entry: string): RoleDefinition | undefined =>
  findRole(entry.trim()) ?? findRoleBySlug(entry.trim());

function requireRole(slug: string): RoleDefinition {
  const role = findRoleBySlug(slug);
  if (!role) throw new Error(`role catalog has no ${slug}`);
  return role;
}
