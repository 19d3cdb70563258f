/**
 * Authorization rate and latency per connection and minute (the operator dashboard's chart): a query over its own
 * read model, answered over RPC (`authorizationStatsPatterns`). No API endpoint: the dashboard asks for it.
 */
import { ApiError } from '@switchyard/api';
import {
  authorizationStatsPatterns,
  type AuthorizationStats,
  type AuthorizationStatsRequest,
} from '@switchyard/contracts';
import type { RpcHandlers } from '@switchyard/rpc';
import type { TransactionsContext, TransactionsSlice } from '../transactions-context';
import { AuthorizationStatsReadModel } from './authorization-stats.read-model';

/** A day of minutes at most per question: the chart asks for an hour. */
const MAX_RANGE_MS = 24 * 60 * 60 * 1000;

export class AuthorizationStatsSlice implements TransactionsSlice {
  readonly readModel: AuthorizationStatsReadModel;

  constructor(private readonly context: TransactionsContext) {
    this.readModel = new AuthorizationStatsReadModel(context.db);
  }

  get projection() {
    return this.readModel.projection;
  }

  perMinute(request: AuthorizationStatsRequest): AuthorizationStats {
    const from = new Date(request.from);
    const to = new Date(request.to);
    if (
      Number.isNaN(from.getTime()) ||
      Number.isNaN(to.getTime()) ||
      from >= to ||
      to.getTime() - from.getTime() > MAX_RANGE_MS
    ) {
      throw ApiError.badRequest('invalid time range', [
        {
          location: 'query',
          pointer: '/from',
          message: 'from and to must be date-times, from before to, at most a day apart',
          type: 'invalid_range',
        },
      ]);
    }
    return {
      from: from.toISOString(),
      to: to.toISOString(),
      buckets: this.readModel.perMinuteBuckets(request.merchant_account_id, from, to),
    };
  }

  rpcHandlers(): RpcHandlers {
    return {
      [authorizationStatsPatterns.perMinute]: async (payload) => {
        await this.context.catchUp();
        return this.perMinute(payload as AuthorizationStatsRequest);
      },
    };
  }
}
