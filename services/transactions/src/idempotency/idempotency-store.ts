/**
 * `Idempotency-Key` for the transaction writes (create, capture, void, refunds): the first outcome of a
 * request is stored for 24 h in the service's own SQLite file and replayed to every later request with the
 * same key, so a client can retry after a timeout without charging twice.
 *
 * - Claim: one `BEGIN IMMEDIATE` transaction inserts the key as `running` (`INSERT ... ON CONFLICT DO NOTHING`),
 *   so of any number of concurrent requests, in this process or another one sharing the file, exactly one runs.
 * - Same key, different request (fingerprint): 409 `duplicate_record`.
 * - Same key while the first request is running: 409 `concurrent_request`.
 * - Same key, `running` for longer than the lease (the process died, or the request hung, mid-request): also
 *   409 `concurrent_request`, until the key expires. We cannot know whether the provider was called, so running
 *   the request again could charge twice; the client must check the resource and use a new key. The message
 *   says so (the lease only tells the two cases apart in the message).
 * - Outcome stored: a returned value (as JSON; it must be a JSON value, i.e. the response body) and an
 *   `ApiError` below 500 (replayed as an equal `ApiError`). Any other error (5xx, unavailable, bugs) deletes the
 *   key, so the client may retry with the same key.
 * - Expiry: `expires_at` is set to now + TTL on the claim and again when the outcome is stored (the response is
 *   kept for 24 h). An expired key counts as unused. Each claim purges up to 100 expired rows.
 *
 * Keys are compared exactly (binary); their length (1..255) is validated at the HTTP edge.
 */
import { createHmac } from 'node:crypto';
import { createHash, randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { ApiError, type ErrorBody } from '@switchyard/api';

export interface IdempotencyScope {
  readonly merchantAccountId: string;
  /** What the key protects, e.g. `transactions.create`, `transactions.capture:<transaction id>`. */
  readonly operation: string;
  /** The `Idempotency-Key` header, as sent. */
  readonly key: string;
}

export interface IdempotencyStoreOptions {
  readonly now?: () => Date;
  /** How long an outcome is kept and replayed; default 24 h. */
  readonly ttlMs?: number;
  /** How long a `running` key counts as in progress (rather than abandoned) in the 409's message; default 120 s. */
  readonly leaseMs?: number;
}

export const concurrentRequestCode = 'concurrent_request';

const defaultTtlMs = 24 * 60 * 60 * 1000;
const defaultLeaseMs = 120 * 1000;
const purgeBatchSize = 100;

type Outcome = 'value' | 'error';

interface KeyRow {
  state: 'running' | 'done';
  fingerprint: string;
  claim_id: string;
  started_at: number;
  expires_at: number;
  outcome: Outcome | null;
  response: string | null;
}

type Claim =
  | { readonly kind: 'claimed'; readonly claimId: string }
  | { readonly kind: 'replay'; readonly outcome: Outcome; readonly response: string | null }
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'running'; readonly startedAt: number; readonly expiresAt: number };

interface ScopeParams {
  merchantAccountId: string;
  operation: string;
  key: string;
}

export class IdempotencyStore {
  private readonly now: () => Date;
  private readonly ttlMs: number;
  private readonly leaseMs: number;
  private readonly claim: (scope: ScopeParams, fingerprint: string) => Claim;
  private readonly complete: Database.Statement<[ScopeParams & { claimId: string; outcome: Outcome; response: string | null; expiresAt: number }]>;
  private readonly release: Database.Statement<[ScopeParams & { claimId: string }]>;

  constructor(db: Database.Database, options: IdempotencyStoreOptions = {}) {
    this.now = options.now ?? (() => new Date());
    this.ttlMs = options.ttlMs ?? defaultTtlMs;
    this.leaseMs = options.leaseMs ?? defaultLeaseMs;

    // Times are epoch milliseconds. claim_id: which claim owns a `running` row, so a request whose key expired
    // and was claimed again meanwhile cannot overwrite or delete the new claim.
    db.exec(`
      CREATE TABLE IF NOT EXISTS idempotency_keys (
        merchant_account_id TEXT NOT NULL, operation TEXT NOT NULL, key TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('running', 'done')), fingerprint TEXT NOT NULL, claim_id TEXT NOT NULL,
        started_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
        outcome TEXT CHECK (outcome IN ('value', 'error')), response TEXT,
        PRIMARY KEY (merchant_account_id, operation, key));
      CREATE INDEX IF NOT EXISTS idempotency_keys_by_expiry ON idempotency_keys (expires_at);`);

    const purge = db.prepare<[number]>(
      `DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE expires_at <= ? ORDER BY expires_at LIMIT ${purgeBatchSize})`,
    );
    const insert = db.prepare<[ScopeParams & { fingerprint: string; claimId: string; startedAt: number; expiresAt: number }]>(
      `INSERT INTO idempotency_keys (merchant_account_id, operation, key, state, fingerprint, claim_id, started_at, expires_at)
       VALUES (@merchantAccountId, @operation, @key, 'running', @fingerprint, @claimId, @startedAt, @expiresAt)
       ON CONFLICT DO NOTHING`,
    );
    const select = db.prepare<[ScopeParams], KeyRow>(
      `SELECT state, fingerprint, claim_id, started_at, expires_at, outcome, response FROM idempotency_keys
       WHERE merchant_account_id = @merchantAccountId AND operation = @operation AND key = @key`,
    );
    const replace = db.prepare<[ScopeParams & { fingerprint: string; claimId: string; startedAt: number; expiresAt: number }]>(
      `UPDATE idempotency_keys SET state = 'running', fingerprint = @fingerprint, claim_id = @claimId, started_at = @startedAt,
         expires_at = @expiresAt, outcome = NULL, response = NULL
       WHERE merchant_account_id = @merchantAccountId AND operation = @operation AND key = @key`,
    );
    this.complete = db.prepare(
      `UPDATE idempotency_keys SET state = 'done', outcome = @outcome, response = @response, expires_at = @expiresAt
       WHERE merchant_account_id = @merchantAccountId AND operation = @operation AND key = @key AND claim_id = @claimId`,
    );
    this.release = db.prepare(
      `DELETE FROM idempotency_keys
       WHERE merchant_account_id = @merchantAccountId AND operation = @operation AND key = @key AND claim_id = @claimId`,
    );

    // IMMEDIATE: takes the write lock before reading, so the read-then-replace of an expired row is atomic also
    // across processes sharing the file.
    this.claim = db.transaction((scope: ScopeParams, fingerprint: string): Claim => {
      const now = this.now().getTime();
      purge.run(now);
      const claimId = randomUUID();
      const fresh = { ...scope, fingerprint, claimId, startedAt: now, expiresAt: now + this.ttlMs };
      if (insert.run(fresh).changes === 1) return { kind: 'claimed', claimId };
      const row = select.get(scope);
      if (row === undefined || row.expires_at <= now) {
        // Cannot be undefined inside the write transaction; expired: the key counts as unused.
        if (row === undefined) insert.run(fresh);
        else replace.run(fresh);
        return { kind: 'claimed', claimId };
      }
      if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
      if (row.state === 'running') return { kind: 'running', startedAt: row.started_at, expiresAt: row.expires_at };
      return { kind: 'replay', outcome: row.outcome ?? 'value', response: row.response };
    }).immediate;
  }

  /**
   * `run` for a request: without an Idempotency-Key it just executes; with one, the request's fingerprint is an
   * HMAC under `fingerprintKey` of the operation and body (bodies may hold card numbers or PINs, never kept in clear).
   */
  runRequest<T>(
    request: { readonly merchantAccountId: string; readonly operation: string; readonly key: string | undefined; readonly body: unknown; readonly fingerprintKey: Buffer },
    execute: () => Promise<T>,
  ): Promise<T> {
    if (request.key === undefined) return execute();
    const fingerprint = createHmac('sha256', request.fingerprintKey).update(requestFingerprint({ operation: request.operation, body: request.body })).digest('hex');
    return this.run({ merchantAccountId: request.merchantAccountId, operation: request.operation, key: request.key }, fingerprint, execute);
  }

  /**
   * Runs `execute` once per scope and key; replays its outcome (the value, or a 4xx `ApiError`) to every later
   * call with the same request fingerprint until the key expires. The value must survive `JSON.stringify`: a
   * replay returns the parsed JSON. Throws 409 `duplicate_record` for another fingerprint and 409
   * `concurrent_request` while the key is running.
   */
  async run<T>(scope: IdempotencyScope, requestFingerprint: string, execute: () => Promise<T>): Promise<T> {
    const params: ScopeParams = { merchantAccountId: scope.merchantAccountId, operation: scope.operation, key: scope.key };
    // Synchronous up to here: the claim is decided before this call yields.
    const claim = this.claim(params, requestFingerprint);
    switch (claim.kind) {
      case 'mismatch':
        throw new ApiError(409, 'This Idempotency-Key was already used with a different request', [], { code: 'duplicate_record' });
      case 'running':
        throw this.concurrentRequestError(claim.startedAt, claim.expiresAt);
      case 'replay':
        return replay<T>(claim.outcome, claim.response);
      case 'claimed':
        break;
    }

    let value: T;
    try {
      value = await execute();
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) {
        this.store(params, claim.claimId, 'error', JSON.stringify(error.toBody()));
      } else {
        try {
          this.release.run({ ...params, claimId: claim.claimId });
        } catch {
          // The key stays `running` and answers 409 until it expires; the request's own error matters more.
        }
      }
      throw error;
    }
    // If the value cannot be stored (not JSON, disk failure), this throws and the key stays `running`: the
    // operation did happen, so a retry must not run it again.
    this.store(params, claim.claimId, 'value', JSON.stringify(value) ?? null);
    return value;
  }

  private store(params: ScopeParams, claimId: string, outcome: Outcome, response: string | null): void {
    this.complete.run({ ...params, claimId, outcome, response, expiresAt: this.now().getTime() + this.ttlMs });
  }

  private concurrentRequestError(startedAt: number, expiresAt: number): ApiError {
    const inProgress = this.now().getTime() - startedAt < this.leaseMs;
    const message = inProgress
      ? 'A request with this Idempotency-Key is still being processed; retry after it completes'
      : `A request with this Idempotency-Key started at ${new Date(startedAt).toISOString()} did not complete, so its outcome is unknown; ` +
        `check the resource and retry with a new Idempotency-Key (this one can be reused after ${new Date(expiresAt).toISOString()})`;
    return new ApiError(409, message, [], { code: concurrentRequestCode });
  }
}

function replay<T>(outcome: Outcome, response: string | null): T {
  if (outcome === 'error') throw ApiError.fromBody(JSON.parse(response ?? 'null') as ErrorBody);
  return (response === null ? undefined : JSON.parse(response)) as T;
}

/**
 * SHA-256 (hex) of the value's canonical JSON: object keys sorted recursively, properties whose value is
 * `undefined` (or a function or symbol) dropped, as `JSON.stringify` does; `toJSON` applied. A top-level
 * `undefined` (no body) hashes as `null`.
 */
export function requestFingerprint(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

function canonicalJson(value: unknown): string {
  return JSON.stringify(canonicalize(value)) ?? 'null';
}

function canonicalize(value: unknown): unknown {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  if (Array.isArray(value)) return value.map((item) => (omitted(item) ? null : canonicalize(item)));
  if (value !== null && typeof value === 'object') {
    // No prototype: a `__proto__` key stays an ordinary property.
    const sorted = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(value).sort()) {
      const item = (value as Record<string, unknown>)[key];
      if (!omitted(item)) sorted[key] = canonicalize(item);
    }
    return sorted;
  }
  return value;
}

function omitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}
