export * from './subscription-directory';
export * from './webhooks-service';
export { WebhookSubscriptions } from './subscriptions/webhook-subscriptions.slice';
export { loadWebhooksKey } from './subscriptions/secret-box';
export * from './webhooks-relay';
export {
  loadWebhooksKeyRing,
  webhooksKeyId,
  WEBHOOKS_RETIRED_KEYS_FILE,
  type WebhooksKeyRing,
} from './subscriptions/webhooks-keys';
export type { WebhooksKeyStatus } from './subscriptions/webhook-subscriptions.slice';
