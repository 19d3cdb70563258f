/** What the dashboard's routes are given by `startGateway` (one value, injected as `DASHBOARD`). */
import type { RateLimiter } from '@switchyard/kv';
import type { RpcClient } from '@switchyard/rpc';
import type { CachedKeyDirectory } from '../auth/cached-key-directory';
import type { DashboardSessions } from './dashboard-sessions';
import type { DashboardSettings } from './dashboard-settings';

export const DASHBOARD = Symbol('DASHBOARD');

export interface DashboardDependencies {
  /** The same RPC client the API's controllers call the services with. */
  readonly rpc: RpcClient;
  readonly sessions: DashboardSessions;
  /** Limits sign-in attempts per email and per client address (the gateway's rate limiter: Redis when distributed). */
  readonly signInLimiter: RateLimiter;
  /** A key revoked from the dashboard leaves this gateway's cache at once, as one revoked over the API does. */
  readonly keyDirectory: Pick<CachedKeyDirectory, 'invalidate'>;
  readonly settings: DashboardSettings;
  /** Read by the authorization chart (tests set the time); default `Date.now`. */
  readonly now?: () => number;
}
