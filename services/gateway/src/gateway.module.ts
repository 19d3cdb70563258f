import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import type { TokenVerifier } from '@switchyard/auth';
import { InMemoryRateLimiter } from '@switchyard/kv';
import type { RpcClient } from '@switchyard/rpc';
import type { Logger } from 'pino';
import { AccountUpdaterController } from './account-updater';
import { ApiKeyPairsController } from './api-key-pairs/api-key-pairs.controller';
import { AuthGuard } from './auth/auth.guard';
import { BillingDetailsInterceptor } from './auth/billing-details';
import {
  DEFAULT_ENUMERATION_LIMIT_PER_MINUTE,
  ENUMERATION_LIMIT,
  EnumerationLimitGuard,
  type EnumerationLimitSettings,
} from './auth/enumeration-limit.guard';
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
import { ApiReferenceController } from './api-docs/api-reference.controller';
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
import {
  KEY_DIRECTORY,
  KEY_USAGE,
  READINESS_CHECKS,
  RPC_CLIENT,
  THREE_DS_CONFIGURATIONS,
  TOKEN_VERIFIER,
  type ReadinessCheck,
} from './tokens';
import type { ThreeDsConfigurationCache } from './merchant-accounts/three-ds-configuration-cache';
import { WebhookDeliveriesController, WebhookSubscriptionsController } from './webhooks';
import { CheckoutSessionCardDetailsController, SecureFieldsController } from './secure-fields';

export interface GatewayDependencies {
  readonly rpc: RpcClient;
  readonly verifier: TokenVerifier;
  readonly readiness: readonly ReadinessCheck[];
  readonly keyDirectory: CachedKeyDirectory;
  readonly keyUsage: KeyUsageRecorder;
  /** The merchant accounts' 3-D Secure configurations, forgotten by identity's events (`startGateway`). */
  readonly threeDsConfigurations: ThreeDsConfigurationCache;
  /** The enumeration-prevention rate limit (docs/rate-limits.md); absent: in memory, the default limit. */
  readonly enumerationLimit?: EnumerationLimitSettings;
  /** Modules a runtime adds beside the API (the embedded runtime's demo checkout): not API operations, not in the OpenAPI document. */
  readonly modules?: readonly DynamicModule[];
  /** METRICS_ENABLED: serve `GET /metrics` and count HTTP requests (default true). */
  readonly metricsEnabled?: boolean;
  /** Where the line of each completed request goes (with its request and correlation ids); absent: not logged. */
  readonly log?: Pick<Logger, 'info' | 'debug'>;
  /** TRUSTED_PROXIES: the peers whose X-Forwarded-For names the client; absent or empty: none. */
  readonly trustedProxies?: readonly string[];
}

@Module({})
export class GatewayModule {
  static register(dependencies: GatewayDependencies): DynamicModule {
    return {
      module: GatewayModule,
      imports: [...(dependencies.modules ?? [])],
      controllers: [
        HealthController,
        OpenApiController,
        ApiReferenceController,
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
        CheckoutSessionCardDetailsController,
        SecureFieldsController,
      ],
      providers: [
        { provide: RPC_CLIENT, useValue: dependencies.rpc },
        { provide: TOKEN_VERIFIER, useValue: dependencies.verifier },
        { provide: READINESS_CHECKS, useValue: dependencies.readiness },
        { provide: KEY_DIRECTORY, useValue: dependencies.keyDirectory },
        { provide: KEY_USAGE, useValue: dependencies.keyUsage },
        { provide: THREE_DS_CONFIGURATIONS, useValue: dependencies.threeDsConfigurations },
        { provide: APP_GUARD, useClass: AuthGuard },
        // After AuthGuard (global guards run in the order registered): it needs the authenticated caller.
        {
          provide: ENUMERATION_LIMIT,
          useFactory: (): EnumerationLimitSettings =>
            dependencies.enumerationLimit ?? {
              limiter: new InMemoryRateLimiter(),
              perMinute: DEFAULT_ENUMERATION_LIMIT_PER_MINUTE,
            },
        },
        { provide: APP_GUARD, useClass: EnumerationLimitGuard },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        { provide: APP_INTERCEPTOR, useClass: BillingDetailsInterceptor },
      ],
    };
  }
}
