/**
 * `Idempotency-Key` for the transaction writes (create, capture, void, refunds): the first outcome of a
 * request is stored for 24 h in the service's own SQLite file and replayed to every later request with the
 * same key, so a client can retry after a timeout without charging twice.
 *
 * - Claim: one `BEGIN IMMEDIATE` transaction inserts the key as `running` (`INSERT ... ON CONFLICT DO NOTHING`),
 *   so of any number of concurrent requests, in this process or another one sharing the file, exactly one runs.
 * - Same key, different request (fingerprint): 409 `duplicate_record`.
 * - Same key while the first request is running (within its lease): 409 `concurrent_request`.
 * - Outcome stored: a returned value (as JSON; it must be a JSON value, i.e. the response body) and an
 *   `ApiError` below 500 that is the answer (replayed as an equal `ApiError`). A retryable refusal — a lost race
 *   (409 marked `retryable`), 425, 429 — and any other error (5xx, unavailable, bugs) are not stored.
 * - Binding (issue 22): the request names the resource it acts on (`bind`, e.g. the transaction it created) and
 *   says when it has recorded it (`recorded`) and when a provider may be called (`beforeProviderCall`): the binding
 *   is written, synced, at the first of the two. From then on the key belongs to that resource: a failure (the
 *   vault lost while it takes the card, the append after the provider answered, SQLite busy, EventStoreDB down)
 *   keeps the key, and every retry answers the resource's current state (`answerBound`) — whatever status it is
 *   in — instead of making a second one or calling the provider again. A failure before either frees the key, so
 *   the client may retry with it. A request that creates its resource binds before the append that records it
 *   (`beforeRecording`), so no crash between the two leaves the key free; a retry that finds the resource never
 *   recorded (`answerBound` throws `BoundResourceAbsent`) takes the key over and runs, once.
 * - A request that never finished (the process died): within the lease, 409 `concurrent_request`. Past the
 *   lease, a bound key answers its resource's current state (reconciliation settles what the provider did); an
 *   unbound one never reached a provider, so — for stores whose requests all bind before calling one
 *   (`bindsBeforeProviderCalls`) — it runs again. Other stores keep 409 `concurrent_request` until the key expires,
 *   telling the client to check the resource and use a new key. A request that outlived its lease and lost its
 *   key this way is stopped at its next `bind` or `beforeProviderCall`.
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
  /** How long a `running` key counts as in progress rather than abandoned; default 120 s. */
  readonly leaseMs?: number;
  /**
   * Every request run here binds its key (`bind`, `beforeProviderCall`) before it calls a provider, so an abandoned
   * key without a binding never reached one and may run again. Default false: abandoned keys answer 409.
   */
  readonly bindsBeforeProviderCalls?: boolean;
}

/** What a request's key is bound to: a JSON object naming the resource (`answerBound` reads it back). */
export type IdempotencyBinding = Readonly<Record<string, unknown>>;

/** What a running request tells its key. */
export interface IdempotentRequest {
  /** The resource this request acts on; kept in memory until `beforeProviderCall` writes it. Replaces earlier ones. */
  bind(binding: IdempotencyBinding): void;
  /**
   * Call right before anything reaches a provider: writes the binding (an empty one when none was given), so that
   * from here on a failure or a crash leaves the key answering the resource instead of running again. Throws 409
   * `concurrent_request` when this request lost its key (it outlived its lease and a retry took it over).
   */
  beforeProviderCall(): void;
  /**
   * Call once the bound resource has been recorded (e.g. the transaction's first event appended): writes the binding
   * as `beforeProviderCall` does, since a retry that ran again would make a second one. No-op without a binding.
   */
  recorded(): void;
  /**
   * Call right before the command that creates the bound resource is appended: writes the binding first, so that a
   * crash between the append and the answer leaves the key with the resource. A retry that finds the key bound to a
   * resource never recorded (the append failed, or the process died before it) runs again: its `answerBound` throws
   * `BoundResourceAbsent`. No-op without a binding.
   */
  beforeRecording(): void;
}

/**
 * Thrown by an `answerBound` whose resource was never recorded (the request bound its key before the append that
 * would have created it, and died or failed there): nothing was done, so the key is taken over and the request runs.
 */
export class BoundResourceAbsent extends Error {
  constructor(what: string) {
    super(`${what} was never recorded`);
    this.name = 'BoundResourceAbsent';
  }
}

export const concurrentRequestCode = 'concurrent_request';

const defaultTtlMs = 24 * 60 * 60 * 1000;
const defaultLeaseMs = 120 * 1000;
const purgeBatchSize = 100;

/** Null with a binding: the request failed after a provider may have been called (answered by `answerBound`). */
type Outcome = 'value' | 'error';

interface KeyRow {
  state: 'running' | 'done';
  fingerprint: string;
  claim_id: string;
  started_at: number;
  expires_at: number;
  outcome: Outcome | null;
  response: string | null;
  bound_to: string | null;
}

type Claim =
  | { readonly kind: 'claimed'; readonly claimId: string }
  | { readonly kind: 'replay'; readonly outcome: Outcome; readonly response: string | null }
  | {
      readonly kind: 'bound';
      readonly claimId: string;
      readonly binding: IdempotencyBinding;
      readonly startedAt: number;
      readonly expiresAt: number;
    }
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
  private readonly bindsBeforeProviderCalls: boolean;
  private readonly claim: (scope: ScopeParams, fingerprint: string) => Claim;
  private readonly complete: Database.Statement<
    [ScopeParams & { claimId: string; outcome: Outcome; response: string | null; expiresAt: number }]
  >;
  private readonly release: Database.Statement<[ScopeParams & { claimId: string }]>;
  private readonly writeBinding: Database.Statement<[ScopeParams & { claimId: string; boundTo: string }]>;
  private readonly keepBound: Database.Statement<[ScopeParams & { claimId: string; expiresAt: number }]>;
  private readonly retake: Database.Statement<
    [ScopeParams & { previousClaimId: string; claimId: string; startedAt: number; expiresAt: number }]
  >;

  constructor(db: Database.Database, options: IdempotencyStoreOptions = {}) {
    this.now = options.now ?? (() => new Date());
    this.ttlMs = options.ttlMs ?? defaultTtlMs;
    this.leaseMs = options.leaseMs ?? defaultLeaseMs;
    this.bindsBeforeProviderCalls = options.bindsBeforeProviderCalls ?? false;

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
    // bound_to (issue 22): the resource a request acted on once a provider may have been called (JSON).
    const columns = new Set(
      (db.prepare('PRAGMA table_info(idempotency_keys)').all() as { name: string }[]).map((column) => column.name),
    );
    if (!columns.has('bound_to')) db.exec('ALTER TABLE idempotency_keys ADD COLUMN bound_to TEXT');

    const purge = db.prepare<[number]>(
      `DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE expires_at <= ? ORDER BY expires_at LIMIT ${purgeBatchSize})`,
    );
    const insert = db.prepare<
      [ScopeParams & { fingerprint: string; claimId: string; startedAt: number; expiresAt: number }]
    >(
      `INSERT INTO idempotency_keys (merchant_account_id, operation, key, state, fingerprint, claim_id, started_at, expires_at)
       VALUES (@merchantAccountId, @operation, @key, 'running', @fingerprint, @claimId, @startedAt, @expiresAt)
       ON CONFLICT DO NOTHING`,
    );
    const select = db.prepare<[ScopeParams], KeyRow>(
      `SELECT state, fingerprint, claim_id, started_at, expires_at, outcome, response, bound_to FROM idempotency_keys
       WHERE merchant_account_id = @merchantAccountId AND operation = @operation AND key = @key`,
    );
    const replace = db.prepare<
      [ScopeParams & { fingerprint: string; claimId: string; startedAt: number; expiresAt: number }]
    >(
      `UPDATE idempotency_keys SET state = 'running', fingerprint = @fingerprint, claim_id = @claimId, started_at = @startedAt,
         expires_at = @expiresAt, outcome = NULL, response = NULL, bound_to = NULL
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
    this.writeBinding = db.prepare(
      `UPDATE idempotency_keys SET bound_to = @boundTo
       WHERE merchant_account_id = @merchantAccountId AND operation = @operation AND key = @key AND claim_id = @claimId
         AND state = 'running'`,
    );
    this.keepBound = db.prepare(
      `UPDATE idempotency_keys SET state = 'done', outcome = NULL, response = NULL, expires_at = @expiresAt
       WHERE merchant_account_id = @merchantAccountId AND operation = @operation AND key = @key
         AND claim_id = @claimId`,
    );

    this.retake = db.prepare(
      `UPDATE idempotency_keys SET state = 'running', claim_id = @claimId, started_at = @startedAt,
         expires_at = @expiresAt, outcome = NULL, response = NULL, bound_to = NULL
       WHERE merchant_account_id = @merchantAccountId AND operation = @operation AND key = @key
         AND claim_id = @previousClaimId AND bound_to IS NOT NULL`,
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
      if (row.state === 'running') {
        const abandoned = now - row.started_at >= this.leaseMs;
        if (abandoned && row.bound_to !== null) return boundClaim(row, row.bound_to);
        if (abandoned && this.bindsBeforeProviderCalls) {
          // Never bound: it never reached a provider, so running it again cannot do anything twice.
          replace.run(fresh);
          return { kind: 'claimed', claimId };
        }
        return { kind: 'running', startedAt: row.started_at, expiresAt: row.expires_at };
      }
      if (row.outcome === null && row.bound_to !== null) return boundClaim(row, row.bound_to);
      return { kind: 'replay', outcome: row.outcome ?? 'value', response: row.response };
    }).immediate;
  }

  /**
   * `run` for a request: without an Idempotency-Key it just executes; with one, the request's fingerprint is an
   * HMAC under `fingerprintKey` of the operation and body (bodies may hold card numbers or PINs, never kept in clear).
   */
  runRequest<T>(
    request: {
      readonly merchantAccountId: string;
      readonly operation: string;
      readonly key: string | undefined;
      readonly body: unknown;
      readonly fingerprintKey: Buffer;
      /** `run`'s `keepsBoundAnswer`. */
      readonly keepsBoundAnswer?: boolean;
    },
    execute: (request: IdempotentRequest) => Promise<T>,
    answerBound?: (binding: IdempotencyBinding) => Promise<T>,
  ): Promise<T> {
    if (request.key === undefined) return execute(unkeyed);
    const fingerprint = createHmac('sha256', request.fingerprintKey)
      .update(requestFingerprint({ operation: request.operation, body: request.body }))
      .digest('hex');
    const scope = { merchantAccountId: request.merchantAccountId, operation: request.operation, key: request.key };
    return this.run(scope, fingerprint, execute, answerBound, { keepsBoundAnswer: request.keepsBoundAnswer ?? false });
  }

  /**
   * Runs `execute` once per scope and key; replays its outcome (the value, or a 4xx `ApiError`) to every later
   * call with the same request fingerprint until the key expires. The value must survive `JSON.stringify`: a
   * replay returns the parsed JSON. Throws 409 `duplicate_record` for another fingerprint and 409
   * `concurrent_request` while the key is running. A key bound to a resource is answered by `answerBound`; with
   * `keepsBoundAnswer` (an answer that is the provider's to the bound reference, the same to every retry — a gift
   * card issued or activated — rather than a resource rendered as it is now) that answer becomes the key's outcome,
   * so the retries after it replay it without calling the provider again.
   */
  async run<T>(
    scope: IdempotencyScope,
    requestFingerprint: string,
    execute: (request: IdempotentRequest) => Promise<T>,
    answerBound?: (binding: IdempotencyBinding) => Promise<T>,
    options: { readonly keepsBoundAnswer?: boolean } = {},
  ): Promise<T> {
    const params: ScopeParams = {
      merchantAccountId: scope.merchantAccountId,
      operation: scope.operation,
      key: scope.key,
    };
    // Synchronous up to here: the claim is decided before this call yields.
    const claim = this.claim(params, requestFingerprint);
    switch (claim.kind) {
      case 'mismatch':
        throw new ApiError(409, 'This Idempotency-Key was already used with a different request', [], {
          code: 'duplicate_record',
        });
      case 'running':
        throw this.concurrentRequestError(claim.startedAt, claim.expiresAt);
      case 'replay':
        return replay<T>(claim.outcome, claim.response);
      case 'bound': {
        if (!answerBound) throw this.concurrentRequestError(claim.startedAt, claim.expiresAt);
        try {
          const answer = await answerBound(claim.binding);
          if (options.keepsBoundAnswer) this.keepBoundAnswer(params, claim.claimId, answer);
          return answer;
        } catch (error) {
          if (!(error instanceof BoundResourceAbsent)) throw error;
        }
        // Bound to what was never recorded: nothing was done. Taken over (unless another retry was first) and run.
        const now = this.now().getTime();
        const claimId = randomUUID();
        const retaken = this.retake.run({
          ...params,
          previousClaimId: claim.claimId,
          claimId,
          startedAt: now,
          expiresAt: now + this.ttlMs,
        });
        if (retaken.changes === 0) throw this.concurrentRequestError(now, claim.expiresAt);
        return this.runClaimed(params, claimId, execute);
      }
      case 'claimed':
        return this.runClaimed(params, claim.claimId, execute);
    }
  }

  /** Runs `execute` under its claim of the key, and keeps, binds or frees the key by how it ended. */
  private async runClaimed<T>(
    params: ScopeParams,
    claimId: string,
    execute: (request: IdempotentRequest) => Promise<T>,
  ): Promise<T> {
    const request = new ClaimedRequest(this.writeBinding, { ...params, claimId });
    let value: T;
    try {
      value = await execute(request);
    } catch (error) {
      request.settle();
      if (error instanceof ApiError && error.status < 500 && !error.retryable) {
        this.store(params, claimId, 'error', JSON.stringify(error.toBody()));
      } else {
        try {
          // After a provider may have been called the key stays with what the request did; before, it is free.
          const expiresAt = this.now().getTime() + this.ttlMs;
          if (request.boundBeforeProviderCall) this.keepBound.run({ ...params, claimId, expiresAt });
          else this.release.run({ ...params, claimId });
        } catch {
          // The key stays `running` (bound or not, as written) until its lease passes; the request's error matters more.
        }
      }
      throw error;
    }
    request.settle();
    // If the value cannot be stored (not JSON, disk failure), this throws and the key stays `running`: the
    // operation did happen, so a retry must not run it again (past the lease a bound key answers its resource).
    this.store(params, claimId, 'value', JSON.stringify(value) ?? null);
    return value;
  }

  /**
   * Keeps a bound key's answer as its outcome, unless the key was taken over meanwhile (another claim). Not kept (a
   * value that is not JSON, a disk failure): the next retry asks the provider again, as before.
   */
  private keepBoundAnswer(params: ScopeParams, claimId: string, answer: unknown): void {
    try {
      this.store(params, claimId, 'value', JSON.stringify(answer) ?? null);
    } catch {
      // The answer goes to the caller all the same.
    }
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

const boundClaim = (row: KeyRow, boundTo: string): Claim => ({
  kind: 'bound',
  claimId: row.claim_id,
  binding: JSON.parse(boundTo) as IdempotencyBinding,
  startedAt: row.started_at,
  expiresAt: row.expires_at,
});

/** The request of a call without a key: nothing to bind. */
const unkeyed: IdempotentRequest = {
  bind: () => undefined,
  beforeProviderCall: () => undefined,
  recorded: () => undefined,
  beforeRecording: () => undefined,
};

class ClaimedRequest implements IdempotentRequest {
  private binding: IdempotencyBinding | null = null;
  private written = false;
  private settled = false;

  constructor(
    private readonly writeBinding: Database.Statement<[ScopeParams & { claimId: string; boundTo: string }]>,
    private readonly claim: ScopeParams & { claimId: string },
  ) {}

  /** The binding was written before a provider call: the key stays with the resource. */
  get boundBeforeProviderCall(): boolean {
    return this.written;
  }

  bind(binding: IdempotencyBinding): void {
    if (this.settled) return;
    this.binding = binding;
    // Already written: a later resource of the same request (refunds/all) replaces it at once.
    if (this.written) this.write();
  }

  beforeProviderCall(): void {
    // Work the request left running after it answered (it has no key to bind any more) is not stopped.
    if (this.settled || this.written) return;
    this.write();
    this.written = true;
  }

  recorded(): void {
    if (this.binding !== null) this.beforeProviderCall();
  }

  beforeRecording(): void {
    this.recorded();
  }

  /** The request has answered (or failed): later calls from work it started do not touch the key. */
  settle(): void {
    this.settled = true;
  }

  private write(): void {
    const changed = this.writeBinding.run({ ...this.claim, boundTo: JSON.stringify(this.binding ?? {}) }).changes;
    if (changed === 0) {
      const message =
        'This request outlived its lease and a retry with its Idempotency-Key took over; ' +
        'it was stopped before reaching the payment service';
      throw new ApiError(409, message, [], { code: concurrentRequestCode });
    }
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
