/** The dashboard's webhook subscriptions: the list, each one's deliveries with their attempts, and replaying a delivery. */
import { Controller, Get, HttpCode, Inject, Param, Post, Query, UseGuards } from '@nestjs/common';
import { pageQuery, type Page } from '@switchyard/api';
import {
  webhookDeliveryListQuerySchema,
  webhookPatterns,
  type WebhookDelivery,
  type WebhookSubscription,
  type WebhookSubscriptionListRequest,
  type WebhookSubscriptionRef,
} from '@switchyard/contracts';
import { z } from 'zod';
import { DashboardAuthGuard, SignedIn } from './dashboard-auth.guard';
import { DASHBOARD, type DashboardDependencies } from './dashboard-dependencies';
import { merchantAccountQuery, pathOf, queryOf } from './dashboard-query';

const bySubscription = z.object({ subscription_id: z.uuid() });
const byDelivery = bySubscription.extend({ delivery_id: z.string().min(1).max(200) });
const deliveriesQuery = pageQuery({ maxLimit: 100, defaultLimit: 25 })
  .extend(webhookDeliveryListQuerySchema.shape)
  .extend(merchantAccountQuery.shape);

/**
 * What the webhooks service is told of the caller: the merchant account the page shows, and no account limit (a dashboard
 * user reaches every account, so it also sees the instance-level subscriptions, as an unlimited API key does).
 */
const subscriptionRef = (merchantAccountId: string, subscriptionId: string): WebhookSubscriptionRef => ({
  merchant_account_id: merchantAccountId,
  caller_merchant_account_ids: [],
  subscription_id: subscriptionId,
});

@Controller('dashboard/api/webhook-subscriptions')
@UseGuards(DashboardAuthGuard)
export class DashboardWebhooksController {
  constructor(@Inject(DASHBOARD) private readonly dashboard: DashboardDependencies) {}

  @Get()
  @SignedIn('webhook-subscriptions.read')
  list(@Query() query: unknown): Promise<Page<WebhookSubscription>> {
    const { merchant_account_id: merchantAccountId } = queryOf(merchantAccountQuery, query);
    const request: WebhookSubscriptionListRequest = {
      merchant_account_id: merchantAccountId,
      caller_merchant_account_ids: [],
      limit: 100,
    };
    return this.dashboard.rpc.call(webhookPatterns.list, request);
  }

  @Get(':subscription_id')
  @SignedIn('webhook-subscriptions.read')
  get(@Param() params: unknown, @Query() query: unknown): Promise<WebhookSubscription> {
    const { subscription_id: subscriptionId } = pathOf(bySubscription, params);
    const { merchant_account_id: merchantAccountId } = queryOf(merchantAccountQuery, query);
    return this.dashboard.rpc.call(webhookPatterns.get, subscriptionRef(merchantAccountId, subscriptionId));
  }

  @Get(':subscription_id/deliveries')
  @SignedIn('webhook-subscriptions.read')
  deliveries(@Param() params: unknown, @Query() query: unknown): Promise<Page<WebhookDelivery>> {
    const { subscription_id: subscriptionId } = pathOf(bySubscription, params);
    const {
      merchant_account_id: merchantAccountId,
      limit,
      cursor,
      status,
      event_name: eventName,
    } = queryOf(deliveriesQuery, query);
    return this.dashboard.rpc.call(webhookPatterns.deliveries, {
      ...subscriptionRef(merchantAccountId, subscriptionId),
      limit,
      ...(cursor ? { cursor } : {}),
      ...(status !== undefined ? { status } : {}),
      ...(eventName !== undefined ? { event_name: eventName } : {}),
    });
  }

  @Get(':subscription_id/deliveries/:delivery_id')
  @SignedIn('webhook-subscriptions.read')
  delivery(@Param() params: unknown, @Query() query: unknown): Promise<WebhookDelivery> {
    const { subscription_id: subscriptionId, delivery_id: deliveryId } = pathOf(byDelivery, params);
    const { merchant_account_id: merchantAccountId } = queryOf(merchantAccountQuery, query);
    return this.dashboard.rpc.call(webhookPatterns.delivery, {
      ...subscriptionRef(merchantAccountId, subscriptionId),
      delivery_id: deliveryId,
    });
  }

  /** Delivers the event again now, under the same webhook id (the existing replay); answers the delivery, scheduled again. */
  @Post(':subscription_id/deliveries/:delivery_id/replay')
  @HttpCode(200)
  @SignedIn('webhook-subscriptions.write')
  replay(@Param() params: unknown, @Query() query: unknown): Promise<WebhookDelivery> {
    const { subscription_id: subscriptionId, delivery_id: deliveryId } = pathOf(byDelivery, params);
    const { merchant_account_id: merchantAccountId } = queryOf(merchantAccountQuery, query);
    return this.dashboard.rpc.call(webhookPatterns.replayEvent, {
      ...subscriptionRef(merchantAccountId, subscriptionId),
      delivery_id: deliveryId,
    });
  }
}
