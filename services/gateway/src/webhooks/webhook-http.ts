/**
 * What the webhook endpoints share: path parameters, scopes, the merchant account of the request, and the RPC
 * payloads sent to the webhooks service (snake_case, `merchant_account_id` in every one of them).
 */
import type { PageQuery } from '@switchyard/api';
import {
  DEFAULT_MERCHANT_ACCOUNT_ID,
  type WebhookCaller,
  type WebhookReplayRangeInput,
  type WebhookSubscriptionRef,
} from '@switchyard/contracts';
import { z } from 'zod';
import { mayReadBillingDetails } from '../auth/billing-details';
import type { Caller } from '../auth/caller';

export const tags = ['Webhooks'];
export const read = { anyOf: ['webhook-subscriptions.read'] };
export const write = { anyOf: ['webhook-subscriptions.write'] };

export const bySubscription = z.object({ subscription_id: z.uuid() });
export type BySubscription = z.infer<typeof bySubscription>;
export const bySecret = bySubscription.extend({ secret_id: z.uuid() });
export type BySecret = z.infer<typeof bySecret>;
/** A delivery id is the webhook id of the `x-service-webhook-id` header: opaque, not necessarily a uuid. */
export const byDelivery = bySubscription.extend({ delivery_id: z.string().min(1).max(200) });
export type ByDelivery = z.infer<typeof byDelivery>;

/** The merchant account of the request (header `x-service-merchant-account-id`, default `default`). */
export const accountOf = (caller: Caller): string => caller.merchantAccountId ?? DEFAULT_MERCHANT_ACCOUNT_ID;

// ---- RPC payloads (webhookPatterns) ---------------------------------------------------------------------------
// Subscriptions and secrets: the types of libs/contracts/src/webhooks.ts. Deliveries and replays: below, in the
// same shape (a `WebhookSubscriptionRef` and the route's own fields).

/** `webhooks.deliveries.list`: only the filters given. */
export interface WebhookDeliveryListRequest extends WebhookSubscriptionRef {
  readonly limit: number;
  readonly cursor?: string;
  readonly status?: string;
  readonly event_name?: string;
}

/** `webhooks.deliveries.get` and `webhooks.replay.event`. */
export interface WebhookDeliveryRef extends WebhookSubscriptionRef {
  readonly delivery_id: string;
}

/** `webhooks.replay.range`. */
export interface WebhookReplayRangeRequest extends WebhookSubscriptionRef {
  readonly body: WebhookReplayRangeInput;
}

/**
 * Who asks: the request's merchant account, and the accounts the caller's key is limited to (empty: every account,
 * which lets the webhooks service show instance-level subscriptions).
 */
export const callerOf = (caller: Caller): WebhookCaller => ({
  merchant_account_id: accountOf(caller),
  caller_merchant_account_ids: [...caller.merchantAccountIds],
});

/** For a create or an update: whether the caller reads billing details, so the subscription's payloads carry them. */
export const billingDetailsOf = (caller: Caller): { billing_details_visible: boolean } => ({
  billing_details_visible: mayReadBillingDetails(caller.scopes, caller.permissions),
});

export const subscriptionRef = (caller: Caller, params: BySubscription): WebhookSubscriptionRef => ({
  ...callerOf(caller),
  subscription_id: params.subscription_id,
});

/** `{cursor}` when the query has one, else nothing (the RPC payload leaves it out). */
export const withCursor = (query: PageQuery): { cursor?: string } => (query.cursor ? { cursor: query.cursor } : {});
