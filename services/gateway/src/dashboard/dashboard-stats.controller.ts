/**
 * The chart's data: authorization attempts per connection and minute over the last hour — how many, how many succeeded,
 * and how long the connection took to answer — aggregated by the transactions service from its read model
 * (`authorizationStatsPatterns`), with each connection's totals for the hour.
 */
import { Controller, Get, Inject, Query, UseGuards } from '@nestjs/common';
import {
  authorizationStatsPatterns,
  type AuthorizationStats,
  type AuthorizationStatsBucket,
  type AuthorizationStatsRequest,
  type ConnectionTotals,
} from '@switchyard/contracts';
import { DashboardAuthGuard, SignedIn } from './dashboard-auth.guard';
import { DASHBOARD, type DashboardDependencies } from './dashboard-dependencies';
import { merchantAccountQuery, queryOf } from './dashboard-query';

const MINUTE_MS = 60_000;
export const CHART_MINUTES = 60;

export interface AuthorizationChart extends AuthorizationStats {
  readonly connections: ConnectionTotals[];
}

@Controller('dashboard/api/stats')
@UseGuards(DashboardAuthGuard)
export class DashboardStatsController {
  constructor(@Inject(DASHBOARD) private readonly dashboard: DashboardDependencies) {}

  @Get('authorizations')
  @SignedIn('transactions.read')
  async authorizations(@Query() query: unknown): Promise<AuthorizationChart> {
    const { merchant_account_id: merchantAccountId } = queryOf(merchantAccountQuery, query);
    // The last 60 whole minutes and the current one, so the newest bar fills as it goes.
    const to = (Math.floor((this.dashboard.now ?? Date.now)() / MINUTE_MS) + 1) * MINUTE_MS;
    const request: AuthorizationStatsRequest = {
      merchant_account_id: merchantAccountId,
      from: new Date(to - (CHART_MINUTES + 1) * MINUTE_MS).toISOString(),
      to: new Date(to).toISOString(),
    };
    const stats = await this.dashboard.rpc.call<AuthorizationStats>(authorizationStatsPatterns.perMinute, request);
    return { ...stats, connections: totalsOf(stats.buckets) };
  }
}

export function totalsOf(buckets: readonly AuthorizationStatsBucket[]): ConnectionTotals[] {
  const byConnection = new Map<string, AuthorizationStatsBucket[]>();
  for (const bucket of buckets)
    byConnection.set(bucket.payment_service_id, [...(byConnection.get(bucket.payment_service_id) ?? []), bucket]);
  return [...byConnection].map(([paymentServiceId, own]) => {
    const attempts = own.reduce((sum, bucket) => sum + bucket.attempts, 0);
    const succeeded = own.reduce((sum, bucket) => sum + bucket.succeeded, 0);
    return {
      payment_service_id: paymentServiceId,
      attempts,
      succeeded,
      success_rate: attempts === 0 ? 0 : succeeded / attempts,
      latency_ms_avg:
        attempts === 0
          ? 0
          : Math.round(own.reduce((sum, bucket) => sum + bucket.latency_ms_avg * bucket.attempts, 0) / attempts),
      latency_ms_max: Math.max(0, ...own.map((bucket) => bucket.latency_ms_max)),
    };
  });
}
