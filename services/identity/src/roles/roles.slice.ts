import { pageOf, type Page, type PageQuery } from '@switchyard/api';
import { identityPatterns, type Role } from '@switchyard/contracts';
import type { RpcHandlers } from '@switchyard/rpc';
import type { IdentitySlice } from '../identity-context';
import { findRole, roleCatalog, type RoleDefinition } from './role-catalog';

export const toRole = (role: RoleDefinition): Role => ({
  type: 'role',
  id: role.id,
  slug: role.slug,
  name: role.name,
  description: role.description,
  assignable_to: [...role.assignableTo],
  applies_to: [...role.appliesTo],
  is_standalone_assignable: role.isStandaloneAssignable,
  permissions: [...role.permissions],
});

/** The full role objects embedded in users and API key pairs (ids no longer in the catalog are left out). */
export const rolesOf = (roleIds: readonly string[]): Role[] =>
  roleIds.flatMap((id) => {
    const role = findRole(id);
    return role ? [toRole(role)] : [];
  });

/** The role catalog, read-only: fixed in code, shared by every merchant account. */
export class Roles implements IdentitySlice {
  list(query: PageQuery): Page<Role> {
    return pageOf(roleCatalog.map(toRole), (role) => role.slug, query);
  }

  rpcHandlers(): RpcHandlers {
    return { [identityPatterns.listRoles]: async (payload) => this.list(payload as PageQuery) };
  }
}
