/**
 * The vault service on a worker thread of the embedded runtime (`startVaultThread`, VAULT_THREAD): the same service
 * as its own process (`main.ts`) runs, on its own store (DATA_DIR/vault.db, opened and moved here), with the main
 * thread in place of the network. Its patterns (`vault.*`, `vault-port.*`) are served over the RPC port; identity's
 * and the transactions service's (merchant accounts, card connections) are asked over it. Its events go to the
 * main thread's bus (`publish`), and the stored methods' usage follows the transactions store in DATA_DIR through a
 * connection of its own (a reader: SQLite shows another connection's commit once it is synced).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { MessageBus, OutgoingMessage } from '@switchyard/bus';
import { settingsFromThread } from '@switchyard/config';
import { openServiceStorage } from '@switchyard/readmodel';
import { InProcessRpc, MessagePortRpc, merchantAccountsOverRpc } from '@switchyard/rpc';
import { openVaultStorage } from './vault-storage';
import { vaultOptionsFrom } from './vault-options';
import { vaultRelay } from './vault-relay';
import { connectionsOverRpc } from './vault-rpc';
import { VaultService } from './vault-service';
import {
  errorFromThread,
  threadError,
  type FromVaultThread,
  type LogLevel,
  type ToVaultThread,
  type VaultThreadData,
} from './vault-thread-messages';

async function run(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('vault-thread.ts runs on a worker thread (startVaultThread)');
  const data = workerData as VaultThreadData;
  const settings = settingsFromThread(data.settings);
  const tell = (message: FromVaultThread) => port.postMessage(message);
  const log = (level: LogLevel, msg: string, error?: unknown) =>
    tell({ kind: 'log', level, fields: error === undefined ? {} : { err: threadError(error) }, msg });

  // The vault's handlers, registered once it has started (a call before that is answered 502: no handler).
  const served = new InProcessRpc((error) => log('error', 'RPC handler failed', error));
  const rpc = new MessagePortRpc(data.rpcPort, served);

  const vaultOptions = vaultOptionsFrom(settings);
  const storage = await openVaultStorage({ dataDir: settings.dataDir, keyRing: vaultOptions.keyRing });
  if (storage.migration.ran && storage.migration.copied > 0) log('info', 'the vault moved to vault.db');
  // The usage of stored methods: `TransactionCreated` read from the transactions store (the main thread's file).
  const transactions = openServiceStorage('transactions', { dataDir: settings.dataDir });
  const vault = new VaultService({
    store: storage.store,
    db: storage.db,
    pollIntervalMs: settings.POLL_INTERVAL_MS,
    merchantAccounts: merchantAccountsOverRpc(rpc),
    ...(data.mockCard ? { providers: { mockCard: data.mockCard } } : {}),
    ...vaultOptions,
    transactionEvents: transactions.store,
    onBackgroundError: (error) => log('warn', 'vault background work failed; retrying', error),
    onError: (error, what) => log('warn', `vault: ${what}`, error),
  });
  vault.useConnections(connectionsOverRpc(rpc));
  await vault.start();
  const handlers = {
    ...vault.rpcHandlers(),
    // A forwarded provider call takes at most the longest provider time limit.
    ...vault.portRpcHandlers(Math.max(settings.PROVIDER_TIMEOUT_MS, settings.MOCK_CARD_TIMEOUT_MS)),
  };
  served.register(handlers);

  // The relay publishes on the main thread's bus: each batch answered when that bus has it.
  const publishing = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  let nextPublish = 1;
  const bus: Pick<MessageBus, 'publish'> = {
    publish: (topic: string, messages: readonly OutgoingMessage[]) =>
      new Promise<void>((resolve, reject) => {
        const id = nextPublish++;
        publishing.set(id, { resolve, reject });
        tell({ kind: 'publish', id, topic, messages });
      }),
  };
  const relay = vaultRelay(storage, bus, {
    pollIntervalMs: settings.POLL_INTERVAL_MS,
    onError: (error) => log('warn', 'vault relay failed; retrying from its checkpoint', error),
  });
  relay.start();

  port.on('message', (message: ToVaultThread) => {
    if (message.kind === 'published') {
      const publish = publishing.get(message.id);
      publishing.delete(message.id);
      if (message.error) publish?.reject(errorFromThread(message.error));
      else publish?.resolve();
      return;
    }
    // stop: the relay and the service first (a batch under way is published), then the files.
    void (async () => {
      await relay.stop();
      await vault.stop();
      await rpc.close();
      await transactions.close();
      await storage.close();
      tell({ kind: 'stopped' });
    })().catch((error: unknown) => tell({ kind: 'failed', error: threadError(error) }));
  });
  tell({ kind: 'ready', patterns: Object.keys(handlers) });
}

run().catch((error: unknown) =>
  parentPort?.postMessage({ kind: 'failed', error: threadError(error) } satisfies FromVaultThread),
);
