export * from './subscription-directory';
export * from './webhooks-service';
export { WebhookSubscriptions } from './subscriptions/webhook-subscriptions.slice';
export { loadWebhooksKey } from './subscriptions/secret-box';
export * from './webhooks-relay';
