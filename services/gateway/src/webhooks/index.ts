export { WebhookSubscriptionsController } from './webhook-subscriptions.controller';
export { WebhookDeliveriesController } from './webhook-deliveries.controller';
