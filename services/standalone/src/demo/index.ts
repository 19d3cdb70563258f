export * from './demo-checkout';
export * from './demo-checkout.module';
export { demoPageContentSecurityPolicy, otherOriginUrl, renderDemoCheckoutPage } from './demo-checkout.page';
