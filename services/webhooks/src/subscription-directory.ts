import type { WebhookCaller } from '@switchyard/contracts';

/**
 * What delivery needs to know about subscriptions: which ones want an event, and the secrets that sign for them.
 * The subscriptions slice implements it; the delivery slice only reads through it.
 */
export interface SubscriptionTarget {
  readonly id: string;
  readonly url: string;
  /** null: instance level (every merchant account). */
  readonly merchantAccountId: string | null;
  /** null: every event. */
  readonly eventNames: readonly string[] | null;
  readonly active: boolean;
  readonly basicAuth: { readonly username: string; readonly password: string } | null;
  /** Whether payloads keep buyers' billing details; absent: they are sent as null. */
  readonly billingDetails?: boolean;
}

export interface SubscriptionDirectory {
  /** Active subscriptions that want `eventName` for `merchantAccountId` (instance-level ones included). */
  matching(merchantAccountId: string | null, eventName: string): readonly SubscriptionTarget[];
  /** The subscription, active or not; null when deleted or unknown. */
  find(subscriptionId: string): SubscriptionTarget | null;
  /** The secrets that sign deliveries right now (several during a rotation); empty: deliveries go unsigned. */
  activeSecrets(subscriptionId: string): readonly { readonly id: string; readonly secret: string }[];
}

/**
 * Whether the RPC caller may see a subscription (and so its deliveries): the request's merchant account's own, and
 * instance-level ones (`merchantAccountId: null`) when the caller's key is not limited to some merchant accounts.
 * Anything else is answered as not found.
 */
export function visibleTo(caller: WebhookCaller, subscription: Pick<SubscriptionTarget, 'merchantAccountId'>): boolean {
  const limited = (caller.caller_merchant_account_ids ?? []).length > 0;
  return subscription.merchantAccountId === null
    ? !limited
    : subscription.merchantAccountId === caller.merchant_account_id;
}
