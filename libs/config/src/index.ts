/**
 * Every setting Switchyard reads, with its default. The README's configuration table is this list.
 * Read once at start-up; an invalid value stops the process with a message naming the variable.
 */
import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);

/** What Fastify's `trustProxy` (proxy-addr) takes: an address, a CIDR range, or one of its named ranges. */
function isProxyAddress(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

export const settingsSchema = z.object({
  /** HTTP port of the gateway (embedded: of the whole service). */
  PORT: port.default(8080),
  /** Interface the HTTP server binds to. */
  HOST: z.string().default('127.0.0.1'),
  /** Where SQLite files (event stores, read models) live. */
  DATA_DIR: z.string().default('./data'),
  /** EventStoreDB connection string; when set, services keep their events there instead of SQLite. */
  EVENTSTORE_URL: z.string().optional(),
  /**
   * The gift cards and vault processes: the transactions service's EventStoreDB (its EVENTSTORE_URL), where releases
   * before each of them had a store of its own kept its streams (gift cards; buyers, payment methods and the vault's
   * other streams), read by each one's first start's move; and the positions by which each orders the
   * `transactions.events` it counts usage from, so set it on every start. Unset: the transactions service keeps its
   * events in SQLite (transactions.db in DATA_DIR).
   */
  TRANSACTIONS_EVENTSTORE_URL: z.string().optional(),
  /** Kafka brokers of the distributed runtime, comma separated. */
  KAFKA_BROKERS: z.string().default('127.0.0.1:9092'),
  /** Redis of the distributed runtime. */
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  /**
   * Where the identity service serves RPC (distributed runtime): the identity process listens, the gateway connects.
   */
  IDENTITY_RPC_URL: z.string().default('tcp://127.0.0.1:4001'),
  /** Where the transactions service serves RPC (distributed runtime). */
  TRANSACTIONS_RPC_URL: z.string().default('tcp://127.0.0.1:4002'),
  /** The webhooks service's Kafka consumer group: one per installation sharing a broker. */
  WEBHOOKS_CONSUMER_GROUP: z.string().min(1).max(200).default('webhooks'),
  /** Where the webhooks service serves RPC (distributed runtime). */
  WEBHOOKS_RPC_URL: z.string().default('tcp://127.0.0.1:4003'),
  /** Where the gift cards service serves RPC (distributed runtime): the gateway and the transactions service call it. */
  GIFT_CARDS_RPC_URL: z.string().default('tcp://127.0.0.1:4004'),
  /**
   * The gift cards service's Kafka consumer group (it follows `transactions.events` for the stored cards' usage): one
   * per installation sharing a broker.
   */
  GIFT_CARDS_CONSUMER_GROUP: z.string().min(1).max(200).default('gift-cards'),
  /**
   * The transactions service's Kafka consumer groups are named after it (`<it>.gift-card-outcomes`: the gift cards
   * service's answers to split tender's requests on `gift-cards.events`): one per installation sharing a broker.
   */
  TRANSACTIONS_CONSUMER_GROUP: z.string().min(1).max(200).default('transactions'),
  /**
   * Where the vault service serves RPC (distributed runtime): the gateway (buyers, payment methods, checkout
   * sessions, network tokens, digital wallets, the card hand-over) and the transactions service call it.
   */
  VAULT_RPC_URL: z.string().default('tcp://127.0.0.1:4005'),
  /**
   * The vault service's Kafka consumer group (it follows `transactions.events` for the stored payment methods' usage):
   * one per installation sharing a broker.
   */
  VAULT_CONSUMER_GROUP: z.string().min(1).max(200).default('vault'),
  /** Gateway → service RPC timeout. */
  RPC_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /**
   * RPC credentials of a distributed service (mutual TLS between services; docs/operations.md, "Credentials between
   * services"): a directory made by `npm run cli -- rpc-credentials create --out DIR`, from which each process takes
   * `ca.crt`, `<service>.crt` and `<service>.key`. A distributed service does not start without them; `npm start`
   * (one process, in-process calls) reads none. Paths, not secrets: the files are 0600 and never enter the settings.
   */
  RPC_CREDENTIALS_DIR: z.string().min(1).optional(),
  /**
   * The CA certificates (PEM; several during a CA rotation) a service trusts; wins over RPC_CREDENTIALS_DIR's ca.crt.
   */
  RPC_TLS_CA_FILE: z.string().min(1).optional(),
  /** The service's own certificate (PEM, CN = the service); wins over RPC_CREDENTIALS_DIR's `<service>.crt`. */
  RPC_TLS_CERT_FILE: z.string().min(1).optional(),
  /** The service's private key (PEM); wins over RPC_CREDENTIALS_DIR's `<service>.key`. */
  RPC_TLS_KEY_FILE: z.string().min(1).optional(),
  /** Allowed clock skew when checking a JWT's exp / nbf / iat. */
  JWT_CLOCK_SKEW_SECONDS: z.coerce.number().int().min(0).max(300).default(30),
  /**
   * Worker threads that check JWT signatures off the gateway's event loop (ES512 costs ~2.5 ms of CPU each;
   * docs/performance.md); unset: one per core (`os.availableParallelism()`); 0: checked inline on the main thread.
   */
  JWT_VERIFY_WORKERS: z.coerce.number().int().min(0).max(64).optional(),
  /** How often the gateway sends API key usage (`last_used_at`) to identity; the field lags by at most this. */
  KEY_USAGE_FLUSH_MS: z.coerce.number().int().positive().max(300_000).default(60_000),
  /**
   * The enumeration-prevention rate limit (spec, Limits; docs/rate-limits.md): requests a minute per embed token across
   * POST /gift-cards/balances, POST /gift-cards and POST /transactions, and per checkout session on its fields. The
   * spec says about 50 and that it may be lowered. Server-to-server tokens are never limited.
   */
  ENUMERATION_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().max(100_000).default(50),
  /** How often read models and relays look for events written by other processes. */
  POLL_INTERVAL_MS: z.coerce.number().int().positive().default(100),
  /**
   * Prometheus metrics (docs/observability.md): `GET /metrics` on METRICS_PORT, in every process (embedded: every
   * service's), never on the API's port. Off: no /metrics anywhere, no process metrics collected.
   */
  METRICS_ENABLED: z.stringbool().default(true),
  /**
   * Embedded runtime: the vault service runs on a worker thread of its own, so the card hand-over, the card store
   * and the forwarded provider calls use the machine's second core (issue 21); false: on the main thread.
   */
  VAULT_THREAD: z.stringbool().default(true),
  /**
   * Port of the `/metrics` server of every process — the embedded runtime, the gateway, identity, vault, transactions,
   * gift-cards and webhooks — on HOST; unset: no metrics are served (the API's port never serves them: issue 22,
   * item 7). Each process on one host needs its own.
   */
  METRICS_PORT: port.optional(),
  /** pino level: fatal, error, warn, info, debug, trace, silent. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * OpenTelemetry traces (docs/observability.md): the OTLP/HTTP collector's base URL, e.g. `http://127.0.0.1:4318`;
   * spans go to `<it>/v1/traces`. Unset (and OTEL_EXPORTER_OTLP_TRACES_ENDPOINT unset): no tracing at all.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  /** The full URL spans are sent to; wins over OTEL_EXPORTER_OTLP_ENDPOINT. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url().optional(),
  /** Secret. Headers sent with every export (`key1=value1,key2=value2`, values URL-encoded): a collector's API key. */
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
  /** The OTLP encoding: only `http/json` (OTLP over HTTP, JSON bodies) is spoken; another value stops the start. */
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(['http/json']).default('http/json'),
  /**
   * `service.name` of the spans; unset: the process (`switchyard` embedded; `gateway`, `identity`, `vault`,
   * `transactions`, `gift-cards`, `webhooks`).
   */
  OTEL_SERVICE_NAME: z.string().min(1).max(200).optional(),
  /** The gateway's address as payment services reach it (their notifications); unset: the address it listens on. */
  PUBLIC_BASE_URL: z.url().optional(),
  /** The mock-card simulator's address; unset in the embedded runtime: it starts one in process on MOCK_CARD_PORT. */
  MOCK_CARD_URL: z.url().optional(),
  /** Port of the embedded runtime's own simulator (0: any free port). */
  MOCK_CARD_PORT: port.default(0),
  /**
   * How many references (and network tokens) the embedded runtime's own simulator remembers; an older authorization
   * can no longer be captured or refunded there. Its ledger is in the service's memory: the soak sets 10,000 so that
   * it measures the service, not the simulator's ledger. Unset: the simulator's default (100,000).
   */
  MOCK_CARD_LEDGER_CAPACITY: z.coerce.number().int().positive().optional(),
  /** Secret. HMAC key of the simulator's notification signatures; unset in the embedded runtime: random per start. */
  MOCK_CARD_WEBHOOK_SECRET: z.string().min(16).optional(),
  /** How long a call to the simulator may take before its outcome counts as unknown. */
  MOCK_CARD_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /**
   * Per-request timeout of the real providers' connectors (adyen-card, stripe-card); past it the outcome is unknown
   * and reconciliation settles it. 30 s: within RECONCILE_AFTER_MS, so no call still on its way is taken for lost.
   */
  PROVIDER_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
  /**
   * The 3-D Secure directory server (the simulator's, `/v1/3ds`); unset: the mock-card simulator's address
   * (MOCK_CARD_URL, or the embedded runtime's own simulator).
   */
  THREE_DS_DIRECTORY_URL: z.url().optional(),
  /** Issuer-mandated 3-D Secure (PSD2): EEA and UK issuers get 3-D Secure even when a skip-3ds flow rule matched. */
  ISSUER_MANDATED_3DS: z.stringbool().default(true),
  /**
   * BIN data: an absolute path to a CSV of BIN ranges (docs/bin-data.md), e.g. a licensed BIN file; unset: the
   * small sample shipped in libs/bin-data/data.
   */
  BIN_DATA_FILE: z.string().min(1).optional(),
  /**
   * How long a transaction waiting for its buyer (3-D Secure challenge, redirect payment method) — or a create request
   * that never finished — holds failure notifications; then processing resumes and an abandoned approval fails
   * with `incomplete_buyer_approval`. 10 minutes, as the reference's `incomplete_buyer_approval` says.
   */
  BUYER_APPROVAL_WINDOW_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(10 * 60 * 1000),
  /**
   * How long a payment with gift cards may stay unfinished (a crash mid-way, a provider that could not take a
   * reversal) before it is rolled back: every gift card charge reversed, the payment method voided. 1 minute: far
   * longer than any provider call (MOCK_CARD_TIMEOUT_MS), so a request still running is never raced.
   */
  GIFT_CARD_RECOVERY_AFTER_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(60 * 1000),
  /**
   * How long the gift cards service keeps a gift card a `POST /transactions` gave by number and PIN when no
   * redemption asked for it (its redemption's answer erases it at once). 1 hour: longer than a buyer's challenge
   * before the redemptions and than GIFT_CARD_RECOVERY_AFTER_MS.
   */
  GIFT_CARD_HAND_OVER_TTL_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(60 * 60 * 1000),
  /**
   * Reconciliation: an authorization still `processing` this long after its create request answered (its outcome
   * unknown — a timeout, a lost answer — or a notification that never came) is synced with the provider, and again
   * on every later round until it is decided; one the provider never received fails. 1 minute: longer than any
   * provider call (MOCK_CARD_TIMEOUT_MS), so no request still on its way is taken for lost.
   */
  RECONCILE_AFTER_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(60 * 1000),
  /**
   * Paze's signing keys, which both signatures of a Paze payload must verify against (docs/paze.md): a JWKS file, a
   * PEM file of public keys or certificates, or an https URL of a JWKS; read by the vault service. Unset: the published
   * development key, and with NODE_ENV=production none: every Paze payload is refused
   * (`paze_signing_keys_not_configured`) while the rest of the service runs. A file it cannot read stops the start.
   */
  PAZE_SIGNING_KEYS: z.string().optional(),
  /**
   * `production` turns network token provisioning through the API off unless
   * NETWORK_TOKENS_API_PROVISIONING says otherwise.
   */
  NODE_ENV: z.string().optional(),
  /**
   * Whether POST /payment-methods/{id}/network-tokens provisions (spec: not enabled by default in production).
   * Default: on, except NODE_ENV=production.
   */
  NETWORK_TOKENS_API_PROVISIONING: z.stringbool().optional(),
  /**
   * The demo checkout at /demo/checkout (embedded runtime only): a merchant page and backend that pay through the
   * secure fields with an embed token. Default: on only when HOST is loopback, and never with NODE_ENV=production.
   */
  DEMO_CHECKOUT: z.stringbool().optional(),
  /**
   * The operator dashboard at /dashboard (docs/dashboard.md), served by the gateway; users sign in with a password set
   * by the CLI.
   */
  DASHBOARD_ENABLED: z.stringbool().default(true),
  /** A dashboard session unused this long ends (30 minutes): each request moves its end. */
  DASHBOARD_SESSION_IDLE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(24 * 60 * 60 * 1000)
    .default(30 * 60 * 1000),
  /** A dashboard session ends this long after sign-in whatever its use (12 hours). */
  DASHBOARD_SESSION_MAX_AGE_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(7 * 24 * 60 * 60 * 1000)
    .default(12 * 60 * 60 * 1000),
  /**
   * The dashboard session cookie's `Secure` attribute: `auto` sets it when the request came over https (the gateway
   * terminating TLS); `always` sets it on every answer — use it behind a proxy that terminates TLS.
   */
  DASHBOARD_COOKIE_SECURE: z.enum(['auto', 'always']).default('auto'),
  /**
   * The reverse proxies in front of the gateway whose `X-Forwarded-For` (and `-Proto`, `-Host`) are believed: IP
   * addresses or CIDR ranges, comma-separated (or `loopback`, `linklocal`, `uniquelocal`). Unset: none, so the
   * per-address sign-in limit counts the connecting peer and a forged header changes nothing.
   */
  TRUSTED_PROXIES: z
    .string()
    .optional()
    .transform((text) =>
      (text ?? '')
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean),
    )
    .refine(
      (entries) => entries.every(isProxyAddress),
      'each entry must be an IP address, a CIDR range, or loopback, linklocal, uniquelocal',
    ),
  /**
   * A card stored by a purchase (`store: true`) stays `processing` until the provider's vault-token notification
   * arrives; after this long without it, it fails (spec, Events rule 3). 10 minutes.
   */
  VAULT_TOKEN_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(10 * 60 * 1000),
  /** How long a card alias (the vault's stand-in for a card number or security code in a provider request) is valid. */
  CARD_ALIAS_TTL_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(60 * 1000),
  /**
   * Secret. Card vault key, read by the vault service (its own process when distributed; the transactions process
   * reads none) and the CLI's vault commands: 32 random bytes, base64 or base64url (`openssl rand -base64 32`); unset:
   * DATA_DIR/vault.key, created on first start. Never logged: not enumerable on the loaded settings, and errors never
   * echo it.
   */
  VAULT_KEY: z
    .string()
    .regex(
      /^[A-Za-z0-9+/_-]{43}=?$/,
      'must be base64 or base64url of exactly 32 bytes (44 characters with `=`, or 43 without)',
    )
    .optional(),
  /**
   * Secret. Former vault keys, comma-separated (each base64 or base64url of 32 bytes): they only unwrap data keys
   * until `npm run cli -- vault rewrap` has re-wrapped every one under VAULT_KEY (docs/vault.md, key rotation).
   */
  VAULT_RETIRED_KEYS: z
    .string()
    .regex(
      /^\s*([A-Za-z0-9+/_-]{43}=?\s*)(,\s*[A-Za-z0-9+/_-]{43}=?\s*)*$/,
      'must be comma-separated base64 or base64url keys of exactly 32 bytes each',
    )
    .optional(),
  /**
   * Hosts the vault's forwarder may send a card to besides the providers' own (Adyen's checkout hosts, Stripe's API),
   * MOCK_CARD_URL's, THREE_DS_DIRECTORY_URL's and loopback: comma-separated `host[:port]`, a `*` standing for any
   * characters within one label (`*.proxy.example:8443`). A connection whose `api_base_url` names another host is
   * refused (docs/vault.md).
   */
  VAULT_FORWARD_HOSTS: z
    .string()
    .regex(/^\s*[A-Za-z0-9*.[\]:-]+(\s*,\s*[A-Za-z0-9*.[\]:-]+)*\s*$/, 'must be comma-separated host[:port] patterns')
    .optional(),
  /**
   * Webhook subscriptions may point at loopback, private (RFC 1918, link-local, unique-local) and `localhost`
   * addresses: for development and tests only; off, such URLs are refused with a 400.
   */
  WEBHOOK_ALLOW_PRIVATE_URLS: z.stringbool().default(false),
  /**
   * Secret. Key of the webhook signing secrets and basic-auth passwords at rest: 32 random bytes, base64 or base64url;
   * unset: DATA_DIR/webhooks.key, created on first start. Never logged, like VAULT_KEY.
   */
  WEBHOOK_SECRETS_KEY: z
    .string()
    .regex(
      /^[A-Za-z0-9+/_-]{43}=?$/,
      'must be base64 or base64url of exactly 32 bytes (44 characters with `=`, or 43 without)',
    )
    .optional(),
  /**
   * Secret. The gift cards service's key (stored gift cards' numbers and PINs at rest, issued cards' answers kept for
   * their Idempotency-Key): 32 random bytes, base64 or base64url; unset: DATA_DIR/gift-cards.key, created on first
   * start. Never logged, like VAULT_KEY.
   */
  GIFT_CARDS_KEY: z
    .string()
    .regex(
      /^[A-Za-z0-9+/_-]{43}=?$/,
      'must be base64 or base64url of exactly 32 bytes (44 characters with `=`, or 43 without)',
    )
    .optional(),
  /** First retry of a failed webhook delivery after this long; each next one waits twice as long. */
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().positive().default(30_000),
  /** Longest wait between two attempts of a delivery (6 h). */
  WEBHOOK_RETRY_MAX_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(6 * 60 * 60 * 1000),
  /** A delivery still failing this long after its event is given up (`failed`; 7 days). */
  WEBHOOK_MAX_AGE_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(7 * 24 * 60 * 60 * 1000),
  /** How long a receiver may take to answer a delivery before the attempt counts as failed. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
  /** How often the delivery worker looks for deliveries that are due. */
  WEBHOOK_WORKER_INTERVAL_MS: z.coerce.number().int().positive().default(250),
  /**
   * Secret. Former webhooks keys, comma separated (each base64 or base64url of 32 bytes): they still open signing
   * secrets and basic-auth passwords until `cli webhooks rotate-key` / `reseal` has re-sealed every one under the
   * current key (docs/operations.md, key rotation).
   */
  WEBHOOK_SECRETS_RETIRED_KEYS: z
    .string()
    .regex(
      /^\s*([A-Za-z0-9+/_-]{43}=?\s*)(,\s*[A-Za-z0-9+/_-]{43}=?\s*)*$/,
      'must be comma-separated base64 or base64url keys of exactly 32 bytes each',
    )
    .optional(),
  /** Webhook deliveries (with their attempts) this many days after their final state are deleted, then their events. */
  WEBHOOK_DELIVERY_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /** Authorization statistics (the dashboard's chart) older than this many days are deleted. */
  AUTHORIZATION_STATS_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /** How often retention runs (webhooks, transactions); the first run is a second after the start. */
  RETENTION_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(60 * 60 * 1000),
  /** Rows deleted per retention batch (one short transaction each). */
  RETENTION_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(500),
  /**
   * Failed attempts of a bus message before it is parked on its dead-letter topic
   * (failures marked retriable do not count).
   */
  BUS_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(5),
  /**
   * The window of a batched subscription (the vault's and the gift cards' usage projections, the webhooks' ingest,
   * split tender's requests to the gift cards service): after it handled what a fetch brought, it fetches again only
   * once this long has passed since that fetch answered, so what lands meanwhile comes in one fetch — fewer fetches
   * for the broker and the consumers under load, at up to this much more event lag (and a split payment's redemption
   * up to this much later); the first message to reach an idle topic is handed over at once. 0: fetched again at once.
   */
  KAFKA_BATCH_WINDOW_MS: z.coerce.number().int().min(0).max(1_000).default(30),
  /**
   * How long a consumer's handled offsets may wait to be committed together (a crash hands back up to this much of
   * handled messages, which consumers drop by id; a stop commits at once). 0: after each message.
   */
  KAFKA_COMMIT_INTERVAL_MS: z.coerce.number().int().min(0).max(10_000).default(250),
});

/** Settings that hold secrets: loadSettings makes them non-enumerable, so JSON.stringify, pino, console.log and `{ ...settings }` leave them out. */
const secretSettings = [
  'VAULT_KEY',
  'VAULT_RETIRED_KEYS',
  'MOCK_CARD_WEBHOOK_SECRET',
  'WEBHOOK_SECRETS_KEY',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'WEBHOOK_SECRETS_RETIRED_KEYS',
  'GIFT_CARDS_KEY',
] as const;

export type Settings = z.infer<typeof settingsSchema> & { readonly dataDir: string };

export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const parsed = settingsSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new Error(`invalid configuration: ${problems}`);
  }
  const settings: Settings = { ...parsed.data, dataDir: path.resolve(parsed.data.DATA_DIR) };
  for (const name of secretSettings)
    Object.defineProperty(settings, name, { value: settings[name], enumerable: false, writable: false });
  return settings;
}

/** Settings for a worker thread (`workerData`): every setting, the secret ones too (a structured clone drops them). */
export function settingsForThread(settings: Settings): Record<string, unknown> {
  return Object.fromEntries(
    Object.getOwnPropertyNames(settings).map((name) => [name, (settings as Record<string, unknown>)[name]]),
  );
}

/** The settings `settingsForThread` handed to a worker thread, the secret ones hidden again as `loadSettings` hides them. */
export function settingsFromThread(handed: Record<string, unknown>): Settings {
  const settings = { ...handed } as Settings;
  for (const name of secretSettings)
    Object.defineProperty(settings, name, { value: settings[name], enumerable: false, writable: false });
  return settings;
}

export const kafkaBrokers = (settings: Settings): string[] =>
  settings.KAFKA_BROKERS.split(',')
    .map((broker) => broker.trim())
    .filter(Boolean);
export * from './logger';
export * from './shutdown';
export * from './data-dir-reader';
