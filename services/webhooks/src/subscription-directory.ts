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
}

export interface SubscriptionDirectory {
  /** Active subscriptions that want `eventName` for `merchantAccountId` (instance-level ones included). */
  matching(merchantAccountId: string | null, eventName: string): readonly SubscriptionTarget[];
  /** The subscription, active or not; null when deleted or unknown. */
  find(subscriptionId: string): SubscriptionTarget | null;
  /** The secrets that sign deliveries right now (several during a rotation); empty: deliveries go unsigned. */
  activeSecrets(subscriptionId: string): readonly { readonly id: string; readonly secret: string }[];
}
