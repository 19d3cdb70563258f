/**
 * Webhook subscriptions, their signing secrets and deliveries on the wire, the delivered event object and its
 * headers, and the webhooks service's RPC patterns.
 */
import { z } from 'zod';

export const webhooksTopic = 'webhooks.events';

export const webhookPatterns = {
  ping: 'webhooks.ping',
  list: 'webhooks.subscriptions.list',
  get: 'webhooks.subscriptions.get',
  create: 'webhooks.subscriptions.create',
  update: 'webhooks.subscriptions.update',
  delete: 'webhooks.subscriptions.delete',
  secretsList: 'webhooks.secrets.list',
  secretCreate: 'webhooks.secrets.create',
  secretRevoke: 'webhooks.secrets.revoke',
  deliveries: 'webhooks.deliveries.list',
  delivery: 'webhooks.deliveries.get',
  replayEvent: 'webhooks.replay.event',
  replayRange: 'webhooks.replay.range',
} as const;

/**
 * Delivery headers and signatures: `@switchyard/webhook-signature` (the reference's `X-Gr4vy-Webhook-*`, with the
 * service's prefix).
 */

const timestamp = z.iso.datetime({ offset: true });

/** Every public event name the services emit (docs/events.md). */
export const webhookEventNames = [
  'transaction.authentication-pending',
  'transaction.authenticated',
  'transaction.authorized',
  'transaction.captured',
  'transaction.capture-pending',
  'transaction.capture-failed',
  'transaction.declined',
  'transaction.failed',
  'transaction.modified',
  'transaction.voided',
  'transaction.void-declined',
  'transaction.void-failed',
  'transaction.late-authorization-received',
  'transaction.late-authorization-reversed',
  'capture.pending',
  'capture.succeeded',
  'capture.declined',
  'capture.failed',
  'refund.pending',
  'refund.succeeded',
  'refund.declined',
  'refund.failed',
  'api-key-pair.created',
  'api-key-pair.updated',
  'api-key-pair.deleted',
] as const;
export type WebhookEventName = (typeof webhookEventNames)[number];

// ---- subscriptions ------------------------------------------------------------------------------------------

const basicAuthInput = z
  .object({ username: z.string().min(1).max(200), password: z.string().min(1).max(200).meta({ writeOnly: true }) })
  .strict()
  .meta({
    id: 'WebhookBasicAuth',
    description: 'Sent as `Authorization: Basic …` with every delivery. The password is never returned.',
  });

const subscriptionShape = {
  url: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .meta({ description: 'http(s). Loopback and private addresses only when WEBHOOK_ALLOW_PRIVATE_URLS is on.' }),
  event_names: z
    .array(z.enum(webhookEventNames))
    .max(webhookEventNames.length)
    .nullish()
    .meta({ description: 'The events wanted; null or absent: all of them.' }),
  merchant_account_id: z
    .string()
    .min(1)
    .max(200)
    .nullish()
    .meta({ description: 'null: instance level (every merchant account). Else that account only.' }),
  active: z.boolean().optional(),
  basic_auth: basicAuthInput.nullish(),
  description: z.string().max(500).nullish(),
};

export const webhookSubscriptionCreateSchema = z
  .object(subscriptionShape)
  .strict()
  .meta({ id: 'WebhookSubscriptionCreate' });
export const webhookSubscriptionUpdateSchema = z
  .object({ ...subscriptionShape, url: subscriptionShape.url.optional() })
  .strict()
  .meta({ id: 'WebhookSubscriptionUpdate', description: 'Only the fields sent change; null clears.' });

export type WebhookSubscriptionCreateInput = z.infer<typeof webhookSubscriptionCreateSchema>;
export type WebhookSubscriptionUpdateInput = z.infer<typeof webhookSubscriptionUpdateSchema>;

export const webhookSubscriptionSchema = z
  .object({
    type: z.literal('webhook-subscription'),
    id: z.uuid(),
    url: z.string(),
    event_names: z.array(z.string()).nullable(),
    merchant_account_id: z.string().nullable(),
    active: z.boolean(),
    basic_auth: z.object({ username: z.string() }).nullable(),
    description: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'WebhookSubscription' });
export type WebhookSubscription = z.infer<typeof webhookSubscriptionSchema>;

export const webhookSubscriptionsSchema = z
  .object({
    items: z.array(webhookSubscriptionSchema),
    limit: z.int(),
    next_cursor: z.string().nullable(),
    previous_cursor: z.string().nullable(),
  })
  .meta({ id: 'WebhookSubscriptions' });

// ---- signing secrets ----------------------------------------------------------------------------------------

export const webhookSecretSchema = z
  .object({
    type: z.literal('webhook-secret'),
    id: z.uuid(),
    subscription_id: z.uuid(),
    /** Only in the answer to its creation; afterwards masked. */
    secret: z.string().nullable().meta({ description: 'The secret, returned once at creation; null afterwards.' }),
    masked: z.string().meta({ description: 'The last four characters, e.g. `••••Ab3x`.' }),
    active: z.boolean(),
    created_at: timestamp,
    revoked_at: timestamp.nullable(),
  })
  .meta({ id: 'WebhookSecret' });
export type WebhookSecret = z.infer<typeof webhookSecretSchema>;

export const webhookSecretsSchema = z.object({ items: z.array(webhookSecretSchema) }).meta({ id: 'WebhookSecrets' });

// ---- the event object and deliveries --------------------------------------------------------------------------

/** What a subscriber receives: the reference's payload (`type: "event"`), `target` as the API returns the resource. */
export interface WebhookEvent {
  readonly type: 'event';
  readonly id: string;
  readonly name: string;
  readonly created_at: string;
  readonly merchant_account_id: string | null;
  readonly target: Readonly<Record<string, unknown>>;
}

export const deliveryStatusValues = ['pending', 'retrying', 'succeeded', 'failed'] as const;

export const webhookAttemptSchema = z.object({
  attempted_at: timestamp,
  response_status: z
    .int()
    .nullable()
    .meta({ description: 'The receiver’s HTTP status; null: no answer (timeout, refused).' }),
  error: z.string().nullable(),
  duration_ms: z.int(),
});

export const webhookDeliverySchema = z
  .object({
    type: z.literal('webhook-delivery'),
    id: z.string().meta({ description: 'The webhook id: the same on every attempt and replay of this delivery.' }),
    subscription_id: z.uuid(),
    event_id: z.string(),
    event_name: z.string(),
    resource_id: z.string(),
    status: z.enum(deliveryStatusValues),
    attempts: z.array(webhookAttemptSchema),
    next_attempt_at: timestamp.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

export const webhookDeliveriesSchema = z
  .object({
    items: z.array(webhookDeliverySchema),
    limit: z.int(),
    next_cursor: z.string().nullable(),
    previous_cursor: z.string().nullable(),
  })
  .meta({ id: 'WebhookDeliveries' });

export const webhookDeliveryListQuerySchema = z.object({
  status: z.enum(deliveryStatusValues).optional(),
  event_name: z.string().max(100).optional(),
});

export const webhookReplayRangeSchema = z
  .object({
    from: timestamp.meta({ description: 'Events created at or after this time.' }),
    to: timestamp.meta({ description: 'Events created at or before this time.' }),
    cursor: z.string().nullish().meta({ description: 'From a previous answer: continue the replay.' }),
    limit: z.int().min(1).max(1000).default(500),
  })
  .strict()
  .meta({ id: 'WebhookReplayRange' });
export type WebhookReplayRangeInput = z.infer<typeof webhookReplayRangeSchema>;

export const webhookReplayResultSchema = z
  .object({
    type: z.literal('webhook-replay'),
    scheduled: z.int().meta({ description: 'Deliveries scheduled again by this call.' }),
    next_cursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass back to replay the rest of the range; null when done.' }),
  })
  .meta({ id: 'WebhookReplay' });
export type WebhookReplayResult = z.infer<typeof webhookReplayResultSchema>;

// ---- RPC payloads ---------------------------------------------------------------------------------------------

/**
 * Who asks, on every subscription and secret RPC. What the caller sees: the subscriptions of the request's merchant
 * account, and the instance-level ones (`merchant_account_id: null`) when the caller's key is not limited to some
 * merchant accounts. A subscription of another merchant account is not found (404), whatever the key; so is an
 * instance-level one for a key limited to some accounts (it would receive every account's events).
 */
export interface WebhookCaller {
  /** The request's merchant account (the header; `default` when absent). */
  readonly merchant_account_id: string;
  /**
   * The merchant accounts the caller's key is limited to (`Caller.merchantAccountIds`); empty or absent: every account.
   */
  readonly caller_merchant_account_ids?: readonly string[];
  /**
   * Whether the caller reads buyers' billing details (`buyers.billing-details.read`, token and key): a subscription it
   * creates or changes sends them in payloads, else `null` (issue 22, item 4).
   */
  readonly billing_details_visible?: boolean;
}

export interface WebhookSubscriptionRef extends WebhookCaller {
  readonly subscription_id: string;
}

/** `webhooks.subscriptions.list`: oldest first, paged. */
export interface WebhookSubscriptionListRequest extends WebhookCaller {
  readonly limit: number;
  readonly cursor?: string | null;
}

/** `webhooks.subscriptions.create`. */
export interface WebhookSubscriptionCreateRequest extends WebhookCaller {
  readonly body: WebhookSubscriptionCreateInput;
}

/** `webhooks.subscriptions.update`. */
export interface WebhookSubscriptionUpdateRequest extends WebhookSubscriptionRef {
  readonly body: WebhookSubscriptionUpdateInput;
}

/** `webhooks.secrets.revoke`. (`webhooks.secrets.list` and `.create` take a `WebhookSubscriptionRef`.) */
export interface WebhookSecretRef extends WebhookSubscriptionRef {
  readonly secret_id: string;
}
