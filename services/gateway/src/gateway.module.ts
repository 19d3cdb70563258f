import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import type { TokenVerifier } from '@switchyard/auth';
import type { RpcClient } from '@switchyard/rpc';
import { AccountUpdaterController } from './account-updater';
import { ApiKeyPairsController } from './api-key-pairs/api-key-pairs.controller';
import { AuthGuard } from './auth/auth.guard';
import type { CachedKeyDirectory } from './auth/cached-key-directory';
import type { KeyUsageRecorder } from './auth/key-usage-recorder';
import { CheckoutSessionFieldsController, CheckoutSessionsController } from './checkout-sessions';
import { DigitalWalletsController } from './digital-wallets';
import { BuyersController, ShippingDetailsController } from './buyers';
import { FlowRulesController } from './flows';
import { BuyerGiftCardsController, GiftCardsController } from './gift-cards';
import { HealthController } from './health/health.controller';
import { MerchantAccountsController } from './merchant-accounts/merchant-accounts.controller';
import { ThreeDsConfigurationsController } from './merchant-accounts/three-ds-configurations.controller';
import { ApiExceptionFilter } from './http/api-exception.filter';
import { OpenApiController } from './openapi/openapi.controller';
import { PaymentMethodsController } from './payment-methods/payment-methods.controller';
import { NetworkTokensController } from './payment-methods/network-tokens.controller';
import { PaymentServiceDefinitionsController, PaymentServicesController } from './payment-services';
import { RolesController } from './roles/roles.controller';
import {
  BuyerReturnController,
  CapturesController,
  ProviderNotificationsController,
  RefundsController,
  SettlementFilesController,
  TransactionsController,
} from './transactions';
import { KEY_DIRECTORY, KEY_USAGE, READINESS_CHECKS, RPC_CLIENT, TOKEN_VERIFIER, type ReadinessCheck } from './tokens';
import { WebhookDeliveriesController, WebhookSubscriptionsController } from './webhooks';

export interface GatewayDependencies {
  readonly rpc: RpcClient;
  readonly verifier: TokenVerifier;
  readonly readiness: readonly ReadinessCheck[];
  readonly keyDirectory: CachedKeyDirectory;
  readonly keyUsage: KeyUsageRecorder;
}

@Module({})
export class GatewayModule {
  static register(dependencies: GatewayDependencies): DynamicModule {
    return {
      module: GatewayModule,
      controllers: [
        HealthController,
        OpenApiController,
        RolesController,
        ApiKeyPairsController,
        MerchantAccountsController,
        ThreeDsConfigurationsController,
        PaymentServicesController,
        PaymentServiceDefinitionsController,
        FlowRulesController,
        GiftCardsController,
        AccountUpdaterController,
        BuyerGiftCardsController,
        BuyersController,
        ShippingDetailsController,
        PaymentMethodsController,
        NetworkTokensController,
        DigitalWalletsController,
        CheckoutSessionsController,
        CheckoutSessionFieldsController,
        TransactionsController,
        CapturesController,
        RefundsController,
        ProviderNotificationsController,
        BuyerReturnController,
        SettlementFilesController,
        WebhookSubscriptionsController,
        WebhookDeliveriesController,
      ],
      providers: [
        { provide: RPC_CLIENT, useValue: dependencies.rpc },
        { provide: TOKEN_VERIFIER, useValue: dependencies.verifier },
        { provide: READINESS_CHECKS, useValue: dependencies.readiness },
        { provide: KEY_DIRECTORY, useValue: dependencies.keyDirectory },
        { provide: KEY_USAGE, useValue: dependencies.keyUsage },
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
      ],
    };
  }
}
