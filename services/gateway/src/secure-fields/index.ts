/** The secure fields: their scripts and frame page, and the card details their card number frame asks for. */
export { CheckoutSessionCardDetailsController } from './card-details.controller';
export { SecureFieldsController } from './secure-fields.controller';
