/**
 * Signing in and out of the dashboard, and what the signed-in page needs first: who it is, its CSRF token, what its
 * roles let it do, the merchant accounts it can look at and the role catalogue (for new API keys).
 */
import { Controller, Get, HttpCode, Inject, Post, Req, Res, UseGuards } from '@nestjs/common';
import { ApiError, type Page } from '@switchyard/api';
import {
  identityPatterns,
  merchantAccountPatterns,
  userPatterns,
  type DashboardUser,
  type MerchantAccount,
  type MerchantAccountListRequest,
  type Role,
} from '@switchyard/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  DashboardAuthGuard,
  DashboardCallerOf,
  SignedIn,
  SignedOut,
  type DashboardCaller,
} from './dashboard-auth.guard';
import { DASHBOARD, type DashboardDependencies } from './dashboard-dependencies';
import type { DashboardSession } from './dashboard-sessions';
import { clearedSessionCookie, sessionCookie, sessionIdOf } from './session-cookie';

/**
 * Sign-in attempts: 10 per email and 100 per client address in 15 minutes (a burst, then one every 90 s / 9 s). An
 * argon2id hash costs ~30 ms of a core, so this also bounds what a stranger can make the gateway's identity spend.
 */
export const SIGN_IN_LIMITS = {
  perEmail: { count: 10, periodMs: 15 * 60 * 1000 },
  perAddress: { count: 100, periodMs: 15 * 60 * 1000 },
} as const;

/** What the page is told about its session. */
export interface DashboardSessionInfo {
  readonly user: DashboardUser;
  readonly csrf_token: string;
  readonly permissions: readonly string[];
  readonly expires_at: string;
}

@Controller('dashboard/api')
@UseGuards(DashboardAuthGuard)
export class DashboardSessionController {
  constructor(@Inject(DASHBOARD) private readonly dashboard: DashboardDependencies) {}

  @Post('login')
  @HttpCode(200)
  @SignedOut()
  async login(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<DashboardSessionInfo> {
    const { email, password } = credentialsOf(request.body);
    await this.throttle(
      reply,
      [`dashboard-sign-in:email:${email.trim().toLowerCase()}`, SIGN_IN_LIMITS.perEmail],
      [`dashboard-sign-in:address:${request.ip}`, SIGN_IN_LIMITS.perAddress],
    );
    const user = await this.dashboard.rpc.call<DashboardUser>(userPatterns.signIn, { email, password });
    // A session the browser already had is ended, never carried on: each sign-in starts a new id (no fixation).
    const previous = sessionIdOf(request.headers.cookie);
    if (previous) await this.dashboard.sessions.end(previous);
    const { id, session } = await this.dashboard.sessions.create(user.id);
    reply.header('set-cookie', sessionCookie(id, request, this.dashboard.settings));
    return this.info(user, session);
  }

  @Post('logout')
  @HttpCode(204)
  @SignedIn()
  async logout(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @DashboardCallerOf() caller: DashboardCaller,
  ): Promise<void> {
    await this.dashboard.sessions.end(caller.sessionId);
    reply.header('set-cookie', clearedSessionCookie(request, this.dashboard.settings));
  }

  @Get('session')
  @SignedIn()
  session(@DashboardCallerOf() caller: DashboardCaller): DashboardSessionInfo {
    return this.info(caller.user, caller.session);
  }

  @Get('merchant-accounts')
  @SignedIn('merchant-accounts.read')
  merchantAccounts(): Promise<Page<MerchantAccount>> {
    const request: MerchantAccountListRequest = { limit: 100 };
    return this.dashboard.rpc.call(merchantAccountPatterns.list, request);
  }

  @Get('roles')
  @SignedIn('roles.read')
  roles(): Promise<Page<Role>> {
    return this.dashboard.rpc.call(identityPatterns.listRoles, { limit: 100 });
  }

  private info(user: DashboardUser, session: DashboardSession): DashboardSessionInfo {
    return {
      user,
      csrf_token: session.csrfToken,
      permissions: [...new Set(user.roles.flatMap((role) => role.permissions))],
      expires_at: new Date(this.dashboard.sessions.endOf(session)).toISOString(),
    };
  }

  private async throttle(
    reply: FastifyReply,
    ...buckets: Array<readonly [string, { count: number; periodMs: number }]>
  ): Promise<void> {
    for (const [key, limit] of buckets) {
      const decision = await this.dashboard.signInLimiter.consume(key, limit);
      if (decision.allowed) continue;
      reply.header('retry-after', String(Math.max(1, Math.ceil(decision.retryAfterMs / 1000))));
      throw new ApiError(429, 'Too many sign-in attempts; try again later');
    }
  }
}

/** The body's email and password, checked by hand: a validation error must never echo a password back. */
function credentialsOf(body: unknown): { email: string; password: string } {
  const { email, password } = (body !== null && typeof body === 'object' ? body : {}) as {
    email?: unknown;
    password?: unknown;
  };
  const details = [
    ...(typeof email === 'string' && email.length > 0 && email.length <= 320
      ? []
      : [{ location: 'body' as const, pointer: '/email', message: 'must be an email address', type: 'invalid_email' }]),
    ...(typeof password === 'string' && password.length > 0 && password.length <= 4096
      ? []
      : [
          {
            location: 'body' as const,
            pointer: '/password',
            message: 'must be a non-empty string',
            type: 'invalid_password',
          },
        ]),
  ];
  if (details.length > 0) throw ApiError.badRequest('Send your email and password', details);
  return { email: email as string, password: password as string };
}
