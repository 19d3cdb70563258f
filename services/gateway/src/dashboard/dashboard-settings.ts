/** How the dashboard's sessions behave (docs/dashboard.md); read from the settings by the runtime that composes the gateway. */
import type { Settings } from '@switchyard/config';

export interface DashboardSettings {
  /** A session unused this long ends (DASHBOARD_SESSION_IDLE_TIMEOUT_MS). */
  readonly idleTimeoutMs: number;
  /** A session ends this long after sign-in, however used (DASHBOARD_SESSION_MAX_AGE_MS). */
  readonly maxAgeMs: number;
  /** `Secure` on the session cookie: when the request came over https (`auto`), or always (DASHBOARD_COOKIE_SECURE). */
  readonly cookieSecure: 'auto' | 'always';
  /** PUBLIC_BASE_URL: its origin is accepted as the dashboard's own, beside the origin the request names (its Host). */
  readonly publicBaseUrl?: string;
}

export const DEFAULT_DASHBOARD_SETTINGS: DashboardSettings = {
  idleTimeoutMs: 30 * 60 * 1000,
  maxAgeMs: 12 * 60 * 60 * 1000,
  cookieSecure: 'auto',
};

/** The dashboard's settings, or false when DASHBOARD_ENABLED is off. */
export function dashboardSettingsFrom(settings: Settings): DashboardSettings | false {
  if (!settings.DASHBOARD_ENABLED) return false;
  return {
    idleTimeoutMs: settings.DASHBOARD_SESSION_IDLE_TIMEOUT_MS,
    maxAgeMs: settings.DASHBOARD_SESSION_MAX_AGE_MS,
    cookieSecure: settings.DASHBOARD_COOKIE_SECURE,
    ...(settings.PUBLIC_BASE_URL ? { publicBaseUrl: settings.PUBLIC_BASE_URL } : {}),
  };
}
