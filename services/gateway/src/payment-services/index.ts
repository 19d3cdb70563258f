export { PaymentServicesController } from './payment-services.controller';
export { PaymentServiceDefinitionsController } from './payment-service-definitions.controller';
