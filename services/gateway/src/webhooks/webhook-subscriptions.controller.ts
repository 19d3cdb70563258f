import { Controller, Inject } from '@nestjs/common';
import { Endpoint, pageQuery, type Page } from '@switchyard/api';
import {
  webhookPatterns,
  webhookSecretSchema,
  webhookSecretsSchema,
  webhookSubscriptionCreateSchema,
  webhookSubscriptionSchema,
  webhookSubscriptionsSchema,
  webhookSubscriptionUpdateSchema,
  type WebhookSecret,
  type WebhookSecretRef,
  type WebhookSubscription,
  type WebhookSubscriptionCreateInput,
  type WebhookSubscriptionCreateRequest,
  type WebhookSubscriptionListRequest,
  type WebhookSubscriptionUpdateInput,
  type WebhookSubscriptionUpdateRequest,
} from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import type { z } from 'zod';
import { CallerOf, type Caller } from '../auth/caller';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';
import {
  bySecret,
  bySubscription,
  billingDetailsOf,
  callerOf,
  read,
  subscriptionRef,
  tags,
  withCursor,
  write,
  type BySecret,
  type BySubscription,
} from './webhook-http';

const listQuery = pageQuery({ maxLimit: 100 });
type ListQuery = z.infer<typeof listQuery>;

/**
 * Webhook subscriptions of the request's merchant account (and, for the webhooks service to decide, instance-level
 * ones), and their signing secrets. A subscription the caller may not see is not found.
 */
@Controller()
export class WebhookSubscriptionsController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'list_webhook_subscriptions',
    method: 'GET',
    path: '/webhook-subscriptions',
    summary: 'List the webhook subscriptions, oldest first',
    tags,
    auth: read,
    query: listQuery,
    status: 200,
    response: { description: 'A page of webhook subscriptions', schema: webhookSubscriptionsSchema },
  })
  list(@Input() input: EndpointInput<ListQuery>, @CallerOf() caller: Caller): Promise<Page<WebhookSubscription>> {
    const request: WebhookSubscriptionListRequest = {
      ...callerOf(caller),
      limit: input.query.limit,
      ...withCursor(input.query),
    };
    return this.rpc.call(webhookPatterns.list, request);
  }

  @Endpoint({
    operationId: 'create_webhook_subscription',
    method: 'POST',
    path: '/webhook-subscriptions',
    summary:
      'Subscribe a URL to events (all of them, or those of `event_names`). Create a signing secret next to sign its deliveries',
    tags,
    auth: write,
    body: webhookSubscriptionCreateSchema,
    status: 201,
    response: { description: 'The webhook subscription', schema: webhookSubscriptionSchema },
  })
  create(
    @Input() input: EndpointInput<unknown, WebhookSubscriptionCreateInput>,
    @CallerOf() caller: Caller,
  ): Promise<WebhookSubscription> {
    const request: WebhookSubscriptionCreateRequest = {
      ...callerOf(caller),
      ...billingDetailsOf(caller),
      body: input.body,
    };
    return this.rpc.call(webhookPatterns.create, request);
  }

  @Endpoint({
    operationId: 'get_webhook_subscription',
    method: 'GET',
    path: '/webhook-subscriptions/{subscription_id}',
    summary: 'Get a webhook subscription',
    tags,
    auth: read,
    params: bySubscription,
    status: 200,
    response: { description: 'The webhook subscription', schema: webhookSubscriptionSchema },
  })
  get(
    @Input() input: EndpointInput<unknown, unknown, BySubscription>,
    @CallerOf() caller: Caller,
  ): Promise<WebhookSubscription> {
    return this.rpc.call(webhookPatterns.get, subscriptionRef(caller, input.params));
  }

  @Endpoint({
    operationId: 'update_webhook_subscription',
    method: 'PUT',
    path: '/webhook-subscriptions/{subscription_id}',
    summary: 'Update a webhook subscription: only the fields sent change, null clears',
    tags,
    auth: write,
    params: bySubscription,
    body: webhookSubscriptionUpdateSchema,
    status: 200,
    response: { description: 'The webhook subscription', schema: webhookSubscriptionSchema },
  })
  update(
    @Input() input: EndpointInput<unknown, WebhookSubscriptionUpdateInput, BySubscription>,
    @CallerOf() caller: Caller,
  ): Promise<WebhookSubscription> {
    const request: WebhookSubscriptionUpdateRequest = {
      ...subscriptionRef(caller, input.params),
      ...billingDetailsOf(caller),
      body: input.body,
    };
    return this.rpc.call(webhookPatterns.update, request);
  }

  @Endpoint({
    operationId: 'delete_webhook_subscription',
    method: 'DELETE',
    path: '/webhook-subscriptions/{subscription_id}',
    summary: 'Delete a webhook subscription: nothing more is delivered to it, and it is not found afterwards',
    tags,
    auth: write,
    params: bySubscription,
    status: 204,
    response: { description: 'Deleted' },
  })
  async delete(
    @Input() input: EndpointInput<unknown, unknown, BySubscription>,
    @CallerOf() caller: Caller,
  ): Promise<void> {
    await this.rpc.call(webhookPatterns.delete, subscriptionRef(caller, input.params));
  }

  @Endpoint({
    operationId: 'list_webhook_secrets',
    method: 'GET',
    path: '/webhook-subscriptions/{subscription_id}/secrets',
    summary: "List a webhook subscription's signing secrets, masked, revoked ones included",
    tags,
    auth: read,
    params: bySubscription,
    status: 200,
    response: { description: 'The signing secrets', schema: webhookSecretsSchema },
  })
  secrets(
    @Input() input: EndpointInput<unknown, unknown, BySubscription>,
    @CallerOf() caller: Caller,
  ): Promise<{ items: WebhookSecret[] }> {
    return this.rpc.call(webhookPatterns.secretsList, subscriptionRef(caller, input.params));
  }

  @Endpoint({
    operationId: 'create_webhook_secret',
    method: 'POST',
    path: '/webhook-subscriptions/{subscription_id}/secrets',
    summary:
      'Create a signing secret: returned in full in this answer only. Every active secret signs each delivery, so a secret is rotated by creating the new one, updating the receiver, then revoking the old one',
    tags,
    auth: write,
    params: bySubscription,
    status: 201,
    response: { description: 'The signing secret, with `secret` set (this once)', schema: webhookSecretSchema },
  })
  createSecret(
    @Input() input: EndpointInput<unknown, unknown, BySubscription>,
    @CallerOf() caller: Caller,
  ): Promise<WebhookSecret> {
    return this.rpc.call(webhookPatterns.secretCreate, subscriptionRef(caller, input.params));
  }

  @Endpoint({
    operationId: 'revoke_webhook_secret',
    method: 'DELETE',
    path: '/webhook-subscriptions/{subscription_id}/secrets/{secret_id}',
    summary: 'Revoke a signing secret: deliveries stop carrying its signature',
    tags,
    auth: write,
    params: bySecret,
    status: 204,
    response: { description: 'Revoked' },
  })
  async revokeSecret(
    @Input() input: EndpointInput<unknown, unknown, BySecret>,
    @CallerOf() caller: Caller,
  ): Promise<void> {
    const request: WebhookSecretRef = { ...subscriptionRef(caller, input.params), secret_id: input.params.secret_id };
    await this.rpc.call(webhookPatterns.secretRevoke, request);
  }
}
