/** The gateway's checkout session endpoints. */
export { CheckoutSessionsController } from './checkout-sessions.controller';
export { CheckoutSessionFieldsController } from './checkout-session-fields.controller';
