/**
 * The distributed runtime for e2e specs: identity, transactions, vault, gift cards, webhooks and two gateways as
 * separate OS processes (and, when asked, the mock-card simulator as an eighth), talking over NestJS TCP, Kafka and Redis, with a fresh data
 * directory. Also what those specs share: whether Kafka and Redis are reachable, API keys made by the operator
 * CLI, and reading whole Kafka topics.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type { IHeaders } from 'kafkajs';
import { kafkajs } from '@switchyard/bus/src/kafka/kafkajs';
import { kafkaAvailability } from '@switchyard/bus/src/contract';
import { transactionsTopic, webhookPatterns } from '@switchyard/contracts';
import { defaultRedisUrl } from '@switchyard/kv';
import { probeRedis } from '@switchyard/kv/src/contract';
import { TcpRpcClient } from '@switchyard/rpc/src/tcp-rpc';
import {
  createTestDataDir,
  freePort,
  groupsReadingTransactionsFromTheBeginning,
  kafkaBrokersForTests,
  removeTestDataDir,
  rpcCredentialsForTests,
  runCli,
  startTsProcess,
  waitFor,
  waitForConsumerGroups,
  type Availability,
  type CliResult,
  type RunningProcess,
} from '@switchyard/testing';

// kafkajs as the services run it: without its idle check loop (libs/bus/src/kafka/kafkajs.ts).
const { Kafka, logLevel } = kafkajs();

/** Kafka first, then Redis: the first one missing is the reason to skip. */
export async function distributedInfrastructure(): Promise<Availability> {
  const [kafka, redis] = await Promise.all([kafkaAvailability(kafkaBrokersForTests()), probeRedis()]);
  return !kafka.available ? kafka : redis;
}

export interface DistributedOptions {
  /** Part of the data directory's name. */
  readonly name: string;
  /** LOG_LEVEL of every service process (default `warn`). */
  readonly logLevel?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * Start the mock-card simulator as its own process and point the transactions process at it (MOCK_CARD_URL,
   * MOCK_CARD_WEBHOOK_SECRET); the simulator calls back the first gateway (PUBLIC_BASE_URL).
   */
  readonly mockCard?: boolean;
  /** More environment for every process (and the CLI), e.g. `WEBHOOK_RETRY_BASE_MS`. */
  readonly env?: Readonly<Record<string, string>>;
  /** A data directory to start on (copied into the runtime's own before any process starts), e.g. an old release's. */
  readonly seed?: string;
}

export interface ApiKey {
  readonly id: string;
  readonly kid: string;
  readonly private_key: string;
}

export interface DistributedRuntime {
  readonly dataDir: string;
  /** The environment every service process got (the CLI gets it too), with `RPC_CREDENTIALS_DIR`. */
  readonly env: Readonly<Record<string, string>>;
  /** The first gateway (PUBLIC_BASE_URL) and the second. */
  readonly baseUrl: string;
  readonly secondUrl: string;
  /** Set with `mockCard`. */
  readonly simulatorUrl: string | undefined;
  /** identity, transactions, vault, gift-cards, webhooks, gateway, second-gateway, and simulator with `mockCard`. */
  readonly processes: Readonly<Record<string, RunningProcess>>;
  /** Every process's output so far, for failure messages. */
  describe(): string;
  /** The operator CLI against this runtime's data; its output is kept (see `cliOutput`). */
  cli(...args: string[]): Promise<CliResult>;
  /** Everything the CLI runs printed, stdout and stderr. */
  cliOutput(): string;
  /** `api-keys create` through the CLI. */
  createApiKey(displayName: string, roles: readonly string[]): Promise<ApiKey>;
  /**
   * An RPC client to one of the services, with the gateway's certificate (as the gateway calls them), or with the
   * certificate of `caller` (as that service calls them).
   */
  rpcClient(
    service: 'identity' | 'transactions' | 'vault' | 'gift-cards' | 'webhooks',
    timeoutMs?: number,
    caller?: string,
  ): TcpRpcClient;
  /**
   * Starts `entry` again as process `name` (one a spec killed), with the runtime's environment and `env` on top; the
   * runtime stops it with the others.
   */
  restart(name: string, entry: string, env?: Readonly<Record<string, string>>): RunningProcess;
  /**
   * Waits until the groups that read transactions.events from its beginning (as the runtime's environment and `env`
   * on top name them: a process restarted with a new group) are at the topic's end, as the runtime's start does.
   */
  waitForTransactionsConsumers(env?: Readonly<Record<string, string>>): Promise<void>;
  /** SIGTERM to every process, and wait for them to exit; the data directory stays. */
  stopProcesses(): Promise<void>;
  /** stopProcesses, then remove the data directory. */
  stop(): Promise<void>;
}

export async function startDistributedRuntime(options: DistributedOptions): Promise<DistributedRuntime> {
  const dataDir = createTestDataDir(options.name);
  if (options.seed) fs.cpSync(options.seed, dataDir, { recursive: true });
  const processes: Record<string, RunningProcess> = {};
  const cliOutputs: string[] = [];
  const describe = () =>
    Object.entries(processes)
      .map(([name, process]) => `${name}:\n${process.output()}`)
      .join('\n');
  const stopProcesses = async () => {
    await Promise.all(Object.values(processes).map((process) => process.kill('SIGTERM')));
  };
  const stop = async () => {
    await stopProcesses();
    removeTestDataDir(dataDir);
  };

  try {
    const credentials = await rpcCredentialsForTests();
    const [rpcPort, transactionsPort, vaultPort, giftCardsPort, webhooksPort, httpPort, secondPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const baseUrl = `http://127.0.0.1:${httpPort}`;
    const secondUrl = `http://127.0.0.1:${secondPort}`;
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      IDENTITY_RPC_URL: `tcp://127.0.0.1:${rpcPort}`,
      TRANSACTIONS_RPC_URL: `tcp://127.0.0.1:${transactionsPort}`,
      VAULT_RPC_URL: `tcp://127.0.0.1:${vaultPort}`,
      GIFT_CARDS_RPC_URL: `tcp://127.0.0.1:${giftCardsPort}`,
      WEBHOOKS_RPC_URL: `tcp://127.0.0.1:${webhooksPort}`,
      // Receivers in tests listen on loopback.
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      // Runtimes of parallel test files share the broker: each installation has its own consumer group.
      WEBHOOKS_CONSUMER_GROUP: `webhooks-${randomUUID()}`,
      GIFT_CARDS_CONSUMER_GROUP: `gift-cards-${randomUUID()}`,
      VAULT_CONSUMER_GROUP: `vault-${randomUUID()}`,
      TRANSACTIONS_CONSUMER_GROUP: `transactions-${randomUUID()}`,
      KAFKA_BROKERS: kafkaBrokersForTests().join(','),
      REDIS_URL: defaultRedisUrl(),
      PORT: String(httpPort),
      LOG_LEVEL: options.logLevel ?? 'warn',
      ...credentials.env,
      ...options.env,
    };

    let simulatorUrl: string | undefined;
    if (options.mockCard) {
      const simulatorPort = await freePort();
      const webhookSecret = randomBytes(24).toString('base64url');
      simulatorUrl = `http://127.0.0.1:${simulatorPort}`;
      processes.simulator = startTsProcess('libs/connectors/src/simulator/simulator-main.ts', {
        MOCK_CARD_PORT: String(simulatorPort),
        MOCK_CARD_WEBHOOK_SECRET: webhookSecret,
      });
      Object.assign(env, {
        MOCK_CARD_URL: simulatorUrl,
        MOCK_CARD_WEBHOOK_SECRET: webhookSecret,
        PUBLIC_BASE_URL: baseUrl,
      });
      const url = simulatorUrl;
      await waitFor(
        'the mock-card simulator listening',
        async () => ((await fetch(`${url}/v1/ledger?reference=probe`)).status === 200 ? true : undefined),
        30_000,
        describe,
      );
    }

    processes.identity = startTsProcess('services/identity/src/main.ts', env);
    processes.transactions = startTsProcess('services/transactions/src/main.ts', env);
    processes.vault = startTsProcess('services/vault/src/main.ts', env);
    processes['gift-cards'] = startTsProcess('services/gift-cards/src/main.ts', env);
    processes.webhooks = startTsProcess('services/webhooks/src/main.ts', env);
    processes.gateway = startTsProcess('services/gateway/src/main.ts', env);
    processes['second-gateway'] = startTsProcess('services/gateway/src/main.ts', { ...env, PORT: String(secondPort) });
    // Eight Node processes compile and start at once (transactions waits for the vault's keys, gift-cards for the
    // transactions process's): on a shared two-core machine that has taken over a minute.
    for (const url of [baseUrl, secondUrl]) {
      await waitFor(
        `gateway ${url} ready`,
        async () => ((await fetch(`${url}/readyz`)).status === 200 ? true : undefined),
        180_000,
        describe,
      );
    }
    // The gateways' readiness does not cover webhooks: ask its ping directly.
    const rpcUrls = {
      identity: env.IDENTITY_RPC_URL!,
      transactions: env.TRANSACTIONS_RPC_URL!,
      vault: env.VAULT_RPC_URL!,
      'gift-cards': env.GIFT_CARDS_RPC_URL!,
      webhooks: env.WEBHOOKS_RPC_URL!,
    };
    const rpcClient = (service: keyof typeof rpcUrls, timeoutMs = 2_000, caller = 'gateway') =>
      TcpRpcClient.fromUrl(rpcUrls[service], service, credentials.of(caller), timeoutMs);
    const webhooksRpc = rpcClient('webhooks');
    try {
      await waitFor(
        'the webhooks service ready',
        async () => (await webhooksRpc.call(webhookPatterns.ping, {}), true),
        60_000,
        describe,
      );
    } finally {
      await webhooksRpc.close();
    }
    // The groups that read transactions.events from its beginning (the gift cards' usage and split tender's
    // redemption requests, the vault's) first work through what the shared broker already holds: every other
    // runtime's payments, of this run and of earlier ones. A spec's first split payment waited behind that history
    // (12 s behind 265,000 messages, past the gateway's 10 s): it starts once they are at the end.
    // The runtime's broker: a spec may give it one of its own (KAFKA_BROKERS in `options.env`).
    const kafka = new Kafka({ brokers: env.KAFKA_BROKERS!.split(','), logLevel: logLevel.NOTHING });
    const waitForTransactionsConsumers = async (more: Readonly<Record<string, string>> = {}) => {
      await waitForConsumerGroups(kafka, {
        topic: transactionsTopic,
        groupIds: groupsReadingTransactionsFromTheBeginning({ ...env, ...more }),
        timeoutMs: 300_000,
      });
    };
    await waitForTransactionsConsumers();

    const cli = async (...args: string[]) => {
      const result = await runCli(env, ...args);
      cliOutputs.push(result.stdout, result.stderr);
      return result;
    };
    return {
      dataDir,
      env,
      baseUrl,
      secondUrl,
      simulatorUrl,
      processes,
      describe,
      cli,
      cliOutput: () => cliOutputs.join('\n'),
      rpcClient,
      restart: (name, entry, more = {}) => {
        processes[name] = startTsProcess(entry, { ...env, ...more });
        return processes[name];
      },
      waitForTransactionsConsumers,
      createApiKey: async (displayName, roles) => {
        const result = await cli(
          'api-keys',
          'create',
          '--display-name',
          displayName,
          ...roles.flatMap((role) => ['--role', role]),
        );
        if (result.code !== 0)
          throw new Error(`the CLI could not create a key (exit ${result.code}): ${result.stderr}`);
        return JSON.parse(result.stdout) as ApiKey;
      },
      stopProcesses,
      stop,
    };
  } catch (error) {
    // Nothing is left running when the start fails (afterAll has no runtime to stop).
    await stop();
    throw error;
  }
}

export interface TopicMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: IHeaders;
}

/**
 * Every message of the topics, from the beginning, with a fresh consumer group: read until `until(messages)`
 * holds (default: at once), then on until the end offsets of that moment. Bounded by `timeoutMs`.
 */
export async function readTopics(
  topics: readonly string[],
  options: { until?: (messages: readonly TopicMessage[]) => boolean; timeoutMs?: number } = {},
): Promise<TopicMessage[]> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  const kafka = new Kafka({ clientId: 'e2e-reader', brokers: kafkaBrokersForTests(), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  const consumer = kafka.consumer({
    groupId: `e2e-reader-${Date.now()}-${randomBytes(4).toString('hex')}`,
    maxWaitTimeInMs: 50,
  });
  const messages: TopicMessage[] = [];
  const seen = new Map<string, bigint>(); // `${topic}/${partition}` → highest offset read
  const pause = () => new Promise((resolve) => setTimeout(resolve, 100));
  await admin.connect();
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [...topics], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        messages.push({
          topic,
          partition,
          offset: message.offset,
          key: message.key,
          value: message.value,
          headers: message.headers ?? {},
        });
        const at = `${topic}/${partition}`;
        const offset = BigInt(message.offset);
        if ((seen.get(at) ?? -1n) < offset) seen.set(at, offset);
      },
    });
    while (options.until && !options.until(messages)) {
      if (Date.now() > deadline)
        throw new Error(
          `readTopics(${topics.join(', ')}): the awaited messages did not arrive within ${timeoutMs} ms (${messages.length} read)`,
        );
      await pause();
    }
    const ends = (
      await Promise.all(
        topics.map(async (topic) =>
          (
            await admin.fetchTopicOffsets(topic)
          ).map((partition) => ({
            at: `${topic}/${partition.partition}`,
            low: BigInt(partition.low),
            high: BigInt(partition.high),
          })),
        ),
      )
    ).flat();
    const reachedEnd = () => ends.every(({ at, low, high }) => high <= low || (seen.get(at) ?? -1n) >= high - 1n);
    while (!reachedEnd()) {
      if (Date.now() > deadline)
        throw new Error(
          `readTopics(${topics.join(', ')}): the end offsets were not reached within ${timeoutMs} ms (${messages.length} read)`,
        );
      await pause();
    }
    return messages;
  } finally {
    await consumer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }
}
