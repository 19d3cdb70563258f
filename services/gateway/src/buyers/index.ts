/** The gateway's buyer endpoints. */
export { BuyersController } from './buyers.controller';
export { ShippingDetailsController } from './shipping-details.controller';
