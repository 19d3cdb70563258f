import { Module, type DynamicModule } from '@nestjs/common';
import { DashboardApiKeysController } from './dashboard-api-keys.controller';
import { DashboardAuthGuard } from './dashboard-auth.guard';
import { DASHBOARD, type DashboardDependencies } from './dashboard-dependencies';
import { DashboardPageController } from './dashboard-page.controller';
import { DashboardSessionController } from './dashboard-session.controller';
import { DashboardStatsController } from './dashboard-stats.controller';
import { DashboardTransactionsController } from './dashboard-transactions.controller';
import { DashboardWebhooksController } from './dashboard-webhooks.controller';

/** The operator dashboard (docs/dashboard.md): its page at `/dashboard` and its backend at `/dashboard/api/...`. */
@Module({})
export class DashboardModule {
  static register(dependencies: DashboardDependencies): DynamicModule {
    return {
      module: DashboardModule,
      controllers: [
        DashboardPageController,
        DashboardSessionController,
        DashboardTransactionsController,
        DashboardWebhooksController,
        DashboardApiKeysController,
        DashboardStatsController,
      ],
      providers: [{ provide: DASHBOARD, useValue: dependencies }, DashboardAuthGuard],
    };
  }
}
