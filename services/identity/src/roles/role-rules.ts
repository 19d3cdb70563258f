/**
 * The spec's role-set rules (Authentication, points 6–9), applied on every assignment path: the API, the
 * operator CLI (which stands where a dashboard user would) and, later, single sign-on. Pure; a violation is a
 * 400 with one detail per broken rule.
 */
import type { AssigneeKind } from '@switchyard/contracts';
import { grantsCover } from '@switchyard/auth';
import { DomainError } from '@switchyard/decider';
import { findRole, type RoleDefinition } from './role-catalog';

export type RoleSetViolation = { readonly field: 'role_ids'; readonly message: string };

/** Roles that can manage API keys, and the administrator, are assigned by dashboard users only. */
const assignableByUsersOnly = (role: RoleDefinition): boolean =>
  role.slug === 'administrator' || role.permissions.includes('api-key-pairs.write');

export function roleSetViolations(roleIds: readonly string[], assignee: AssigneeKind): RoleSetViolation[] {
  const violations: RoleSetViolation[] = [];
  const violation = (message: string) => violations.push({ field: 'role_ids', message });
  if (roleIds.length === 0) violation('at least one role is required');

  const roles: RoleDefinition[] = [];
  for (const id of new Set(roleIds)) {
    const role = findRole(id);
    if (role) roles.push(role);
    else violation(`unknown role id ${id}`);
  }
  if (violations.length > 0) return violations;

  const slugs = new Set(roles.map((role) => role.slug));
  for (const role of roles) {
    if (!role.assignableTo.includes(assignee)) violation(`role ${role.slug} cannot be assigned to a ${assignee}`);
    if (role.appliesTo.length > 0 && !role.appliesTo.some((slug) => slugs.has(slug))) {
      violation(`role ${role.slug} needs one of these roles beside it: ${role.appliesTo.join(', ')}`);
    }
  }
  if (slugs.has('administrator') && roles.length > 1) violation('administrator must be the only role of its set');
  if (!roles.some((role) => role.isStandaloneAssignable))
    violation('the set needs at least one role that can stand alone');
  return violations;
}

/**
 * Administrator, and roles that can manage API keys, are assigned by dashboard users (the operator) only: an API
 * key assigning one is refused as forbidden (403).
 */
export function assertAssignerMayAssign(roleIds: readonly string[], assigner: AssigneeKind): void {
  if (assigner === 'user') return;
  const refused = roleIds
    .map(findRole)
    .filter((role): role is RoleDefinition => role !== undefined && assignableByUsersOnly(role));
  if (refused.length > 0) {
    throw new DomainError(
      'role_assignment_forbidden',
      `only a dashboard user can assign ${refused.map((role) => role.slug).join(', ')}`,
      refused.map((role) => ({
        field: 'role_ids',
        message: `role ${role.slug} can be assigned only by a dashboard user`,
      })),
    );
  }
}

/** The set's own rules first (400, one detail per broken rule), then who may assign it (403). */
export function assertValidRoleSet(roleIds: readonly string[], assignee: AssigneeKind, assigner: AssigneeKind): void {
  const violations = roleSetViolations(roleIds, assignee);
  if (violations.length > 0) {
    throw new DomainError(
      'invalid_role_set',
      `invalid role set: ${violations.map((v) => v.message).join('; ')}`,
      violations,
    );
  }
  assertAssignerMayAssign(roleIds, assigner);
}

/**
 * A caller grants only what it holds itself (issue 22, item 5): every permission of the roles given must be covered
 * by the assigner's own permissions, so `administrator` (`*.read`, `*.write`) goes only from an administrator. An
 * administrator holds everything, `embed` included (its wildcards do not cover `embed`, yet it may hand out
 * `integration`). The operator CLI is not an assignee and is not asked.
 */
export function assertAssignerHolds(roleIds: readonly string[], assignerRoleIds: readonly string[]): void {
  const own = assignerRoleIds.map(findRole).filter((role): role is RoleDefinition => role !== undefined);
  if (own.some((role) => role.slug === 'administrator')) return;
  const held = own.flatMap((role) => role.permissions);
  const refused = roleIds
    .map(findRole)
    .filter((role): role is RoleDefinition => role !== undefined)
    .map((role) => ({ role, missing: role.permissions.filter((permission) => !grantsCover(held, permission)) }))
    .filter(({ missing }) => missing.length > 0);
  if (refused.length === 0) return;
  throw new DomainError(
    'role_assignment_forbidden',
    `you can grant only permissions you hold: ${refused.map(({ role }) => role.slug).join(', ')} would grant more than your roles do`,
    refused.map(({ role, missing }) => ({
      field: 'role_ids',
      message: `role ${role.slug} grants ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}, which your roles do not`,
    })),
  );
}

/**
 * Managing API keys over the API needs the Key Manager role (spec, Authentication rule 6): an API key without it —
 * an administrator key included, whose wildcards pass the scope check — is refused. The dashboard and the operator
 * CLI stay the administrator's way to manage keys.
 */
export function assertApiKeyMayManageKeys(assignerRoleIds: readonly string[]): void {
  if (assignerRoleIds.some((id) => findRole(id)?.slug === 'key-manager')) return;
  throw new DomainError(
    'key_management_forbidden',
    'Managing API keys over the API needs the key-manager role: an API key without it (an administrator key included) cannot; use the dashboard or the operator CLI',
  );
}
