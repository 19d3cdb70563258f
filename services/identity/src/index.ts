export * from './identity-service';
export * from './identity-relay';
export type { Assigner } from './api-key-pairs/api-key-pairs.slice';
export { roleCatalog, findRoleBySlug } from './roles/role-catalog';
export { rolesOf, toRole } from './roles/roles.slice';
export type { User, UserCreateInput, UserUpdateInput, SingleSignOnResult } from './users/users.slice';
export { resolveSingleSignOnRoles, type SingleSignOnRoles } from './roles/single-sign-on';
