/**
 * RPC payloads the operator dashboard (gateway, `services/gateway/src/dashboard/`) sends beside the API's own: signing
 * a dashboard user in, reading the signed-in user back, and the authorization statistics of the connections.
 */
import type { Role } from './identity';

export const userPatterns = {
  /**
   * `UserSignInRequest` → `DashboardUser`; 401 for a wrong email or password, 403 `user_inactive`
   * for a deactivated user.
   */
  signIn: 'identity.users.sign-in',
  /** `{ id }` → `DashboardUser`; 404 when there is no such user. */
  get: 'identity.users.get',
} as const;

export interface UserSignInRequest {
  readonly email: string;
  readonly password: string;
}

/** A dashboard user as identity answers it (never a password or its hash). */
export interface DashboardUser {
  readonly type: 'user';
  readonly id: string;
  readonly email: string;
  readonly display_name: string;
  readonly role_ids: string[];
  readonly roles: Role[];
  readonly active: boolean;
  readonly has_password: boolean;
  readonly created_at: string;
  readonly updated_at: string;
}

export const authorizationStatsPatterns = {
  /** `AuthorizationStatsRequest` → `AuthorizationStats`. */
  perMinute: 'transactions.authorization-stats.per-minute',
} as const;

export interface AuthorizationStatsRequest {
  readonly merchant_account_id: string;
  /** Attempts decided at or after this time (ISO 8601). */
  readonly from: string;
  /** … and before this time. */
  readonly to: string;
}

/** One connection's authorization attempts decided in one minute. */
export interface AuthorizationStatsBucket {
  readonly payment_service_id: string;
  /** The minute, `YYYY-MM-DDTHH:MM:00.000Z`. */
  readonly minute: string;
  readonly attempts: number;
  readonly succeeded: number;
  readonly declined: number;
  readonly failed: number;
  /** Mean and worst time from the attempt's start (the transaction's creation, or the failover to it) to its answer. */
  readonly latency_ms_avg: number;
  readonly latency_ms_max: number;
}

/** One connection's totals over a chart's window (the dashboard's `GET /dashboard/api/stats/authorizations`). */
export interface ConnectionTotals {
  readonly payment_service_id: string;
  readonly attempts: number;
  readonly succeeded: number;
  /** succeeded / attempts, 0 to 1. */
  readonly success_rate: number;
  readonly latency_ms_avg: number;
  readonly latency_ms_max: number;
}

export interface AuthorizationStats {
  readonly from: string;
  readonly to: string;
  /** Oldest minute first, then by connection. */
  readonly buckets: AuthorizationStatsBucket[];
}
