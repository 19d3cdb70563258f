/**
 * The one guard of the dashboard's backend routes (`/dashboard/api/...`), read from each route's `@SignedIn(...)` or
 * `@SignedOut()`:
 *
 * 1. every answer is `Cache-Control: no-store`;
 * 2. a state-changing request (anything but GET and HEAD) must come from the dashboard's own origin
 *    (`same-origin.ts`) — sign-in included, so no other site can sign a browser in to an account of its choosing;
 * 3. `@SignedIn`: the session cookie must name a live session (else 401, and the cookie is dropped); a state-changing
 *    request must also carry the session's CSRF token in `x-csrf-token` (else 403);
 * 4. the user is read from identity on every request — a deactivated user, or a role taken away, counts at once —
 *    and its roles' permissions must cover one of the route's scopes, exactly as an API key's roles must (403).
 */
import { timingSafeEqual } from 'node:crypto';
import {
  createParamDecorator,
  Inject,
  Injectable,
  SetMetadata,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiError } from '@switchyard/api';
import { grantsCover } from '@switchyard/auth';
import { userPatterns, type DashboardUser } from '@switchyard/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DASHBOARD, type DashboardDependencies } from './dashboard-dependencies';
import type { DashboardSession } from './dashboard-sessions';
import { crossOriginProblem, originOf } from './same-origin';
import { clearedSessionCookie, sessionIdOf } from './session-cookie';

export const CSRF_HEADER = 'x-csrf-token';

type DashboardAccess = { readonly signedIn: false } | { readonly signedIn: true; readonly anyOf: readonly string[] };
const DASHBOARD_ACCESS = 'switchyard:dashboard-access';

/** A route for a signed-in user whose roles grant one of `anyOf` (none given: any signed-in user). */
export const SignedIn = (...anyOf: string[]) =>
  SetMetadata(DASHBOARD_ACCESS, { signedIn: true, anyOf } satisfies DashboardAccess);
/** A route open without a session (sign-in): only the same-origin rule applies to it. */
export const SignedOut = () => SetMetadata(DASHBOARD_ACCESS, { signedIn: false } satisfies DashboardAccess);

/** The signed-in user of a request, as the guard established it. */
export interface DashboardCaller {
  readonly sessionId: string;
  readonly session: DashboardSession;
  readonly user: DashboardUser;
  /** The union of the user's roles' scopes. */
  readonly permissions: readonly string[];
  /** Whether the user's roles grant `scope`. */
  may(scope: string): boolean;
}

const DASHBOARD_CALLER = Symbol('dashboard-caller');
type DashboardRequest = FastifyRequest & { [DASHBOARD_CALLER]?: DashboardCaller };

/** The signed-in user of a dashboard request once the guard let it through; undefined elsewhere. */
export const dashboardCallerOf = (request: object): DashboardCaller | undefined =>
  (request as DashboardRequest)[DASHBOARD_CALLER];

export const DashboardCallerOf = createParamDecorator((_data: unknown, context: ExecutionContext): DashboardCaller => {
  const caller = context.switchToHttp().getRequest<DashboardRequest>()[DASHBOARD_CALLER];
  if (!caller) throw new Error('DashboardCallerOf used on a route without @SignedIn');
  return caller;
});

const SAFE_METHODS = new Set(['GET', 'HEAD']);

@Injectable()
export class DashboardAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(DASHBOARD) private readonly dashboard: DashboardDependencies,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const access = this.reflector.get<DashboardAccess | undefined>(DASHBOARD_ACCESS, context.getHandler());
    if (!access) throw new Error('a dashboard route without @SignedIn or @SignedOut');
    const request = context.switchToHttp().getRequest<DashboardRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    reply.header('cache-control', 'no-store');

    const changesState = !SAFE_METHODS.has(request.method.toUpperCase());
    if (changesState) {
      const problem = crossOriginProblem(request.headers, this.ownOrigins(request));
      if (problem) throw ApiError.forbidden(`Refused: ${problem}`);
    }
    if (!access.signedIn) return true;

    const sessionId = sessionIdOf(request.headers.cookie);
    const session = sessionId ? await this.dashboard.sessions.use(sessionId) : null;
    if (!sessionId || !session) {
      if (sessionId) reply.header('set-cookie', clearedSessionCookie(request, this.dashboard.settings));
      throw ApiError.unauthorized('Sign in to the dashboard: there is no session, or it has ended');
    }
    if (changesState && !sameToken(request.headers[CSRF_HEADER], session.csrfToken)) {
      throw ApiError.forbidden(
        `Refused: a state-changing request must carry the session's CSRF token in ${CSRF_HEADER}`,
      );
    }

    const user = await this.currentUser(session.userId);
    if (!user?.active) {
      await this.dashboard.sessions.end(sessionId);
      reply.header('set-cookie', clearedSessionCookie(request, this.dashboard.settings));
      throw ApiError.unauthorized('Sign in to the dashboard: this user can no longer sign in');
    }
    const permissions = [...new Set(user.roles.flatMap((role) => role.permissions))];
    const may = (scope: string) => grantsCover(permissions, scope);
    if (access.anyOf.length > 0 && !access.anyOf.some(may)) {
      throw ApiError.forbidden(`This needs the scope ${access.anyOf.join(' or ')}, which none of your roles grants`);
    }
    request[DASHBOARD_CALLER] = { sessionId, session, user, permissions, may };
    return true;
  }

  /** The origin the browser was sent to (its Host, over the connection's scheme), and PUBLIC_BASE_URL's. */
  private ownOrigins(request: FastifyRequest): string[] {
    const own = originOf(`${request.protocol}://${request.host}`);
    const configured = this.dashboard.settings.publicBaseUrl
      ? originOf(this.dashboard.settings.publicBaseUrl)
      : undefined;
    return [own, configured].filter((origin): origin is string => origin !== undefined);
  }

  private async currentUser(id: string): Promise<DashboardUser | null> {
    try {
      return await this.dashboard.rpc.call<DashboardUser>(userPatterns.get, { id });
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    }
  }
}

function sameToken(sent: string | string[] | undefined, expected: string): boolean {
  if (typeof sent !== 'string') return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
