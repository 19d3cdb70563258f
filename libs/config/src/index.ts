/**
 * Every setting Switchyard reads, with its default. The README's configuration table is this list.
 * Read once at start-up; an invalid value stops the process with a message naming the variable.
 */
import path from 'node:path';
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);

export const settingsSchema = z.object({
  /** HTTP port of the gateway (embedded: of the whole service). */
  PORT: port.default(8080),
  /** Interface the HTTP server binds to. */
  HOST: z.string().default('127.0.0.1'),
  /** Where SQLite files (event stores, read models) live. */
  DATA_DIR: z.string().default('./data'),
  /** EventStoreDB connection string; when set, services keep their events there instead of SQLite. */
  EVENTSTORE_URL: z.string().optional(),
  /** Kafka brokers of the distributed runtime, comma separated. */
  KAFKA_BROKERS: z.string().default('127.0.0.1:9092'),
  /** Redis of the distributed runtime. */
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  /** Where the identity service serves RPC (distributed runtime): the identity process listens, the gateway connects. */
  IDENTITY_RPC_URL: z.string().default('tcp://127.0.0.1:4001'),
  /** Where the transactions service serves RPC (distributed runtime). */
  TRANSACTIONS_RPC_URL: z.string().default('tcp://127.0.0.1:4002'),
  /** Gateway → service RPC timeout. */
  RPC_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /** Allowed clock skew when checking a JWT's exp / nbf / iat. */
  JWT_CLOCK_SKEW_SECONDS: z.coerce.number().int().min(0).max(300).default(30),
  /** How often the gateway sends API key usage (`last_used_at`) to identity; the field lags by at most this. */
  KEY_USAGE_FLUSH_MS: z.coerce.number().int().positive().max(300_000).default(60_000),
  /** How often read models and relays look for events written by other processes. */
  POLL_INTERVAL_MS: z.coerce.number().int().positive().default(100),
  /** pino level: fatal, error, warn, info, debug, trace, silent. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Settings = z.infer<typeof settingsSchema> & { readonly dataDir: string };

export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const parsed = settingsSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new Error(`invalid configuration: ${problems}`);
  }
  return { ...parsed.data, dataDir: path.resolve(parsed.data.DATA_DIR) };
}

export const kafkaBrokers = (settings: Settings): string[] =>
  settings.KAFKA_BROKERS.split(',').map((broker) => broker.trim()).filter(Boolean);
export * from './logger';
export * from './shutdown';
