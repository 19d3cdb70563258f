/**
 * The operator CLI (`npm run --silent cli -- ...`). It writes to the identity service's event store directly, so
 * it works with the server running or stopped; a running server sees the new records within its poll interval.
 * The operator stands where a dashboard user would (role rules apply as for one). Machine-readable JSON on
 * stdout; errors on stderr with a non-zero exit.
 */
import 'reflect-metadata';
import { createPrivateKey, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { SignJWT } from 'jose';
import { ApiError } from '@switchyard/api';
import { isCheckoutSessionIdClaim, parseEmbedClaim, type EmbedClaim } from '@switchyard/auth';
import { IDENTITY_READER_FILE, loadSettings, runningDataDirReader } from '@switchyard/config';
import { IdentityService, resolveSingleSignOnRoles, rolesOf } from '@switchyard/identity';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { createRpcCredentialSet, readRpcCertificateAuthority, writeRpcCredentialSet } from '@switchyard/rpc';
import {
  deadLettersDiscard,
  deadLettersList,
  deadLettersReplay,
  defaultSource,
  type DeadLetterSource,
} from './dead-letters';
import { rebuildReadModels } from './read-models';
import { vaultRewrap, vaultRotateKey, vaultStatus } from './vault';
import { webhooksKeyStatus, webhooksReseal, webhooksRotateKey } from './webhooks-keys';
import {
  collectHeader,
  DEFAULT_TOLERANCE_SECONDS,
  parseToleranceSeconds,
  verifyReceivedWebhook,
  type ReceivedHeaders,
} from './webhooks-verify';

/** A command that ran and says no (an invalid webhook): its message goes to stderr as it is, with a non-zero exit. */
class CommandFailed extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

async function withIdentity<T>(action: (identity: IdentityService) => Promise<T>): Promise<T> {
  const settings = loadSettings();
  const storage: ServiceStorage = openServiceStorage('identity', {
    dataDir: settings.dataDir,
    eventStoreUrl: settings.EVENTSTORE_URL,
  });
  const identity = new IdentityService({ store: storage.store, db: storage.db });
  try {
    await identity.catchUp();
    await identity.merchantAccounts.ensureDefault();
    return await action(identity);
  } finally {
    await storage.close();
  }
}

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

/**
 * A file holding a secret: created 0600 beside its destination and renamed over it, so it is never readable by
 * others, not even for a moment, and an existing file of looser mode is replaced rather than written into.
 */
function writePrivateFile(file: string, text: string): void {
  const name = `.${path.basename(file)}.${process.pid}.${randomUUID()}.tmp`;
  const temporary = path.join(path.dirname(path.resolve(file)), name);
  fs.writeFileSync(temporary, text, { mode: 0o600, flag: 'wx' });
  try {
    fs.renameSync(temporary, file);
  } catch (error) {
    fs.rmSync(temporary, { force: true });
    throw error;
  }
}

/**
 * The CLI writes into the data directory (DATA_DIR, `./data` of the working directory by default) whether a server
 * reads it or not. Say so when no running server does, the trap of a key made for another directory than the
 * server's. With EventStoreDB (EVENTSTORE_URL) the store is shared and there is nothing to check here.
 */
function noteWhenNoServerReads(what: string): void {
  const settings = loadSettings();
  if (settings.EVENTSTORE_URL || runningDataDirReader(settings.dataDir)) return;
  process.stderr.write(
    `note: no running Switchyard server reads ${settings.dataDir} (no live ${IDENTITY_READER_FILE} there): ` +
      `${what} is stored in that data directory, and only a server started with DATA_DIR=${settings.dataDir} ` +
      `will accept it. Run this CLI with the server's DATA_DIR (and from the same directory when it is the ` +
      `default ./data).\n`,
  );
}
const collect = (value: string, previous: string[]) => [...previous, value];
/** As `collect`, for an option without a default (so that `requiredOption` is enforced and help shows no `[]`). */
const collectOptional = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

export function cli(): Command {
  const program = new Command('switchyard')
    .description('Operate a Switchyard installation (data under DATA_DIR, or EVENTSTORE_URL)')
    .exitOverride()
    .showHelpAfterError();

  const merchantAccounts = program.command('merchant-accounts').description('Merchant accounts');
  merchantAccounts
    .command('create')
    .description('Create a merchant account')
    .requiredOption('--id <id>', 'account id: lower-case letters, digits and hyphens')
    .requiredOption('--display-name <name>', 'display name')
    .action(async (options: { id: string; displayName: string }) => {
      const account = await withIdentity((identity) =>
        identity.merchantAccounts.create({ id: options.id, displayName: options.displayName }),
      );
      print({
        type: 'merchant-account',
        id: account.id,
        display_name: account.displayName,
        created_at: account.createdAt,
        updated_at: account.updatedAt,
      });
    });

  const apiKeys = program.command('api-keys').description('API key pairs');
  apiKeys
    .command('create')
    .description('Generate a P-521 API key pair; prints its private key once (it is never stored)')
    .requiredOption('--display-name <name>', 'display name')
    .requiredOption('--role <slug>', 'a role slug or id; repeat for several roles', collect, [])
    .option(
      '--merchant-account <id>',
      'limit the key to a merchant account; repeat for several (default: all accounts)',
      collect,
      [],
    )
    .option(
      '--out <file>',
      'write the key file (with the private key) to FILE, readable by its owner only (0600), instead of standard output',
    )
    .action(async (options: { displayName: string; role: string[]; merchantAccount: string[]; out?: string }) => {
      const created = await withIdentity((identity) =>
        identity.apiKeyPairs.create(
          { display_name: options.displayName, roles: options.role, merchant_account_ids: options.merchantAccount },
          { kind: 'operator' },
        ),
      );
      const keyFile = {
        id: created.id,
        kid: created.kid,
        private_key: created.private_key,
        role_ids: created.role_ids,
        merchant_account_ids: created.merchant_account_ids,
      };
      if (options.out === undefined) print(keyFile);
      else {
        writePrivateFile(options.out, `${JSON.stringify(keyFile, null, 2)}\n`);
        const { private_key: _written, ...shown } = keyFile;
        print({ ...shown, key_file: path.resolve(options.out) });
      }
      noteWhenNoServerReads('the key');
    });

  apiKeys
    .command('revoke')
    .description(
      'Revoke an API key pair (active: false, as PUT /api-key-pairs/{id}); a running server refuses its tokens within its poll interval',
    )
    .requiredOption('--id <id>', 'the key pair id (`id` of `api-keys create`)')
    .action(async (options: { id: string }) => {
      print(
        await withIdentity((identity) =>
          identity.apiKeyPairs.update(options.id, { active: false }, { kind: 'operator' }),
        ),
      );
    });

  program
    .command('token')
    .description('Sign an ES512 access token with a key made by `api-keys create` (for curl and tests)')
    .requiredOption('--key-file <path>', 'the JSON that `api-keys create` printed (needs kid and private_key)')
    .option('--scope <scope>', 'a scope; repeat for several (default: *.read and *.write)', collect, [])
    .option('--expires-in <seconds>', 'lifetime in seconds', '300')
    .option(
      '--embed <json>',
      'embed token pins (docs/embed-tokens.md), e.g. \'{"amount":1299,"currency":"USD"}\': amount, currency, buyer_id, buyer_external_identifier, metadata',
      parseEmbedOption,
    )
    .option(
      '--checkout-session-id <uuid>',
      'bind the embed token to one checkout session: it pays with that session only',
      parseCheckoutSessionIdOption,
    )
    .action(
      async (options: {
        keyFile: string;
        scope: string[];
        expiresIn: string;
        embed?: EmbedClaim;
        checkoutSessionId?: string;
      }) => {
        const key = JSON.parse(fs.readFileSync(options.keyFile, 'utf8')) as { kid?: string; private_key?: string };
        if (!key.kid || !key.private_key) throw new Error(`${options.keyFile} has no kid and private_key`);
        const lifetime = Number(options.expiresIn);
        if (!Number.isInteger(lifetime) || lifetime <= 0)
          throw new Error('--expires-in must be a positive number of seconds');
        const pinned = options.embed !== undefined || options.checkoutSessionId !== undefined;
        if (pinned && !options.scope.includes('embed')) {
          process.stderr.write(
            'note: --embed and --checkout-session-id pin only calls made through the embed scope; this token has no --scope embed\n',
          );
        }
        const now = Math.floor(Date.now() / 1000);
        const token = await new SignJWT({
          scopes: options.scope.length > 0 ? options.scope : ['*.read', '*.write'],
          ...(options.embed !== undefined ? { embed: options.embed } : {}),
          ...(options.checkoutSessionId !== undefined ? { checkout_session_id: options.checkoutSessionId } : {}),
        })
          .setProtectedHeader({ alg: 'ES512', typ: 'JWT', kid: key.kid })
          .setIssuedAt(now)
          .setNotBefore(now)
          .setExpirationTime(now + lifetime)
          .setJti(randomUUID())
          .sign(createPrivateKey(key.private_key));
        process.stdout.write(`${token}\n`);
      },
    );

  const users = program
    .command('users')
    .description('Dashboard users: who signs in to /dashboard, with which roles (docs/dashboard.md)');
  users
    .command('create')
    .description('Create a dashboard user with its roles')
    .requiredOption('--email <email>', 'email address, unique (case-insensitive)')
    .requiredOption('--display-name <name>', 'display name')
    .requiredOption('--role <slug>', 'a role slug or id; repeat for several roles', collect, [])
    .option('--password-stdin', 'read the dashboard password from standard input (one line; at least 12 characters)')
    .action(async (options: { email: string; displayName: string; role: string[]; passwordStdin?: boolean }) => {
      const password = options.passwordStdin ? readPasswordFromStdin() : undefined;
      print(
        await withIdentity((identity) =>
          identity.users.create({
            email: options.email,
            display_name: options.displayName,
            roles: options.role,
            ...(password !== undefined ? { password } : {}),
          }),
        ),
      );
    });
  users
    .command('set-password')
    .description(
      "Set or replace a dashboard user's password, read from standard input (only its argon2id hash is stored)",
    )
    .requiredOption('--id <id>', 'the user id')
    .requiredOption('--password-stdin', 'read the password from standard input (one line; at least 12 characters)')
    .action(async (options: { id: string }) => {
      const password = readPasswordFromStdin();
      print(await withIdentity((identity) => identity.users.setPassword(options.id, password)));
    });
  users
    .command('update')
    .description('Edit a dashboard user; --role replaces its roles')
    .requiredOption('--id <id>', 'the user id')
    .option('--role <slug>', 'a role slug or id; repeat for several roles (replaces the current roles)', collect, [])
    .option('--display-name <name>', 'display name')
    .option('--active <true|false>', 'false deactivates the user, true restores it', parseBoolean)
    .action(async (options: { id: string; role: string[]; displayName?: string; active?: boolean }) => {
      const user = await withIdentity((identity) =>
        identity.users.update(options.id, {
          ...(options.role.length > 0 ? { roles: options.role } : {}),
          ...(options.displayName !== undefined ? { display_name: options.displayName } : {}),
          ...(options.active !== undefined ? { active: options.active } : {}),
        }),
      );
      print(user);
    });
  users
    .command('list')
    .description('List dashboard users, oldest first')
    .action(async () => {
      print({ items: await withIdentity(async (identity) => identity.users.all()) });
    });

  const sso = program.command('sso').description('Single sign-on: how an identity provider roles claim maps to roles');
  sso
    .command('resolve')
    .description('Show the roles a roles claim gives (analyst is added to an unusable set)')
    .option('--claim <slug-or-id>', 'an entry of the roles claim; repeat for several', collect, [])
    .action((options: { claim: string[] }) => {
      const resolved = resolveSingleSignOnRoles(options.claim);
      print({
        role_ids: resolved.roleIds,
        roles: rolesOf(resolved.roleIds),
        added: resolved.added,
        ignored: resolved.ignored,
      });
    });
  sso
    .command('sign-in')
    .description(
      'Sign a user in through single sign-on: create it, or replace its roles, with the roles the claim resolves to',
    )
    .requiredOption('--email <email>', 'the email the identity provider asserts')
    .option('--claim <slug-or-id>', 'an entry of the roles claim; repeat for several', collect, [])
    .option('--display-name <name>', 'display name for a new user (default: the email)')
    .action(async (options: { email: string; claim: string[]; displayName?: string }) => {
      const { user, resolution } = await withIdentity((identity) =>
        identity.users.signInWithSingleSignOn({
          email: options.email,
          claim: options.claim,
          ...(options.displayName !== undefined ? { display_name: options.displayName } : {}),
        }),
      );
      if (resolution.added.length > 0 || resolution.ignored.length > 0) {
        const added = rolesOf(resolution.added).map((role) => role.slug);
        process.stderr.write(
          `note: roles claim resolved with ${JSON.stringify(added)} added, ${JSON.stringify(resolution.ignored)} ignored\n`,
        );
      }
      print(user);
    });

  const webhooks = program.command('webhooks').description('Webhooks this installation sends (docs/events.md)');
  webhooks
    .command('verify')
    .description('Check a received webhook request: its signatures against the secrets, and the age of its timestamp')
    .requiredOption(
      '--secret <secret>',
      'a signing secret of the subscription; repeat for several (one matching signature is enough)',
      collectOptional,
    )
    .requiredOption('--body-file <path>', "the raw body exactly as received, byte for byte ('-': standard input)")
    .option(
      '--header <name: value>',
      "a header of the request, e.g. 'x-service-webhook-id: …'; repeat for each",
      collectHeader,
    )
    .option(
      '--tolerance-seconds <n>',
      'how far the timestamp may be from now',
      parseToleranceSeconds,
      DEFAULT_TOLERANCE_SECONDS,
    )
    .action((options: { secret: string[]; bodyFile: string; header?: ReceivedHeaders; toleranceSeconds: number }) => {
      const rawBody = fs.readFileSync(options.bodyFile === '-' ? 0 : options.bodyFile);
      const outcome = verifyReceivedWebhook({
        secrets: options.secret,
        rawBody,
        headers: options.header ?? {},
        toleranceSeconds: options.toleranceSeconds,
      });
      if (!outcome.valid) throw new CommandFailed(outcome.message);
      process.stdout.write(`${outcome.message}\n`);
    });

  webhooks
    .command('key-status')
    .description(
      'The webhooks key: the active key id, retired key ids, and how many signing secrets and passwords each key seals',
    )
    .action(async () => {
      print(await webhooksKeyStatus(loadSettings()));
    });
  webhooks
    .command('reseal')
    .description(
      'Seal every signing secret and basic-auth password again under WEBHOOK_SECRETS_KEY (after a rotation); safe to repeat',
    )
    .action(async () => {
      print(await webhooksReseal(loadSettings()));
    });
  webhooks
    .command('rotate-key')
    .description(
      'Key file installations (no WEBHOOK_SECRETS_KEY): a new DATA_DIR/webhooks.key, the old one kept in webhooks.retired-keys, then reseal',
    )
    .action(async () => {
      print(await webhooksRotateKey(loadSettings()));
    });

  const vault = program
    .command('vault')
    .description('The card vault: its key-encryption key and data keys (docs/vault.md)');
  vault
    .command('status')
    .description(
      'The active and retired key ids, how many data keys each wraps, and card rows still in the pre-envelope format',
    )
    .action(async () => {
      print(await vaultStatus(loadSettings()));
    });
  vault
    .command('rewrap')
    .description(
      'Re-wrap every data key under VAULT_KEY (after a rotation) and move pre-envelope card rows to data keys; safe to repeat',
    )
    .action(async () => {
      print(await vaultRewrap(loadSettings()));
    });
  vault
    .command('rotate-key')
    .description(
      'Key file installations (no VAULT_KEY): a new DATA_DIR/vault.key, the old one kept in vault.retired-keys, then rewrap',
    )
    .action(async () => {
      print(await vaultRotateKey(loadSettings()));
    });

  const readModels = program
    .command('read-models')
    .description("A service's read models: the tables its projections fold from its events");
  readModels
    .command('rebuild')
    .description(
      'Rebuild read models from the events, with the service running or stopped: built beside the live ones, caught up, then swapped in',
    )
    .argument('<service>', 'identity, transactions, gift-cards or webhooks')
    .argument('[name]', 'one read model (default: every read model of the service; docs/operations.md lists them)')
    .action(async (service: string, name: string | undefined) => {
      print(await rebuildReadModels(loadSettings(), service, name, (line) => process.stderr.write(`${line}\n`)));
    });

  const deadLetters = program
    .command('dead-letters')
    .description(
      'Messages a consumer group parked after its handler failed every attempt, and those parked behind them (docs/operations.md)',
    );
  const sourceOption = () =>
    new Option(
      '--source <source>',
      'kafka (KAFKA_BROKERS) or data-dir (the embedded runtime: DATA_DIR/bus.db); default kafka when KAFKA_BROKERS is set',
    )
      .choices(['kafka', 'data-dir'])
      .default(defaultSource());
  deadLetters
    .command('list')
    .description('The parked messages, oldest first per stream (--all: also those replayed or discarded)')
    .addOption(sourceOption())
    .option('--topic <topic>', 'a topic (its dead-letter topic is <topic>.dead-letter)')
    .option('--group <group>', 'a consumer group')
    .option('--key <key>', 'a stream (message key)')
    .option('--all', 'also entries already replayed or discarded')
    .action(
      async (options: { source: DeadLetterSource; topic?: string; group?: string; key?: string; all?: boolean }) => {
        print({ items: await deadLettersList(loadSettings(), options.source, options) });
      },
    );
  deadLetters
    .command('replay')
    .description(
      "Hand a group's parked messages to its handler again, in order; each stream is released after its last",
    )
    .addOption(sourceOption())
    .requiredOption('--group <group>', 'the consumer group that parked them')
    .requiredOption('--topic <topic>', 'the topic they came from')
    .option('--key <key>', 'one stream (default: every parked stream of the group on the topic)')
    .option('--wait-seconds <n>', 'how long to follow the replay (0: request it and return)', parseSeconds, 60)
    .action(
      async (options: {
        source: DeadLetterSource;
        group: string;
        topic: string;
        key?: string;
        waitSeconds: number;
      }) => {
        const outcome = await deadLettersReplay(loadSettings(), options.source, options, options.waitSeconds, (line) =>
          process.stderr.write(`${line}\n`),
        );
        print(outcome);
        if (options.waitSeconds > 0 && Object.keys(outcome.still_parked).length > 0) {
          throw new CommandFailed(
            'some streams are still parked: is the consumer running, and does its handler take the messages now? (its log says why)',
          );
        }
      },
    );
  deadLetters
    .command('discard')
    .description("Drop a stream's parked messages for good; its later messages are handled again")
    .addOption(sourceOption())
    .requiredOption('--group <group>', 'the consumer group that parked them')
    .requiredOption('--topic <topic>', 'the topic they came from')
    .requiredOption('--key <key>', 'the stream (message key)')
    .action(async (options: { source: DeadLetterSource; group: string; topic: string; key: string }) => {
      print(await deadLettersDiscard(loadSettings(), options.source, options));
    });

  const rpcCredentials = program
    .command('rpc-credentials')
    .description('Mutual TLS between the distributed services (docs/operations.md)');
  rpcCredentials
    .command('create')
    .description(
      'A CA and a certificate with its key per service, in a new 0700 directory (files 0600); prints the files',
    )
    .requiredOption('--out <dir>', 'the directory to write (made if missing; must not hold credentials already)')
    .option('--days <n>', 'how long the certificates are valid', parsePositiveInteger, 365)
    .option(
      '--ca-from <dir>',
      'issue under the CA of an earlier set (its ca.crt and ca.key): certificates for a running installation',
    )
    .action(async (options: { out: string; days: number; caFrom?: string }) => {
      const ca = options.caFrom === undefined ? undefined : readRpcCertificateAuthority(options.caFrom);
      const set = await createRpcCredentialSet({ days: options.days, ...(ca ? { ca } : {}) });
      print({ directory: options.out, files: writeRpcCredentialSet(options.out, set), valid_days: options.days });
    });

  return program;
}

function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > 3600)
    throw new InvalidArgumentError('a whole number of seconds, 0–3600');
  return seconds;
}

function parsePositiveInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed <= 0 || parsed > 3650)
    throw new InvalidArgumentError('expected a whole number of days, 1 to 3650');
  return parsed;
}

/** `--embed`: JSON, then the shape the gateway's verifier accepts (`embedClaimSchema`), so a bad pin fails here, not at the first request. */
function parseEmbedOption(value: string): EmbedClaim {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch (error) {
    throw new InvalidArgumentError(`not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const parsed = parseEmbedClaim(json);
  if (!parsed.ok) throw new InvalidArgumentError(parsed.problem);
  return parsed.claim;
}

function parseCheckoutSessionIdOption(value: string): string {
  if (!isCheckoutSessionIdClaim(value)) throw new InvalidArgumentError('must be a checkout session id (a UUID)');
  return value;
}

/**
 * The password on standard input (never an argument: arguments show in `ps` and shell history). One line: a final
 * line break, as `echo` or a file adds, is not part of it.
 */
function readPasswordFromStdin(): string {
  if (process.stdin.isTTY) process.stderr.write('password (then Enter and Ctrl-D): ');
  const password = fs.readFileSync(0, 'utf8').replace(/\r?\n$/, '');
  if (password === '') throw new CommandFailed('error: no password on standard input');
  if (/[\r\n]/.test(password)) throw new CommandFailed('error: the password must be one line');
  return password;
}

function parseBoolean(value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new InvalidArgumentError('expected true or false');
}

async function main(argv: string[]): Promise<number> {
  try {
    await cli().parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof CommandFailed) {
      process.stderr.write(`${error.message}\n`);
      return error.exitCode;
    }
    if (error instanceof ApiError) {
      process.stderr.write(`error: ${error.message}\n`);
      for (const detail of error.details) process.stderr.write(`  ${detail.pointer}: ${detail.message}\n`);
      return 1;
    }
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

if (require.main === module) {
  void main(process.argv).then((code) => process.exit(code));
}
