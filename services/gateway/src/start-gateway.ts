/**
 * Composes the gateway for either runtime: the key directory (asked of identity over RPC, invalidated by
 * `identity.events` on the bus), the verified-token cache (process-local, plus Redis when shared across gateway
 * instances), readiness checks, and the HTTP application.
 */
import { randomUUID } from 'node:crypto';
import type { DynamicModule } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  createSignatureVerifier,
  InMemoryVerifiedTokenCache,
  LayeredVerifiedTokenCache,
  TokenVerifier,
} from '@switchyard/auth';
import type { BusSubscription, MessageBus } from '@switchyard/bus';
import {
  giftCardPatterns,
  identityPatterns,
  identityTopic,
  transactionsPatterns,
  vaultPatterns,
  webhookPatterns,
  type EventMessage,
} from '@switchyard/contracts';
import { InMemoryKeyValueStore, InMemoryRateLimiter, type KeyValueStore, type RateLimiter } from '@switchyard/kv';
import type { RpcClient } from '@switchyard/rpc';
import type { Logger } from 'pino';
import { CachedKeyDirectory } from './auth/cached-key-directory';
import { ThreeDsConfigurationCache } from './merchant-accounts/three-ds-configuration-cache';
import { DEFAULT_ENUMERATION_LIMIT_PER_MINUTE } from './auth/enumeration-limit.guard';
import { KeyUsageRecorder } from './auth/key-usage-recorder';
import { createGatewayApp } from './create-gateway-app';
import { DashboardModule, DashboardSessions, DEFAULT_DASHBOARD_SETTINGS, type DashboardSettings } from './dashboard';
import { startMetricsServer } from '@switchyard/metrics';
import type { ReadinessCheck } from './tokens';

export interface GatewayRuntime {
  readonly rpc: RpcClient;
  readonly bus: MessageBus;
  /** Shared cache of verified tokens (Redis in the distributed runtime); absent: process-local only. */
  readonly sharedCache?: KeyValueStore;
  readonly clockSkewSeconds: number;
  readonly readiness?: readonly ReadinessCheck[];
  /** How often key usage (`last_used_at`) is sent to identity. */
  readonly keyUsageFlushMs: number;
  readonly onError?: (error: unknown, what: string) => void;
  /**
   * The enumeration-prevention rate limiter (docs/rate-limits.md): Redis with an in-memory fallback when gateway
   * processes share it (distributed); absent: one in memory, closed with the gateway (embedded).
   */
  readonly rateLimiter?: RateLimiter;
  /** ENUMERATION_RATE_LIMIT_PER_MINUTE: requests a minute per embed token and per checkout session (default 50). */
  readonly enumerationLimitPerMinute?: number;
  /** Modules served beside the API (the embedded runtime's demo checkout). */
  readonly modules?: readonly DynamicModule[];
  /**
   * The operator dashboard at /dashboard (docs/dashboard.md): its session settings (`dashboardSettingsFrom`), or false
   * when DASHBOARD_ENABLED is off; absent: on, with the default settings. Sessions live in `sharedCache` when there is
   * one (every gateway sees them), else in this process's memory.
   */
  readonly dashboard?: DashboardSettings | false;
  /**
   * JWT_VERIFY_WORKERS: worker threads checking token signatures off the event loop (`libs/auth/src/signature-pool.ts`);
   * absent: one per core; 0: inline on the main thread. The pool is closed by `stop()`.
   */
  readonly jwtVerifyWorkers?: number;
  /** METRICS_ENABLED: `GET /metrics` and the HTTP metrics (default true). */
  readonly metricsEnabled?: boolean;
  /** METRICS_PORT and HOST: where `/metrics` is served (never on the API's port); absent: nowhere. */
  readonly metrics?: { readonly host: string; readonly port: number };
  /** The process's logger: one line per completed request, with its request and correlation ids. */
  readonly log?: Pick<Logger, 'info' | 'debug'>;
  /** TRUSTED_PROXIES: the reverse proxies whose X-Forwarded-For names the client (docs/dashboard.md); absent: none. */
  readonly trustedProxies?: readonly string[];
}

export interface RunningGateway {
  readonly app: NestFastifyApplication;
  /** `http://host:port/metrics` on METRICS_PORT; null when metrics are served nowhere. */
  readonly metricsUrl: string | null;
  readonly keyUsage: KeyUsageRecorder;
  stop(): Promise<void>;
}

export async function startGateway(runtime: GatewayRuntime): Promise<RunningGateway> {
  const directory = new CachedKeyDirectory(runtime.rpc);
  const threeDsConfigurations = new ThreeDsConfigurationCache(runtime.rpc);
  // Every gateway instance must see every key and 3-D Secure configuration change, so each has its own consumer group.
  const subscription: BusSubscription = await runtime.bus.subscribe({
    groupId: `gateway-key-cache-${randomUUID()}`,
    topics: [identityTopic],
    fromBeginning: false,
    handler: async (message) => {
      const event = JSON.parse(message.value) as EventMessage;
      threeDsConfigurations.observe(event);
      // Only changes of what the gateway caches (state, roles, merchant accounts) matter; usage does not.
      if (event.type !== 'ApiKeyPairUpdated' && event.type !== 'ApiKeyPairDeleted') return;
      const data = event.data as { id?: string; kid?: string };
      directory.invalidate({ ...(data.id ? { id: data.id } : {}), ...(data.kid ? { kid: data.kid } : {}) });
    },
  });

  const localCache = new InMemoryVerifiedTokenCache();
  const signatures = createSignatureVerifier(runtime.jwtVerifyWorkers, {
    onWorkerError: (error) => runtime.onError?.(error, 'JWT signature worker died; replaced'),
  });
  const verifier = new TokenVerifier({
    directory,
    cache: runtime.sharedCache ? new LayeredVerifiedTokenCache(localCache, runtime.sharedCache) : localCache,
    clockSkewSeconds: runtime.clockSkewSeconds,
    signatures,
  });

  const readiness: ReadinessCheck[] = [
    ...[
      ['identity', identityPatterns.ping],
      ['transactions', transactionsPatterns.ping],
      ['vault', vaultPatterns.ping],
      ['gift-cards', giftCardPatterns.ping],
      ['webhooks', webhookPatterns.ping],
    ].map(([name, ping]) => ({ name: name!, check: async () => void (await runtime.rpc.call(ping!, {})) })),
    { name: 'bus', check: () => runtime.bus.ping() },
    ...(runtime.sharedCache ? [{ name: 'cache', check: () => runtime.sharedCache!.ping() }] : []),
    ...(runtime.readiness ?? []),
  ];
  const keyUsage = new KeyUsageRecorder(runtime.rpc, runtime.keyUsageFlushMs, (error) =>
    runtime.onError?.(error, 'recording key usage'),
  );
  keyUsage.start();
  const ownRateLimiter = runtime.rateLimiter ? undefined : new InMemoryRateLimiter();
  const enumerationLimit = {
    limiter: runtime.rateLimiter ?? ownRateLimiter!,
    perMinute: runtime.enumerationLimitPerMinute ?? DEFAULT_ENUMERATION_LIMIT_PER_MINUTE,
  };
  const ownSessionStore = runtime.dashboard !== false && !runtime.sharedCache ? new InMemoryKeyValueStore() : undefined;
  const dashboard =
    runtime.dashboard === false
      ? []
      : [
          DashboardModule.register({
            rpc: runtime.rpc,
            sessions: new DashboardSessions(
              runtime.sharedCache ?? ownSessionStore!,
              runtime.dashboard ?? DEFAULT_DASHBOARD_SETTINGS,
            ),
            signInLimiter: enumerationLimit.limiter,
            keyDirectory: directory,
            settings: runtime.dashboard ?? DEFAULT_DASHBOARD_SETTINGS,
          }),
        ];
  const modules = [...(runtime.modules ?? []), ...dashboard];
  const app = await createGatewayApp({
    rpc: runtime.rpc,
    verifier,
    readiness,
    keyDirectory: directory,
    keyUsage,
    threeDsConfigurations,
    enumerationLimit,
    ...(modules.length > 0 ? { modules } : {}),
    ...(runtime.metricsEnabled !== undefined ? { metricsEnabled: runtime.metricsEnabled } : {}),
    ...(runtime.log ? { log: runtime.log } : {}),
    ...(runtime.trustedProxies ? { trustedProxies: runtime.trustedProxies } : {}),
  });
  const metricsServer =
    runtime.metricsEnabled !== false && runtime.metrics ? await startMetricsServer(runtime.metrics) : null;
  return {
    app,
    keyUsage,
    metricsUrl: metricsServer?.url ?? null,
    stop: async () => {
      await metricsServer?.close();
      await app.close();
      await keyUsage.stop();
      await subscription.stop();
      await ownRateLimiter?.close();
      await ownSessionStore?.close();
      await signatures.close();
    },
  };
}
