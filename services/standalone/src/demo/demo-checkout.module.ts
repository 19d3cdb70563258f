import { Module, type DynamicModule } from '@nestjs/common';
import type { DemoCheckout } from './demo-checkout';
import { DEMO_CHECKOUT, DemoCheckoutController } from './demo-checkout.controller';

/** The demo checkout's routes, added to the gateway by the embedded runtime (`GatewayRuntime.modules`). */
@Module({})
export class DemoCheckoutModule {
  static register(demo: DemoCheckout): DynamicModule {
    return {
      module: DemoCheckoutModule,
      controllers: [DemoCheckoutController],
      providers: [{ provide: DEMO_CHECKOUT, useValue: demo }],
    };
  }
}
