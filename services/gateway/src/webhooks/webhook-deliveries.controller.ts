import { Controller, Inject } from '@nestjs/common';
import { Endpoint, pageQuery, type Page } from '@switchyard/api';
import {
  webhookDeliveriesSchema,
  webhookDeliveryListQuerySchema,
  webhookDeliverySchema,
  webhookPatterns,
  webhookReplayRangeSchema,
  webhookReplayResultSchema,
  type WebhookDelivery,
  type WebhookReplayRangeInput,
  type WebhookReplayResult,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import type { z } from 'zod';
import { CallerOf, type Caller } from '../auth/caller';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';
import {
  byDelivery,
  bySubscription,
  read,
  subscriptionRef,
  tags,
  withCursor,
  write,
  type ByDelivery,
  type BySubscription,
  type WebhookDeliveryListRequest,
  type WebhookDeliveryRef,
  type WebhookReplayRangeRequest,
} from './webhook-http';

const deliveriesQuery = pageQuery({ maxLimit: 100 }).extend(webhookDeliveryListQuerySchema.shape);
type DeliveriesQuery = z.infer<typeof deliveriesQuery>;

/** The deliveries of a webhook subscription (every attempt of each), and replays: of one delivery, or of a time range. */
@Controller()
export class WebhookDeliveriesController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'list_webhook_deliveries',
    method: 'GET',
    path: '/webhook-subscriptions/{subscription_id}/deliveries',
    summary: "List a webhook subscription's deliveries, newest first, filtered by `status` and `event_name`",
    tags,
    auth: read,
    params: bySubscription,
    query: deliveriesQuery,
    status: 200,
    response: { description: 'A page of deliveries', schema: webhookDeliveriesSchema },
  })
  list(
    @Input() input: EndpointInput<DeliveriesQuery, unknown, BySubscription>,
    @CallerOf() caller: Caller,
  ): Promise<Page<WebhookDelivery>> {
    const { status, event_name: eventName } = input.query;
    const request: WebhookDeliveryListRequest = {
      ...subscriptionRef(caller, input.params),
      limit: input.query.limit,
      ...withCursor(input.query),
      ...(status !== undefined ? { status } : {}),
      ...(eventName !== undefined ? { event_name: eventName } : {}),
    };
    return this.rpc.call(webhookPatterns.deliveries, request);
  }

  @Endpoint({
    operationId: 'get_webhook_delivery',
    method: 'GET',
    path: '/webhook-subscriptions/{subscription_id}/deliveries/{delivery_id}',
    summary: 'Get a delivery with its attempts',
    tags,
    auth: read,
    params: byDelivery,
    status: 200,
    response: { description: 'The delivery', schema: webhookDeliverySchema },
  })
  get(
    @Input() input: EndpointInput<unknown, unknown, ByDelivery>,
    @CallerOf() caller: Caller,
  ): Promise<WebhookDelivery> {
    const request: WebhookDeliveryRef = {
      ...subscriptionRef(caller, input.params),
      delivery_id: input.params.delivery_id,
    };
    return this.rpc.call(webhookPatterns.delivery, request);
  }

  @Endpoint({
    operationId: 'replay_webhook_delivery',
    method: 'POST',
    path: '/webhook-subscriptions/{subscription_id}/deliveries/{delivery_id}/replay',
    summary: 'Deliver an event again, now, under the same webhook id (receivers that deduplicate on it see it once)',
    tags,
    auth: write,
    params: byDelivery,
    status: 200,
    response: { description: 'The delivery, scheduled again', schema: webhookDeliverySchema },
  })
  replay(
    @Input() input: EndpointInput<unknown, unknown, ByDelivery>,
    @CallerOf() caller: Caller,
  ): Promise<WebhookDelivery> {
    const request: WebhookDeliveryRef = {
      ...subscriptionRef(caller, input.params),
      delivery_id: input.params.delivery_id,
    };
    return this.rpc.call(webhookPatterns.replayEvent, request);
  }

  @Endpoint({
    operationId: 'replay_webhook_range',
    method: 'POST',
    path: '/webhook-subscriptions/{subscription_id}/replay',
    summary:
      'Deliver again every event of a time range the subscription wants, `limit` at a time; pass `next_cursor` back until it is null',
    tags,
    auth: write,
    params: bySubscription,
    body: webhookReplayRangeSchema,
    status: 200,
    response: {
      description: 'How many deliveries were scheduled, and where to continue',
      schema: webhookReplayResultSchema,
    },
  })
  replayRange(
    @Input() input: EndpointInput<unknown, WebhookReplayRangeInput, BySubscription>,
    @CallerOf() caller: Caller,
  ): Promise<WebhookReplayResult> {
    const request: WebhookReplayRangeRequest = { ...subscriptionRef(caller, input.params), body: input.body };
    return this.rpc.call(webhookPatterns.replayRange, request);
  }
}
