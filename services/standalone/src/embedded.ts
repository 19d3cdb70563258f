/**
 * The embedded runtime: every service in one process on embedded adapters (SQLite event stores under DATA_DIR,
 * the in-process bus and RPC, in-memory caches). The same service code as the distributed runtime.
 */
import { InProcessMessageBus, type MessageBus } from '@switchyard/bus';
import type { Settings } from '@switchyard/config';
import { startGateway, type RunningGateway } from '@switchyard/gateway';
import { IdentityService, identityRelay } from '@switchyard/identity';
import { openServiceStorage } from '@switchyard/readmodel';
import { InProcessRpc } from '@switchyard/rpc';
import { TransactionsService, transactionsRelay } from '@switchyard/transactions';
import type { Logger } from 'pino';

export interface EmbeddedService {
  readonly gateway: RunningGateway;
  readonly identity: IdentityService;
  readonly transactions: TransactionsService;
  readonly bus: MessageBus;
  stop(): Promise<void>;
}

export async function startEmbedded(settings: Settings, log: Logger): Promise<EmbeddedService> {
  const bus = new InProcessMessageBus();
  const relayOptions = (service: string) => ({
    pollIntervalMs: settings.POLL_INTERVAL_MS,
    onError: (error: unknown) => log.warn({ err: error }, `${service} relay failed; retrying from its checkpoint`),
  });

  const identityStorage = openServiceStorage('identity', { dataDir: settings.dataDir });
  const identity = new IdentityService({ store: identityStorage.store, db: identityStorage.db, pollIntervalMs: settings.POLL_INTERVAL_MS });
  await identity.start();
  const transactionsStorage = openServiceStorage('transactions', { dataDir: settings.dataDir });
  const transactions = new TransactionsService({ store: transactionsStorage.store, db: transactionsStorage.db, pollIntervalMs: settings.POLL_INTERVAL_MS });
  await transactions.start();

  const relays = [identityRelay(identityStorage, bus, relayOptions('identity')), transactionsRelay(transactionsStorage, bus, relayOptions('transactions'))];
  for (const relay of relays) relay.start();

  const rpc = new InProcessRpc((error) => log.error({ err: error }, 'RPC handler failed'));
  rpc.register(identity.rpcHandlers());
  rpc.register(transactions.rpcHandlers());
  const gateway = await startGateway({
    rpc,
    bus,
    clockSkewSeconds: settings.JWT_CLOCK_SKEW_SECONDS,
    keyUsageFlushMs: settings.KEY_USAGE_FLUSH_MS,
    onError: (error, what) => log.error({ err: error }, what),
  });

  return {
    gateway,
    identity,
    transactions,
    bus,
    stop: async () => {
      await gateway.stop();
      for (const relay of relays) await relay.stop();
      await Promise.all([identity.stop(), transactions.stop()]);
      await bus.close();
      await Promise.all([identityStorage.close(), transactionsStorage.close()]);
    },
  };
}
