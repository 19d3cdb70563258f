/**
 * Scopes: `<resource>.read`, `<resource>.write`, the wildcards `*.read` / `*.write`, and `embed`.
 * A grant covers a required scope when equal, or when it is the wildcard of the same action.
 */
export function grantCovers(grant: string, required: string): boolean {
  if (grant === required) return true;
  if (grant === '*.read') return required.endsWith('.read');
  if (grant === '*.write') return required.endsWith('.write');
  return false;
}

export const grantsCover = (grants: readonly string[], required: string): boolean =>
  grants.some((grant) => grantCovers(grant, required));

/**
 * Whether a request may reach an endpoint: one of the endpoint's scopes must be covered both by the token's
 * `scopes` claim and by the permissions of the key's roles. Returns the scope that matched, or null.
 */
export function authorizedScope(
  endpointScopes: readonly string[],
  tokenScopes: readonly string[],
  rolePermissions: readonly string[],
): string | null {
  return endpointScopes.find((scope) => grantsCover(tokenScopes, scope) && grantsCover(rolePermissions, scope)) ?? null;
}
