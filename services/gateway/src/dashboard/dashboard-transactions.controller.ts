/** The dashboard's transactions: the filtered list, one transaction with its timeline, and the connections (filters, chart). */
import { Controller, Get, Inject, Param, Query, UseGuards } from '@nestjs/common';
import { pageQuery, type Page } from '@switchyard/api';
import {
  paymentServicePatterns,
  transactionListQuerySchema,
  transactionsPatterns,
  type PaymentService,
  type PaymentServiceListRequest,
  type Transaction,
  type TransactionListRequest,
  type TransactionSummary,
} from '@switchyard/contracts';
import { z } from 'zod';
import { DashboardAuthGuard, SignedIn } from './dashboard-auth.guard';
import { DASHBOARD, type DashboardDependencies } from './dashboard-dependencies';
import { merchantAccountQuery, pathOf, queryOf } from './dashboard-query';
import { transactionTimeline, type TimelineStep } from './transaction-timeline';

/** The API's list filters (status, connection, dates, amounts, …) and paging, for the merchant account the page shows. */
const listQuery = pageQuery({ maxLimit: 100, defaultLimit: 25 })
  .extend(transactionListQuerySchema.shape)
  .extend(merchantAccountQuery.shape);
const byTransaction = z.object({ transaction_id: z.uuid() });

export interface TransactionPage {
  readonly transaction: Transaction;
  readonly timeline: TimelineStep[];
  /** False when the transaction has more events than the timeline shows. */
  readonly timeline_complete: boolean;
}

@Controller('dashboard/api')
@UseGuards(DashboardAuthGuard)
export class DashboardTransactionsController {
  constructor(@Inject(DASHBOARD) private readonly dashboard: DashboardDependencies) {}

  @Get('transactions')
  @SignedIn('transactions.read')
  list(@Query() query: unknown): Promise<Page<TransactionSummary>> {
    const { cursor, limit, merchant_account_id: merchantAccountId, ...filters } = queryOf(listQuery, query);
    const request: TransactionListRequest = {
      ...Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined)),
      merchant_account_id: merchantAccountId,
      limit,
      ...(cursor ? { cursor } : {}),
    };
    return this.dashboard.rpc.call(transactionsPatterns.list, request);
  }

  @Get('transactions/:transaction_id')
  @SignedIn('transactions.read')
  async get(@Param() params: unknown, @Query() query: unknown): Promise<TransactionPage> {
    const { transaction_id: transactionId } = pathOf(byTransaction, params);
    const { merchant_account_id: merchantAccountId } = queryOf(merchantAccountQuery, query);
    const transaction = await this.dashboard.rpc.call<Transaction>(transactionsPatterns.get, {
      merchant_account_id: merchantAccountId,
      transaction_id: transactionId,
    });
    const timeline = await transactionTimeline(this.dashboard.rpc, merchantAccountId, transactionId);
    return { transaction, timeline: timeline.steps, timeline_complete: timeline.complete };
  }

  @Get('payment-services')
  @SignedIn('payment-services.read')
  paymentServices(@Query() query: unknown): Promise<Page<PaymentService>> {
    const { merchant_account_id: merchantAccountId } = queryOf(merchantAccountQuery, query);
    const request: PaymentServiceListRequest = { merchant_account_id: merchantAccountId, limit: 100 };
    return this.dashboard.rpc.call(paymentServicePatterns.list, request);
  }
}
