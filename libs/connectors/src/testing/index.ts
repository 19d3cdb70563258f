/** Test support for the real providers' connectors: their local fakes and the providers' documents they read. */
export { providerDocumentsDir, readProviderDocument, skipWithoutProviderDocuments } from './provider-documents';
export { OpenApiValidator } from './openapi-validator';
export {
  adyenScenarioAmounts,
  startAdyenFake,
  type AdyenNotificationDelivery,
  type RunningAdyenFake,
} from '../adyen/testing/adyen-fake';
export {
  startStripeFake,
  stripeScenarioAmounts,
  type RunningStripeFake,
  type StripeEventDelivery,
} from '../stripe/testing/stripe-fake';
