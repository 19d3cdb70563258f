/**
 * The spec's role-set rules (Authentication, points 6–9), applied on every assignment path: the API, the
 * operator CLI (which stands where a dashboard user would) and, later, single sign-on. Pure; a violation is a
 * 400 with one detail per broken rule.
 */
import type { AssigneeKind } from '@switchyard/contracts';
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
  if (!roles.some((role) => role.isStandaloneAssignable)) violation('the set needs at least one role that can stand alone');
  return violations;
}

/**
 * Administrator, and roles that can manage API keys, are assigned by dashboard users (the operator) only: an API
 * key assigning one is refused as forbidden (403).
 */
export function assertAssignerMayAssign(roleIds: readonly string[], assigner: AssigneeKind): void {
  if (assigner === 'user') return;
  const refused = roleIds.map(findRole).filter((role): role is RoleDefinition => role !== undefined && assignableByUsersOnly(role));
  if (refused.length > 0) {
    throw new DomainError(
      'role_assignment_forbidden',
      `only a dashboard user can assign ${refused.map((role) => role.slug).join(', ')}`,
      refused.map((role) => ({ field: 'role_ids', message: `role ${role.slug} can be assigned only by a dashboard user` })),
    );
  }
}

/** The set's own rules first (400, one detail per broken rule), then who may assign it (403). */
export function assertValidRoleSet(roleIds: readonly string[], assignee: AssigneeKind, assigner: AssigneeKind): void {
  const violations = roleSetViolations(roleIds, assignee);
  if (violations.length > 0) {
    throw new DomainError('invalid_role_set', `invalid role set: ${violations.map((v) => v.message).join('; ')}`, violations);
  }
  assertAssignerMayAssign(roleIds, assigner);
}
