/**
 * The dashboard's session cookie: `HttpOnly` (no script reads it), `SameSite=Strict` (no other site's page sends it),
 * `Path=/dashboard` (the API never receives it), `Secure` when the request came over https or the settings say always.
 * No `Max-Age`: the browser forgets it when closed; the server ends the session on its own schedule anyway.
 */
import type { FastifyRequest } from 'fastify';
import type { DashboardSettings } from './dashboard-settings';

export const SESSION_COOKIE = 'switchyard_dashboard_session';
export const DASHBOARD_PATH = '/dashboard';

const attributes = (request: FastifyRequest, settings: Pick<DashboardSettings, 'cookieSecure'>): string =>
  `Path=${DASHBOARD_PATH}; HttpOnly; SameSite=Strict${settings.cookieSecure === 'always' || request.protocol === 'https' ? '; Secure' : ''}`;

export const sessionCookie = (
  id: string,
  request: FastifyRequest,
  settings: Pick<DashboardSettings, 'cookieSecure'>,
): string => `${SESSION_COOKIE}=${id}; ${attributes(request, settings)}`;

/** Tells the browser to drop the cookie (sign-out, or a session that has ended). */
export const clearedSessionCookie = (
  request: FastifyRequest,
  settings: Pick<DashboardSettings, 'cookieSecure'>,
): string => `${SESSION_COOKIE}=; ${attributes(request, settings)}; Max-Age=0`;

/** The session id the request's `Cookie` header carries; undefined when none. */
export function sessionIdOf(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  for (const pair of cookieHeader.split(';')) {
    const separator = pair.indexOf('=');
    if (separator > 0 && pair.slice(0, separator).trim() === SESSION_COOKIE) return pair.slice(separator + 1).trim();
  }
  return undefined;
}
