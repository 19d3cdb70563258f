/** The signed-in user as the backend describes it, and what its roles allow (to hide what would be refused anyway). */

export interface SessionInfo {
  readonly user: {
    readonly id: string;
    readonly email: string;
    readonly display_name: string;
    readonly roles: ReadonlyArray<{ readonly slug: string; readonly name: string }>;
  };
  readonly csrf_token: string;
  readonly permissions: readonly string[];
  readonly expires_at: string;
}

/** As the server's `grantCovers`: equal, or the wildcard of the same action. */
export const may = (session: SessionInfo, scope: string): boolean =>
  session.permissions.some(
    (grant) =>
      grant === scope ||
      (grant === '*.read' && scope.endsWith('.read')) ||
      (grant === '*.write' && scope.endsWith('.write')),
  );
