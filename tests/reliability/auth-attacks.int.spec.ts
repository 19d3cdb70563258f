/**
 * Auth attacks (issue 11, item 4), against the embedded service over real HTTP. One table row per attack: a forged,
 * stale, revoked, under-scoped or cross-account request, refused with the status the spec (Authentication, 5–7) and
 * the gateway's guard decide — 401 `unauthorized` for the token or its key, 403 `forbidden` for a scope, a role or a
 * merchant account the key may not use, 404 `not_found` for another merchant account's resource named by id — and
 * leaving no trace: no new event in any service's event store (identity, transactions, webhooks), no call reaching
 * the card simulator, every watched resource (transactions, connections, key pairs, merchant accounts) unchanged.
 * Then a fast-check run flips one random bit of a valid token (header, claims or signature): always 401, no trace.
 *
 * Figures: tests/reliability/results/auth-attacks.json (attacks tried, refused, side effects found: 0).
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { findRoleBySlug } from '@switchyard/identity';
import { hs256WithPublicKey, signToken, swapPayload, tamperSignature, unsignedToken } from '@switchyard/testing';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { ACCOUNT_HEADER, card, startHarness, type Harness } from '../../services/standalone/src/transactions.harness';
import { writeResults } from './support/results';

const full = process.env.RELIABILITY_FULL === '1';
/** Single-bit flips of a valid token sent by the property run. */
const FLIPS = full ? 1_000 : 60;

const A = 'attack-a';
const B = 'attack-b';
const operator = { kind: 'operator' } as const;
const roleId = (slug: string): string => findRoleBySlug(slug)!.id;

interface Key {
  readonly id: string;
  readonly kid: string;
  readonly privateKeyPem: string;
}

/** Everything the rows point at; filled in by beforeAll. */
interface World {
  admin: Key; // administrator, every merchant account
  integration: Key; // integration (grants `embed` and transactions.*), every merchant account
  analyst: Key; // read-only roles
  manager: Key; // key-manager + integration
  limitedA: Key; // integration, merchant account A only
  managerA: Key; // key-manager + integration, merchant account A only
  systemA: Key; // system-manager (merchant-accounts.write), merchant account A only
  victimB: Key; // analyst, merchant account B only: the key the key-management attacks aim at
  deleted: Key; // deleted over the API after use
  deactivated: Key; // active: false over the API after use
  inactive: Key; // created inactive
  /** Tokens of `deleted` and `deactivated` verified (and cached) while their keys were active. */
  deletedToken: string;
  deactivatedToken: string;
  txA: string; // authorized, account A
  txB: string; // authorized, account B
  capturedA: string; // captured, account A
  capturedB: string; // captured, account B
  connectionA: string;
}
const w = {} as World;
let h: Harness;
let stores: [string, Database.Database][] = [];
/** An administrator token for reading the watched resources. */
let adminToken: string;

// ---- tokens, well-formed and otherwise --------------------------------------------------------------------------

const b64 = (value: string | Buffer): string => Buffer.from(value).toString('base64url');
const json = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));
const now = (): number => Math.floor(Date.now() / 1000);
const claims = (scopes: unknown = ['*.read', '*.write'], extra: Record<string, unknown> = {}) => ({
  scopes,
  iat: now(),
  nbf: now(),
  exp: now() + 300,
  jti: randomUUID(),
  ...extra,
});
const header = (key: Key, extra: Record<string, unknown> = {}) => ({
  alg: 'ES512',
  typ: 'JWT',
  kid: key.kid,
  ...extra,
});

/** Any header and claims (objects, or raw JSON text for duplicated members), signed as ES512/ES256/RS256 with any key. */
function craft(head: unknown, body: unknown, signer: { pem: string; hash?: 'sha256' | 'sha512' }): string {
  const input = `${b64(json(head))}.${b64(json(body))}`;
  const key = createPrivateKey(signer.pem);
  const signature = sign(
    signer.hash ?? 'sha512',
    Buffer.from(input),
    key.asymmetricKeyType === 'ec' ? { key, dsaEncoding: 'ieee-p1363' } : key,
  );
  return `${input}.${b64(signature)}`;
}
const es512 = (key: Key) => ({ pem: key.privateKeyPem });
const token = (
  key: Key,
  scopes: readonly string[] = ['*.read', '*.write'],
  options: { iatOffset?: number; nbfOffset?: number; expiresIn?: number } = {},
) => signToken({ kid: key.kid, privateKeyPem: key.privateKeyPem, scopes, expiresIn: 300, ...options });

const pem = (type: 'ec' | 'rsa', curve?: string): string =>
  (type === 'ec'
    ? generateKeyPairSync('ec', { namedCurve: curve! })
    : generateKeyPairSync('rsa', { modulusLength: 2048 })
  ).privateKey
    .export({ format: 'pem', type: 'pkcs8' })
    .toString();
const attackerP521 = pem('ec', 'P-521');
const attackerP256 = pem('ec', 'P-256');
const attackerRsa = pem('rsa');
const attackerJwk = createPublicKey(attackerP521).export({ format: 'jwk' });
/** A thumbprint-shaped kid no key has (RFC 7638 of the attacker's key). */
const attackerKid = createHash('sha256')
  .update(JSON.stringify({ crv: attackerJwk.crv, kty: attackerJwk.kty, x: attackerJwk.x, y: attackerJwk.y }))
  .digest('base64url');

/** Flips one bit of one byte of a segment's decoded bytes, and encodes it again. */
function flipBit(jwt: string, segment: number, byte: number, bit: number): string {
  const parts = jwt.split('.');
  const bytes = Buffer.from(parts[segment]!, 'base64url');
  bytes[byte % bytes.length]! ^= 1 << bit;
  parts[segment] = bytes.toString('base64url');
  return parts.join('.');
}

// ---- requests and their traces ----------------------------------------------------------------------------------

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

interface Attack {
  readonly family: string;
  readonly attack: string;
  readonly method: Method;
  readonly path: () => string;
  readonly body?: () => object;
  /** The merchant account header; an array sends it once per value. */
  readonly account?: string | readonly string[];
  /** The bearer token. */
  readonly token: () => Promise<string> | string;
  readonly status: 401 | 403 | 404 | 431;
  /** The spec body's `code`; absent where Node/Fastify answer before the application (431: their own body). */
  readonly code?: string;
  /** What the refusal's message must say: the row is refused for the reason it tests, not another. */
  readonly because?: RegExp;
}

const payment = () => ({ amount: 1_234, currency: 'USD', payment_method: card() });
const connection = () => ({
  display_name: 'Attack connection',
  payment_service_definition_id: 'mock-card',
  fields: [{ key: 'merchant_id', value: 'sim-attack' }],
  accepted_currencies: ['USD'],
  accepted_countries: ['US'],
});
const newKey =
  (roles: string[], extra: Record<string, unknown> = {}) =>
  () => ({ display_name: 'attacker key', role_ids: roles.map(roleId), ...extra });

async function send(
  method: Method,
  url: string,
  options: { token?: string; account?: string | readonly string[]; body?: object },
) {
  let call = h.http()[method.toLowerCase() as 'get' | 'post' | 'put' | 'delete'](url);
  if (options.token !== undefined) call = call.set('authorization', `Bearer ${options.token}`);
  if (options.account !== undefined) call = call.set(ACCOUNT_HEADER, options.account as string);
  return options.body !== undefined ? call.send(options.body) : call;
}

/** The resources the attacks aim at (path, merchant account), read by the administrator: unchanged after every attack. */
const watched = (): [string, string?][] => [
  [`/transactions/${w.txA}`, A],
  [`/transactions/${w.txB}`, B],
  [`/transactions/${w.capturedA}`, A],
  [`/transactions/${w.capturedB}`, B],
  [`/transactions/${w.capturedB}/refunds`, B],
  [`/payment-services/${w.connectionA}`, A],
  [`/merchant-accounts/${B}`],
  ...[w.victimB, w.managerA, w.manager, w.admin, w.deleted, w.deactivated, w.inactive].map((key): [string] => [
    `/api-key-pairs/${key.id}`,
  ]),
  ['/api-key-pairs?limit=100'],
];

interface Trace {
  readonly events: Record<string, { count: number; position: number }>;
  readonly provider: string;
  readonly resources: unknown[];
}

async function trace(): Promise<Trace> {
  const events: Trace['events'] = {};
  for (const [service, db] of stores)
    events[service] = db
      .prepare('SELECT COUNT(*) AS count, COALESCE(MAX(position), 0) AS position FROM events')
      .get() as { count: number; position: number };
  const resources = [];
  for (const [url, account] of watched()) {
    const response = await send('GET', url, { token: adminToken, ...(account ? { account } : {}) });
    resources.push({ status: response.status, body: response.body });
  }
  return { events, provider: JSON.stringify(h.simulator.ledger.all()), resources };
}

/** What changed between two traces: a store's events, the card simulator's ledger, or a watched resource (its path). */
function changes(before: Trace, after: Trace): string[] {
  const changed = Object.keys(before.events)
    .filter((service) => !isDeepStrictEqual(before.events[service], after.events[service]))
    .map((service) => `${service} events`);
  if (before.provider !== after.provider) changed.push('card simulator ledger');
  const paths = watched();
  before.resources.forEach((resource, index) => {
    if (!isDeepStrictEqual(resource, after.resources[index])) changed.push(paths[index]![0]);
  });
  return changed;
}

// ---- the table --------------------------------------------------------------------------------------------------

const unauthorized = { status: 401, code: 'unauthorized' } as const;
const forbidden = { status: 403, code: 'forbidden' } as const;
const notFound = { status: 404, code: 'not_found' } as const;
const createPayment = { method: 'POST', path: () => '/transactions', body: payment, account: A } as const;

const attacks: Attack[] = [
  // Algorithms: only ES512 with the key pair's own public key.
  {
    family: 'algorithm',
    attack: 'alg none, no signature',
    ...createPayment,
    token: () => unsignedToken(w.admin.kid, ['*.write']),
    ...unauthorized,
    because: /ES512/,
  },
  {
    family: 'algorithm',
    attack: 'alg "NONE" with a real ES512 signature',
    ...createPayment,
    token: () => craft(header(w.admin, { alg: 'NONE' }), claims(), es512(w.admin)),
    ...unauthorized,
    because: /ES512/,
  },
  {
    family: 'algorithm',
    attack: 'HS256 keyed with the public key (key confusion)',
    ...createPayment,
    token: () => hs256WithPublicKey(w.admin.privateKeyPem, w.admin.kid, ['*.write']),
    ...unauthorized,
    because: /ES512/,
  },
  {
    family: 'algorithm',
    attack: 'ES256 instead of ES512 (a P-256 key, the victim kid)',
    ...createPayment,
    token: () => craft(header(w.admin, { alg: 'ES256' }), claims(), { pem: attackerP256, hash: 'sha256' }),
    ...unauthorized,
    because: /ES512/,
  },
  {
    family: 'algorithm',
    attack: 'RS256 with an attacker RSA key',
    ...createPayment,
    token: () => craft(header(w.admin, { alg: 'RS256' }), claims(), { pem: attackerRsa, hash: 'sha256' }),
    ...unauthorized,
    because: /ES512/,
  },
  {
    family: 'algorithm',
    attack: 'ES512 signed by an attacker P-521 key, the victim kid',
    ...createPayment,
    token: () => craft(header(w.admin), claims(), { pem: attackerP521 }),
    ...unauthorized,
    because: /signature/,
  },
  {
    family: 'algorithm',
    attack: "the attacker's key in the header (jwk, jku), the victim kid",
    ...createPayment,
    token: () =>
      craft(header(w.admin, { jwk: attackerJwk, jku: 'http://127.0.0.1:9/jwks.json' }), claims(), {
        pem: attackerP521,
      }),
    ...unauthorized,
    because: /signature/,
  },

  // kid: the key is found by kid, and must be the key that signed.
  {
    family: 'kid',
    attack: "signed by key A (analyst) with key B's kid (administrator)",
    ...createPayment,
    token: () => craft(header(w.admin), claims(), es512(w.analyst)),
    ...unauthorized,
    because: /signature/,
  },
  {
    family: 'kid',
    attack: 'an unknown kid (a thumbprint no key has)',
    ...createPayment,
    token: () => craft({ alg: 'ES512', kid: attackerKid }, claims(), { pem: attackerP521 }),
    ...unauthorized,
    because: /no API key pair/,
  },
  {
    family: 'kid',
    attack: 'no kid',
    ...createPayment,
    token: () => craft({ alg: 'ES512', typ: 'JWT' }, claims(), es512(w.admin)),
    ...unauthorized,
    because: /kid/,
  },
  {
    family: 'kid',
    attack: 'kid not a string',
    ...createPayment,
    token: () => craft({ alg: 'ES512', kid: [w.admin.kid] }, claims(), es512(w.admin)),
    ...unauthorized,
    because: /kid/,
  },
  {
    family: 'kid',
    attack: 'kid with injection characters',
    ...createPayment,
    token: () => craft({ alg: 'ES512', kid: `${w.admin.kid}' OR '1'='1` }, claims(), es512(w.admin)),
    ...unauthorized,
    because: /no API key pair/,
  },

  // Lifetime: exp required; exp, nbf and iat checked with the 30 s skew.
  {
    family: 'lifetime',
    attack: 'expired 90 s ago',
    ...createPayment,
    token: () => token(w.admin, ['*.write'], { iatOffset: -120, expiresIn: 30 }),
    ...unauthorized,
    because: /expired/,
  },
  {
    family: 'lifetime',
    attack: 'not valid before 5 minutes from now (nbf)',
    ...createPayment,
    token: () => token(w.admin, ['*.write'], { nbfOffset: 300, expiresIn: 600 }),
    ...unauthorized,
    because: /nbf/,
  },
  {
    family: 'lifetime',
    attack: 'nbf 60 s ahead, beyond the 30 s skew',
    ...createPayment,
    token: () => token(w.admin, ['*.write'], { nbfOffset: 60 }),
    ...unauthorized,
    because: /nbf/,
  },
  {
    family: 'lifetime',
    attack: 'issued 5 minutes in the future (iat)',
    ...createPayment,
    token: () => token(w.admin, ['*.write'], { iatOffset: 300 }),
    ...unauthorized,
    because: /future/,
  },
  {
    family: 'lifetime',
    attack: 'no exp',
    ...createPayment,
    token: () => craft(header(w.admin), { scopes: ['*.write'], iat: now() }, es512(w.admin)),
    ...unauthorized,
    because: /exp/,
  },
  {
    family: 'lifetime',
    attack: 'exp as a string',
    ...createPayment,
    token: () => craft(header(w.admin), claims(['*.write'], { exp: String(now() + 300) }), es512(w.admin)),
    ...unauthorized,
    because: /exp/,
  },

  // Revoked keys: a token cached while the key was active stops working at once.
  {
    family: 'revoked key',
    attack: 'a key deleted over the API (its token cached before)',
    ...createPayment,
    token: () => w.deletedToken,
    ...unauthorized,
    because: /no API key pair/,
  },
  {
    family: 'revoked key',
    attack: 'a key deleted over the API (a fresh token)',
    ...createPayment,
    token: () => token(w.deleted),
    ...unauthorized,
    because: /no API key pair/,
  },
  {
    family: 'revoked key',
    attack: 'a key deactivated over the API (its token cached before)',
    ...createPayment,
    token: () => w.deactivatedToken,
    ...unauthorized,
    because: /not active/,
  },
  {
    family: 'revoked key',
    attack: 'a key created inactive',
    ...createPayment,
    token: () => token(w.inactive),
    ...unauthorized,
    because: /not active/,
  },

  // An embed token reaches only the endpoints that name `embed` (its success on one is the control test below).
  {
    family: 'embed token',
    attack: 'capture',
    method: 'POST',
    path: () => `/transactions/${w.txA}/capture`,
    body: () => ({}),
    account: A,
    token: () => token(w.integration, ['embed']),
    ...forbidden,
    because: /scope/,
  },
  {
    family: 'embed token',
    attack: 'list transactions',
    method: 'GET',
    path: () => '/transactions',
    account: A,
    token: () => token(w.integration, ['embed']),
    ...forbidden,
    because: /scope/,
  },
  {
    family: 'embed token',
    attack: 'create a connection',
    method: 'POST',
    path: () => '/payment-services',
    body: connection,
    account: A,
    token: () => token(w.integration, ['embed']),
    ...forbidden,
    because: /scope/,
  },
  {
    family: 'embed token',
    attack: 'create a transaction contradicting its pinned amount',
    ...createPayment,
    token: () => craft(header(w.integration), claims(['embed'], { embed: { amount: 999 } }), es512(w.integration)),
    ...forbidden,
    because: /amount 1234 does not match the amount 999/,
  },
  {
    family: 'embed token',
    attack: 'create a transaction with a card, the token bound to a checkout session',
    ...createPayment,
    token: () =>
      craft(header(w.integration), claims(['embed'], { checkout_session_id: randomUUID() }), es512(w.integration)),
    ...forbidden,
    because: /checkout session/,
  },
  {
    family: 'embed token',
    attack: 'create a key pair',
    method: 'POST',
    path: () => '/api-key-pairs',
    body: newKey(['integration']),
    token: () => token(w.manager, ['embed']),
    ...forbidden,
    because: /scope/,
  },

  // Scope escalation: the token's scopes AND the key's roles must both grant a write.
  {
    family: 'scope escalation',
    attack: '*.read token: POST /transactions',
    ...createPayment,
    token: () => token(w.admin, ['*.read']),
    ...forbidden,
    because: /scope/,
  },
  {
    family: 'scope escalation',
    attack: '*.read token: POST refunds',
    method: 'POST',
    path: () => `/transactions/${w.capturedA}/refunds`,
    body: () => ({}),
    account: A,
    token: () => token(w.admin, ['*.read']),
    ...forbidden,
    because: /scope/,
  },
  {
    family: 'scope escalation',
    attack: '*.read token: PUT /transactions/{id}',
    method: 'PUT',
    path: () => `/transactions/${w.txA}`,
    body: () => ({ external_identifier: 'hijack' }),
    account: A,
    token: () => token(w.admin, ['*.read']),
    ...forbidden,
    because: /scope/,
  },
  {
    family: 'scope escalation',
    attack: '*.read token: DELETE /payment-services/{id}',
    method: 'DELETE',
    path: () => `/payment-services/${w.connectionA}`,
    account: A,
    token: () => token(w.admin, ['*.read']),
    ...forbidden,
    because: /scope/,
  },
  {
    family: 'scope escalation',
    attack: 'transactions.read token: capture',
    method: 'POST',
    path: () => `/transactions/${w.txA}/capture`,
    body: () => ({}),
    account: A,
    token: () => token(w.admin, ['transactions.read']),
    ...forbidden,
    because: /scope/,
  },
  {
    family: 'scope escalation',
    attack: 'transactions.read token: void',
    method: 'POST',
    path: () => `/transactions/${w.txA}/void`,
    account: A,
    token: () => token(w.admin, ['transactions.read']),
    ...forbidden,
    because: /scope/,
  },
  {
    family: 'scope escalation',
    attack: 'transactions.read token: DELETE a key pair',
    method: 'DELETE',
    path: () => `/api-key-pairs/${w.victimB.id}`,
    token: () => token(w.admin, ['transactions.read']),
    ...forbidden,
    because: /scope/,
  },
  {
    family: 'scope escalation',
    attack: '*.write token of a read-only key (analyst)',
    ...createPayment,
    token: () => token(w.analyst, ['*.write']),
    ...forbidden,
    because: /roles/,
  },
  ...['*', '*.*', 'transactions.*', 'TRANSACTIONS.WRITE', 'transactions.write ', 'transactions', 'write'].map(
    (scope): Attack => ({
      family: 'scope escalation',
      attack: `a scope spelled ${JSON.stringify(scope)}`,
      ...createPayment,
      token: () => token(w.admin, [scope]),
      ...forbidden,
      because: /scope/,
    }),
  ),

  // Cross-merchant: a key limited to account A, against account B's transactions.
  {
    family: 'cross-merchant',
    attack: "header B: read B's transaction",
    method: 'GET',
    path: () => `/transactions/${w.txB}`,
    account: B,
    token: () => token(w.limitedA),
    ...forbidden,
    because: /merchant account attack-b/,
  },
  {
    family: 'cross-merchant',
    attack: "header B: capture B's transaction",
    method: 'POST',
    path: () => `/transactions/${w.txB}/capture`,
    body: () => ({}),
    account: B,
    token: () => token(w.limitedA),
    ...forbidden,
    because: /merchant account attack-b/,
  },
  {
    family: 'cross-merchant',
    attack: 'header B: create a transaction in B',
    ...createPayment,
    account: B,
    token: () => token(w.limitedA),
    ...forbidden,
    because: /merchant account attack-b/,
  },
  {
    family: 'cross-merchant',
    attack: 'no header (the default account)',
    ...createPayment,
    account: undefined,
    token: () => token(w.limitedA),
    ...forbidden,
    because: /merchant account default/,
  },
  {
    family: 'cross-merchant',
    attack: 'header sent twice (A, then B)',
    ...createPayment,
    account: [A, B],
    token: () => token(w.limitedA),
    ...forbidden,
    because: /merchant account/,
  },
  {
    family: 'cross-merchant',
    attack: "header A: read B's transaction by id",
    method: 'GET',
    path: () => `/transactions/${w.txB}`,
    account: A,
    token: () => token(w.limitedA),
    ...notFound,
  },
  {
    family: 'cross-merchant',
    attack: "header A: capture B's transaction by id",
    method: 'POST',
    path: () => `/transactions/${w.txB}/capture`,
    body: () => ({}),
    account: A,
    token: () => token(w.limitedA),
    ...notFound,
  },
  {
    family: 'cross-merchant',
    attack: "header A: void B's transaction by id",
    method: 'POST',
    path: () => `/transactions/${w.txB}/void`,
    account: A,
    token: () => token(w.limitedA),
    ...notFound,
  },
  {
    family: 'cross-merchant',
    attack: "header A: refund B's captured transaction by id",
    method: 'POST',
    path: () => `/transactions/${w.capturedB}/refunds`,
    body: () => ({}),
    account: A,
    token: () => token(w.limitedA),
    ...notFound,
  },
  {
    family: 'cross-merchant',
    attack: "header A: PUT B's transaction by id",
    method: 'PUT',
    path: () => `/transactions/${w.txB}`,
    body: () => ({ external_identifier: 'hijack' }),
    account: A,
    token: () => token(w.limitedA),
    ...notFound,
  },
  {
    family: 'cross-merchant',
    attack: 'update merchant account B',
    method: 'PUT',
    path: () => `/merchant-accounts/${B}`,
    body: () => ({ display_name: 'hijacked' }),
    token: () => token(w.systemA),
    ...forbidden,
    because: /merchant account attack-b/,
  },

  // Key management needs the key-manager role (scopes api-key-pairs.*), whatever the token claims.
  {
    family: 'key management without key-manager',
    attack: 'integration key: create a key pair',
    method: 'POST',
    path: () => '/api-key-pairs',
    body: newKey(['integration']),
    token: () => token(w.integration),
    ...forbidden,
    because: /roles/,
  },
  {
    family: 'key management without key-manager',
    attack: 'integration key: delete a key pair',
    method: 'DELETE',
    path: () => `/api-key-pairs/${w.victimB.id}`,
    token: () => token(w.integration),
    ...forbidden,
    because: /roles/,
  },
  {
    family: 'key management without key-manager',
    attack: 'integration key: deactivate a key pair',
    method: 'PUT',
    path: () => `/api-key-pairs/${w.victimB.id}`,
    body: () => ({ active: false }),
    token: () => token(w.integration),
    ...forbidden,
    because: /roles/,
  },
  {
    family: 'key management without key-manager',
    attack: 'analyst key with a *.write token: create a key pair',
    method: 'POST',
    path: () => '/api-key-pairs',
    body: newKey(['analyst']),
    token: () => token(w.analyst, ['*.write']),
    ...forbidden,
    because: /roles/,
  },
  {
    family: 'key management without key-manager',
    attack: 'key manager with a token lacking api-key-pairs.write',
    method: 'POST',
    path: () => '/api-key-pairs',
    body: newKey(['analyst']),
    token: () => token(w.manager, ['transactions.write', 'api-key-pairs.read']),
    ...forbidden,
    because: /scope/,
  },

  // Administrator and key-managing roles are assigned by dashboard users only, never by an API key.
  {
    family: 'role escalation',
    attack: 'key manager creates an administrator key',
    method: 'POST',
    path: () => '/api-key-pairs',
    body: newKey(['administrator']),
    token: () => token(w.manager),
    ...forbidden,
    because: /only a dashboard user can assign administrator/,
  },
  {
    family: 'role escalation',
    attack: 'administrator key creates an administrator key',
    method: 'POST',
    path: () => '/api-key-pairs',
    body: newKey(['administrator']),
    token: () => token(w.admin),
    ...forbidden,
    because: /needs the key-manager role/,
  },
  {
    family: 'role escalation',
    attack: 'key manager creates a key-manager key',
    method: 'POST',
    path: () => '/api-key-pairs',
    body: newKey(['key-manager', 'analyst']),
    token: () => token(w.manager),
    ...forbidden,
    because: /only a dashboard user can assign key-manager/,
  },
  {
    family: 'role escalation',
    attack: 'key manager makes another key administrator',
    method: 'PUT',
    path: () => `/api-key-pairs/${w.victimB.id}`,
    body: () => ({ role_ids: [roleId('administrator')] }),
    token: () => token(w.manager),
    ...forbidden,
    because: /only a dashboard user/,
  },
  {
    family: 'role escalation',
    attack: 'key manager makes itself administrator',
    method: 'PUT',
    path: () => `/api-key-pairs/${w.manager.id}`,
    body: () => ({ role_ids: [roleId('administrator')] }),
    token: () => token(w.manager),
    ...forbidden,
    because: /only a dashboard user/,
  },

  // A key manager limited to account A manages only keys limited to (some of) its accounts.
  {
    family: 'merchant-limited key manager',
    attack: 'creates a key for every merchant account',
    method: 'POST',
    path: () => '/api-key-pairs',
    body: newKey(['integration']),
    token: () => token(w.managerA),
    ...forbidden,
    because: /limited to merchant accounts/,
  },
  {
    family: 'merchant-limited key manager',
    attack: 'creates a key for account B',
    method: 'POST',
    path: () => '/api-key-pairs',
    body: newKey(['integration'], { merchant_account_ids: [B] }),
    token: () => token(w.managerA),
    ...forbidden,
    because: /limited to merchant accounts/,
  },
  {
    family: 'merchant-limited key manager',
    attack: 'widens its own key to every account',
    method: 'PUT',
    path: () => `/api-key-pairs/${w.managerA.id}`,
    body: () => ({ merchant_account_ids: [] }),
    token: () => token(w.managerA),
    ...forbidden,
    because: /limited to merchant accounts/,
  },
  {
    family: 'merchant-limited key manager',
    attack: "deactivates account B's key",
    method: 'PUT',
    path: () => `/api-key-pairs/${w.victimB.id}`,
    body: () => ({ active: false }),
    token: () => token(w.managerA),
    ...forbidden,
    because: /limited to merchant accounts/,
  },
  {
    family: 'merchant-limited key manager',
    attack: "deletes account B's key",
    method: 'DELETE',
    path: () => `/api-key-pairs/${w.victimB.id}`,
    token: () => token(w.managerA),
    ...forbidden,
    because: /limited to merchant accounts/,
  },

  // Integrity: any change to a signed token breaks it.
  {
    family: 'integrity',
    attack: 'one signature byte flipped',
    ...createPayment,
    token: async () => tamperSignature(await token(w.admin)),
    ...unauthorized,
    because: /signature/,
  },
  {
    family: 'integrity',
    attack: 'claims swapped for wider ones, signature kept',
    ...createPayment,
    token: async () => swapPayload(await token(w.admin, ['transactions.read']), claims(['*.write'])),
    ...unauthorized,
    because: /signature/,
  },
  {
    family: 'integrity',
    attack: "another token's signature spliced on",
    ...createPayment,
    token: async () =>
      `${(await token(w.admin, ['*.write'])).split('.').slice(0, 2).join('.')}.${(await token(w.admin, ['*.read'])).split('.')[2]}`,
    ...unauthorized,
    because: /signature/,
  },
  {
    family: 'integrity',
    attack: 'signature stripped',
    ...createPayment,
    token: async () => `${(await token(w.admin)).split('.').slice(0, 2).join('.')}.`,
    ...unauthorized,
  },

  // Shape: size, critical extensions, repeated members, claim types.
  {
    family: 'shape',
    attack: 'a 10 KB header, validly signed',
    ...createPayment,
    token: () => craft(header(w.admin, { pad: 'x'.repeat(10_000) }), claims(), es512(w.admin)),
    ...unauthorized,
    because: /longer than/,
  },
  {
    family: 'shape',
    attack: 'a 10 KB payload, validly signed',
    ...createPayment,
    token: () => craft(header(w.admin), claims(['*.write'], { pad: 'x'.repeat(10_000) }), es512(w.admin)),
    ...unauthorized,
    because: /longer than/,
  },
  {
    family: 'shape',
    attack: "a 20 KB token, past Node's header limit",
    ...createPayment,
    token: () => craft(header(w.admin), claims(['*.write'], { pad: 'x'.repeat(20_000) }), es512(w.admin)),
    status: 431,
  },
  {
    family: 'shape',
    attack: 'crit names an unknown extension',
    ...createPayment,
    token: () => craft(header(w.admin, { crit: ['x-trust-me'], 'x-trust-me': true }), claims(), es512(w.admin)),
    ...unauthorized,
    because: /signature/,
  },
  {
    family: 'shape',
    attack: 'crit b64: false (unencoded payload)',
    ...createPayment,
    token: () => craft(header(w.admin, { crit: ['b64'], b64: false }), claims(), es512(w.admin)),
    ...unauthorized,
    because: /signature/,
  },
  {
    family: 'shape',
    attack: 'scopes claim twice (read first, write last)',
    ...createPayment,
    token: () =>
      craft(
        header(w.integration),
        `{"scopes":["transactions.read"],"iat":${now()},"exp":${now() + 300},"scopes":["transactions.write"]}`,
        es512(w.integration),
      ),
    ...unauthorized,
    because: /repeats the member "scopes"/,
  },
  {
    family: 'shape',
    attack: 'exp claim twice (expired first, valid last)',
    ...createPayment,
    token: () =>
      craft(
        header(w.admin),
        `{"scopes":["*.write"],"exp":${now() - 3600},"iat":${now()},"exp":${now() + 300}}`,
        es512(w.admin),
      ),
    ...unauthorized,
    because: /repeats the member "exp"/,
  },
  {
    family: 'shape',
    attack: 'alg header twice (none first, ES512 last)',
    ...createPayment,
    token: () => craft(`{"alg":"none","kid":"${w.admin.kid}","alg":"ES512"}`, claims(), es512(w.admin)),
    ...unauthorized,
    because: /repeats the member "alg"/,
  },
  {
    family: 'shape',
    attack: 'kid header twice (another key first)',
    ...createPayment,
    token: () => craft(`{"alg":"ES512","kid":"${w.analyst.kid}","kid":"${w.admin.kid}"}`, claims(), es512(w.admin)),
    ...unauthorized,
    because: /repeats the member "kid"/,
  },
  ...(
    [
      ['a string', '*.write'],
      ['a space-separated string', 'transactions.read transactions.write'],
      ['an object', { 0: '*.write', length: 1 }],
      ['nested arrays', [['*.write']]],
      ['numbers', [1, 2]],
      ['null', null],
    ] as const
  ).map(
    ([what, scopes]): Attack => ({
      family: 'shape',
      attack: `scopes claim is ${what}`,
      ...createPayment,
      token: () => craft(header(w.admin), claims(scopes), es512(w.admin)),
      ...unauthorized,
      because: /scopes/,
    }),
  ),
  {
    family: 'shape',
    attack: 'no scopes claim',
    ...createPayment,
    token: () => craft(header(w.admin), { iat: now(), exp: now() + 300 }, es512(w.admin)),
    ...unauthorized,
    because: /scopes/,
  },
  {
    family: 'shape',
    attack: 'claims are a JSON array',
    ...createPayment,
    token: () => craft(header(w.admin), [claims()], es512(w.admin)),
    ...unauthorized,
  },
  {
    family: 'shape',
    attack: 'five segments (JWE-shaped)',
    ...createPayment,
    token: async () => `${await token(w.admin)}.x.y`,
    ...unauthorized,
  },
];

// ---- the run ----------------------------------------------------------------------------------------------------

interface Row {
  readonly family: string;
  readonly attack: string;
  readonly request: string;
  readonly expected: { status: number; code: string | null };
  readonly actual: { status: number; code: string | null };
  readonly refused: boolean;
  readonly side_effects: string[];
}
const rows: Row[] = [];
const flips = { tried: 0, refused: 0, side_effects: [] as string[] };

async function operatorKey(
  name: string,
  roles: string[],
  extra: { merchant_account_ids?: string[]; active?: boolean } = {},
): Promise<Key> {
  const created = await h.fixture.service.identity.apiKeyPairs.create(
    { display_name: name, roles, ...extra },
    operator,
  );
  return { id: created.id, kid: created.kid, privateKeyPem: created.private_key! };
}

beforeAll(async () => {
  // No usage flush during the run: ApiKeyPairUsed would be an identity event no attack caused.
  h = await startHarness('auth-attacks', { env: { KEY_USAGE_FLUSH_MS: '300000' } });
  w.admin = await operatorKey('admin', ['administrator']);
  adminToken = await token(w.admin, ['*.read'], { expiresIn: 3600 });
  await h.createAccount(A);
  await h.createAccount(B);
  w.connectionA = await h.createConnection(A);
  await h.createConnection(B);

  w.integration = await operatorKey('integration', ['integration']);
  w.analyst = await operatorKey('analyst', ['analyst']);
  w.manager = await operatorKey('manager', ['key-manager', 'integration']);
  w.limitedA = await operatorKey('limited to A', ['integration'], { merchant_account_ids: [A] });
  w.managerA = await operatorKey('manager of A', ['key-manager', 'integration'], { merchant_account_ids: [A] });
  w.systemA = await operatorKey('system manager of A', ['system-manager'], { merchant_account_ids: [A] });
  w.victimB = await operatorKey('victim in B', ['analyst'], { merchant_account_ids: [B] });
  w.deleted = await operatorKey('deleted', ['integration']);
  w.deactivated = await operatorKey('deactivated', ['integration']);
  w.inactive = await operatorKey('inactive', ['integration'], { active: false });

  const authorize = async (account: string, intent: 'authorize' | 'capture') => {
    const response = await send('POST', '/transactions', {
      token: await token(w.admin),
      account,
      body: { ...payment(), intent },
    });
    expect(response.status, response.text).toBe(201);
    return response.body.id as string;
  };
  w.txA = await authorize(A, 'authorize');
  w.txB = await authorize(B, 'authorize');
  w.capturedA = await authorize(A, 'capture');
  w.capturedB = await authorize(B, 'capture');
  expect(
    (
      await send('POST', `/transactions/${w.capturedB}/refunds`, {
        token: await token(w.admin),
        account: B,
        body: { amount: 100 },
      })
    ).status,
  ).toBe(201);

  // The revoked keys worked (their tokens are now in the verified-token cache), then were revoked over the API.
  w.deletedToken = await token(w.deleted, ['*.read', '*.write'], { expiresIn: 600 });
  w.deactivatedToken = await token(w.deactivated, ['*.read', '*.write'], { expiresIn: 600 });
  for (const used of [w.deletedToken, w.deactivatedToken])
    expect((await send('GET', '/transactions', { token: used, account: A })).status).toBe(200);
  expect((await send('DELETE', `/api-key-pairs/${w.deleted.id}`, { token: await token(w.manager) })).status).toBe(204);
  expect(
    (
      await send('PUT', `/api-key-pairs/${w.deactivated.id}`, {
        token: await token(w.manager),
        body: { active: false },
      })
    ).status,
  ).toBe(200);

  const dataDir = h.fixture.dataDir;
  stores = ['identity', 'transactions', 'webhooks'].map((service) => [
    service,
    new Database(path.join(dataDir, `${service}.db`), { readonly: true, fileMustExist: true }),
  ]);
});

afterAll(async () => {
  const refused = rows.filter((row) => row.refused).length;
  const sideEffects = rows.filter((row) => row.side_effects.length > 0).length + flips.side_effects.length;
  const figures = {
    attacks_tried: rows.length + flips.tried,
    refused: refused + flips.refused,
    side_effects_found: sideEffects,
    table: {
      rows: rows.length,
      refused,
      by_status: countBy(rows.map((row) => String(row.actual.status))),
      by_family: countBy(rows.map((row) => row.family)),
    },
    bit_flips: { tried: flips.tried, refused: flips.refused, side_effects: flips.side_effects },
    rows,
  };
  writeResults('auth-attacks', figures);
  console.log(
    `auth-attacks (${full ? 'full' : 'ci'}): ${figures.attacks_tried} attacks tried (${rows.length} table rows, ${flips.tried} bit flips), ${figures.refused} refused, ${sideEffects} side effects`,
  );
  for (const [, db] of stores) db.close();
  await h?.stop();
});

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

describe('controls: what the attacks imitate works', () => {
  it('a crafted ES512 token of a real key, with nothing forged, is accepted; also with 3 KB of embed claims', async () => {
    expect(
      (
        await send('GET', '/transactions', {
          token: craft(header(w.admin), claims(['*.read']), es512(w.admin)),
          account: A,
        })
      ).status,
    ).toBe(200);
    const embed = { amount: 1_234, currency: 'USD', metadata: { order: 'x'.repeat(3_000) } };
    expect(
      (
        await send('GET', '/transactions', {
          token: craft(header(w.admin), claims(['*.read'], { embed }), es512(w.admin)),
          account: A,
        })
      ).status,
    ).toBe(200);
  });

  it('an embed token works on an endpoint that names embed (GET /buyers/gift-cards, for the buyer it pins)', async () => {
    const buyer = randomUUID();
    const embedToken = await signToken({
      kid: w.integration.kid,
      privateKeyPem: w.integration.privateKeyPem,
      scopes: ['embed'],
      expiresIn: 300,
      extraClaims: { embed: { buyer_id: buyer } },
    });
    const response = await send('GET', `/buyers/gift-cards?buyer_id=${buyer}`, { token: embedToken, account: A });
    expect(response.status, response.text).toBe(200);
    expect(response.body.items).toEqual([]);
  });

  it('the key limited to account A reads its own transactions', async () => {
    expect((await send('GET', `/transactions/${w.txA}`, { token: await token(w.limitedA), account: A })).status).toBe(
      200,
    );
  });

  it('the merchant-limited key manager manages keys within its accounts', async () => {
    const created = await send('POST', '/api-key-pairs', {
      token: await token(w.managerA),
      body: { display_name: 'within A', role_ids: [roleId('integration')], merchant_account_ids: [A] },
    });
    expect(created.status, created.text).toBe(201);
    expect((await send('DELETE', `/api-key-pairs/${created.body.id}`, { token: await token(w.managerA) })).status).toBe(
      204,
    );
  });
});

describe('each attack is refused, with no side effect', () => {
  it.each(attacks.map((attack) => [`${attack.family}: ${attack.attack}`, attack] as const))(
    '%s',
    async (_name, attack) => {
      const url = attack.path();
      const before = await trace();
      const response = await send(attack.method, url, {
        token: await attack.token(),
        account: attack.account,
        ...(attack.body ? { body: attack.body() } : {}),
      });
      const after = await trace();
      const code = typeof response.body?.code === 'string' ? response.body.code : null;
      const row: Row = {
        family: attack.family,
        attack: attack.attack,
        request: `${attack.method} ${url}`,
        expected: { status: attack.status, code: attack.code ?? null },
        actual: { status: response.status, code },
        refused: response.status === attack.status && (attack.code === undefined || code === attack.code),
        side_effects: changes(before, after),
      };
      rows.push(row);
      expect(response.status, response.text.slice(0, 300)).toBe(attack.status);
      if (attack.code)
        expect(response.body).toEqual({
          type: 'error',
          code: attack.code,
          status: attack.status,
          message: expect.any(String),
          details: expect.any(Array),
        });
      if (attack.because) expect(response.body.message).toMatch(attack.because);
      expect(row.side_effects).toEqual([]);
    },
  );
});

describe('one bit flipped anywhere in a valid token', () => {
  it(`is refused, ${FLIPS} times, with no side effect`, async () => {
    const valid = await token(w.admin, ['*.read', '*.write'], { expiresIn: 3600 });
    expect((await send('GET', '/transactions', { token: valid, account: A })).status).toBe(200);
    const before = await trace();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 2 }),
        fc.nat(),
        fc.integer({ min: 0, max: 7 }),
        async (segment, byte, bit) => {
          const response = await send('POST', '/transactions', {
            token: flipBit(valid, segment, byte, bit),
            account: A,
            body: payment(),
          });
          flips.tried += 1;
          if (response.status === 401 && response.body.code === 'unauthorized') flips.refused += 1;
          expect(response.status).toBe(401);
        },
      ),
      { numRuns: FLIPS },
    );
    flips.side_effects.push(...changes(before, await trace()));
    expect(flips.side_effects).toEqual([]);
  });
});
