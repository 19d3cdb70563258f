/**
 * JWS signature checks off the event loop: a small pool of worker threads, each running `node:crypto.verify`.
 *
 * An ES512 check is ~2.5 ms of P-521 math; on the main thread 64 concurrent fresh tokens stall every other request
 * of the gateway for 160 ms, and the process uses one core however many it has. The pool sends
 * `{ signingInput, signature, key, alg }` to N workers (default `os.availableParallelism()`, JWT_VERIFY_WORKERS) and
 * answers with a boolean; everything else about a token (header, kid, alg allow-list, exp/nbf/iat, claims) stays
 * in {@link TokenVerifier} on the main thread, where it costs microseconds.
 *
 * - Bounded: each worker has at most `maxInFlightPerWorker` requests posted to it; the rest wait in one FIFO queue
 *   of at most `maxQueued`. A request past that bound is refused at once with {@link SignaturePoolUnavailableError}.
 * - A worker that dies (an uncaught error, out of memory, terminated) is replaced; the requests posted to it fail
 *   with {@link SignaturePoolUnavailableError}, and so does every request after `close()`. The TokenVerifier
 *   answers that error by checking the signature inline, once: a pool fault never becomes a 5xx or a 401.
 * - Workers are `ref`'d only while they hold requests, so an idle pool never keeps a process alive; `close()`
 *   terminates them (the gateway's stop path calls it).
 *
 * The worker is a short CommonJS script run with `eval: true`: no TypeScript loader is needed in the worker, under
 * `npm start` (SWC on load) as under vitest.
 */
import { availableParallelism } from 'node:os';
import { verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { Worker } from 'node:worker_threads';

/** The JWS algorithms the pool checks (ECDSA, signatures in the JWS form: r‖s, IEEE P1363). */
export type PoolAlgorithm = 'ES256' | 'ES384' | 'ES512';

const HASH_OF: Readonly<Record<PoolAlgorithm, string>> = { ES256: 'sha256', ES384: 'sha384', ES512: 'sha512' };

export interface SignatureCheck {
  /** ASCII bytes of `<header segment>.<payload segment>`. */
  readonly signingInput: Uint8Array;
  /** The decoded signature segment. */
  readonly signature: Uint8Array;
  /** The public key (a KeyObject crosses to a worker thread as a handle, not re-parsed). */
  readonly publicKey: KeyObject;
  readonly alg: PoolAlgorithm;
}

/** Checks JWS signatures; `true` when the signature is the key's over the signing input. */
export interface SignatureVerifier {
  verifySignature(check: SignatureCheck): Promise<boolean>;
  close(): Promise<void>;
}

/** The pool could not answer (closed, a worker died with the request, queue full): check inline instead. */
export class SignaturePoolUnavailableError extends Error {
  readonly type = 'signature_pool_unavailable' as const;
}

/** The check itself, as every worker and the inline path run it. */
export function verifySignatureNow(check: SignatureCheck): boolean {
  const hash = HASH_OF[check.alg];
  if (!hash) throw new TypeError(`unsupported JWS algorithm ${String(check.alg)}`);
  return cryptoVerify(hash, check.signingInput, { key: check.publicKey, dsaEncoding: 'ieee-p1363' }, check.signature);
}

/** JWT_VERIFY_WORKERS = 0: every check on the calling thread (blocks the event loop ~2.5 ms per ES512 check). */
export class InlineSignatureVerifier implements SignatureVerifier {
  async verifySignature(check: SignatureCheck): Promise<boolean> {
    return verifySignatureNow(check);
  }

  async close(): Promise<void> {}
}

export interface SignaturePoolOptions {
  /**
   * Worker threads; default `os.availableParallelism()`. At least 1 (0 means no pool: {@link createSignatureVerifier}).
   */
  readonly workers?: number;
  /**
   * Requests posted to one worker at a time (the next ones wait in its port, so it never idles between checks);
   * default 4.
   */
  readonly maxInFlightPerWorker?: number;
  /** Requests waiting for a worker; past this the pool refuses (the verifier checks inline). Default 4096. */
  readonly maxQueued?: number;
  /** A worker died or failed to start (it is replaced). */
  readonly onWorkerError?: (error: unknown) => void;
}

export interface SignaturePoolStats {
  readonly workers: number;
  readonly inFlight: number;
  readonly queued: number;
  /** Workers replaced after dying. */
  readonly replaced: number;
  readonly completed: number;
}

interface PendingCheck {
  readonly id: number;
  readonly check: SignatureCheck;
  readonly resolve: (valid: boolean) => void;
  readonly reject: (error: unknown) => void;
}

interface PoolWorker {
  readonly worker: Worker;
  readonly inFlight: Map<number, PendingCheck>;
  exited: boolean;
}

interface WorkerAnswer {
  readonly id: number;
  readonly valid: boolean;
  readonly error?: string;
}

const WORKER_SOURCE = `
'use strict';
const { parentPort } = require('node:worker_threads');
const { verify } = require('node:crypto');
const HASH_OF = ${JSON.stringify(HASH_OF)};
parentPort.on('message', (request) => {
  let answer;
  try {
    const hash = HASH_OF[request.alg];
    if (!hash) throw new TypeError('unsupported JWS algorithm ' + String(request.alg));
    const valid = verify(hash, request.signingInput, { key: request.publicKey, dsaEncoding: 'ieee-p1363' }, request.signature);
    answer = { id: request.id, valid };
  } catch (error) {
    answer = { id: request.id, valid: false, error: String((error && error.message) || error) };
  }
  parentPort.postMessage(answer);
});
`;

/** Repeated deaths within this window slow the replacement down (a worker that cannot start must not spin). */
/** A worker holds a few KeyObjects and messages in flight: a small heap is plenty, and bounds what it can take. */
const WORKER_LIMITS = { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 8 } as const;
const RESPAWN_WINDOW_MS = 1_000;
const RESPAWN_BACKOFF_MS = 1_000;

export class SignaturePool implements SignatureVerifier {
  private readonly size: number;
  private readonly maxInFlightPerWorker: number;
  private readonly maxQueued: number;
  private readonly workers: PoolWorker[] = [];
  private queue: PendingCheck[] = [];
  private queueHead = 0;
  private nextId = 1;
  private closed = false;
  private replaced = 0;
  private completed = 0;
  private recentDeaths: number[] = [];
  private readonly respawnTimers = new Set<NodeJS.Timeout>();

  constructor(private readonly options: SignaturePoolOptions = {}) {
    this.size = options.workers ?? availableParallelism();
    if (!Number.isInteger(this.size) || this.size < 1)
      throw new RangeError(`a signature pool needs at least one worker, not ${this.size}`);
    this.maxInFlightPerWorker = options.maxInFlightPerWorker ?? 4;
    this.maxQueued = options.maxQueued ?? 4096;
    for (let i = 0; i < this.size; i += 1) this.workers.push(this.spawn());
  }

  verifySignature(check: SignatureCheck): Promise<boolean> {
    if (this.closed) return Promise.reject(new SignaturePoolUnavailableError('the signature pool is closed'));
    if (!HASH_OF[check.alg]) return Promise.reject(new TypeError(`unsupported JWS algorithm ${String(check.alg)}`));
    if (this.workers.every((entry) => entry.exited))
      return Promise.reject(new SignaturePoolUnavailableError('no signature worker is running'));
    if (this.queue.length - this.queueHead >= this.maxQueued) {
      return Promise.reject(
        new SignaturePoolUnavailableError(`the signature pool has ${this.maxQueued} checks waiting`),
      );
    }
    return new Promise<boolean>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, check, resolve, reject });
      this.dispatch();
    });
  }

  stats(): SignaturePoolStats {
    let inFlight = 0;
    for (const entry of this.workers) inFlight += entry.inFlight.size;
    return {
      workers: this.workers.filter((entry) => !entry.exited).length,
      inFlight,
      queued: this.queue.length - this.queueHead,
      replaced: this.replaced,
      completed: this.completed,
    };
  }

  /**
   * Ends worker `index` as a crash would (tests, fault drills): its requests fail over, a new worker takes its place.
   */
  async killWorker(index: number): Promise<void> {
    const entry = this.workers[index];
    if (!entry || entry.exited) return;
    await entry.worker.terminate();
  }

  /** Terminates every worker; requests still waiting or in flight fail with {@link SignaturePoolUnavailableError}. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.respawnTimers) clearTimeout(timer);
    this.respawnTimers.clear();
    const unavailable = new SignaturePoolUnavailableError('the signature pool is closed');
    for (let i = this.queueHead; i < this.queue.length; i += 1) this.queue[i]!.reject(unavailable);
    this.queue = [];
    this.queueHead = 0;
    await Promise.all(this.workers.map((entry) => entry.worker.terminate().catch(() => undefined)));
  }

  private spawn(): PoolWorker {
    // execArgv []: the parent's flags (the TypeScript loader, --cpu-prof) would cost each worker ~60 MB for nothing.
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      name: 'jwt-signature',
      execArgv: [],
      resourceLimits: WORKER_LIMITS,
    });
    const entry: PoolWorker = { worker, inFlight: new Map(), exited: false };
    worker.on('message', (answer: WorkerAnswer) => this.answered(entry, answer));
    // An 'error' event with no listener would throw in the main thread; 'exit' follows it and does the clean-up.
    worker.on('error', (error) => this.options.onWorkerError?.(error));
    worker.on('exit', () => this.exited(entry));
    // After the listeners: adding a 'message' listener refs the worker's port again.
    worker.unref();
    return entry;
  }

  private answered(entry: PoolWorker, answer: WorkerAnswer): void {
    const pending = entry.inFlight.get(answer.id);
    if (!pending) return;
    entry.inFlight.delete(answer.id);
    if (entry.inFlight.size === 0) entry.worker.unref();
    this.completed += 1;
    // The worker only errs on input the caller should not have sent (a key crypto refuses): as inline, it throws.
    if (answer.error !== undefined) pending.reject(new Error(answer.error));
    else pending.resolve(answer.valid);
    this.dispatch();
  }

  private exited(entry: PoolWorker): void {
    entry.exited = true;
    const lost = new SignaturePoolUnavailableError('the signature worker ended before answering');
    for (const pending of entry.inFlight.values()) pending.reject(lost);
    entry.inFlight.clear();
    if (this.closed) return;
    const index = this.workers.indexOf(entry);
    const now = Date.now();
    this.recentDeaths = [...this.recentDeaths.filter((at) => now - at < RESPAWN_WINDOW_MS), now];
    if (this.recentDeaths.length <= this.size) this.replace(index);
    else this.replaceLater(index);
    // With no worker alive, nothing would take the queue: fail it over to the inline check now.
    if (this.workers.every((worker) => worker.exited))
      this.failQueued(new SignaturePoolUnavailableError('no signature worker is running'));
    else this.dispatch();
  }

  private replace(index: number): void {
    if (this.closed) return;
    try {
      this.workers[index] = this.spawn();
    } catch (error) {
      // No thread could be started (resources): try again later; meanwhile checks go inline.
      this.options.onWorkerError?.(error);
      this.replaceLater(index);
      return;
    }
    this.replaced += 1;
    this.dispatch();
  }

  private replaceLater(index: number): void {
    const timer = setTimeout(() => {
      this.respawnTimers.delete(timer);
      this.replace(index);
    }, RESPAWN_BACKOFF_MS);
    timer.unref();
    this.respawnTimers.add(timer);
  }

  private failQueued(error: SignaturePoolUnavailableError): void {
    for (let i = this.queueHead; i < this.queue.length; i += 1) this.queue[i]!.reject(error);
    this.queue = [];
    this.queueHead = 0;
  }

  private dispatch(): void {
    while (this.queueHead < this.queue.length) {
      const entry = this.leastBusyWorker();
      if (!entry) return;
      const pending = this.queue[this.queueHead]!;
      this.queue[this.queueHead] = undefined as never;
      this.queueHead += 1;
      if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.queueHead);
        this.queueHead = 0;
      }
      if (entry.inFlight.size === 0) entry.worker.ref();
      entry.inFlight.set(pending.id, pending);
      const { signingInput, signature, publicKey, alg } = pending.check;
      try {
        entry.worker.postMessage({ id: pending.id, signingInput, signature, publicKey, alg });
      } catch (error) {
        entry.inFlight.delete(pending.id);
        if (entry.inFlight.size === 0) entry.worker.unref();
        pending.reject(
          new SignaturePoolUnavailableError(
            `the signature worker could not take the check: ${(error as Error).message}`,
          ),
        );
      }
    }
    if (this.queueHead === this.queue.length && this.queueHead > 0) {
      this.queue = [];
      this.queueHead = 0;
    }
  }

  private leastBusyWorker(): PoolWorker | undefined {
    let best: PoolWorker | undefined;
    for (const entry of this.workers) {
      if (entry.exited || entry.inFlight.size >= this.maxInFlightPerWorker) continue;
      if (!best || entry.inFlight.size < best.inFlight.size) best = entry;
    }
    return best;
  }
}

/** JWT_VERIFY_WORKERS: undefined → one worker per core; 0 → inline on the calling thread; N → N workers. */
export function createSignatureVerifier(
  workers: number | undefined,
  options: Omit<SignaturePoolOptions, 'workers'> = {},
): SignatureVerifier {
  const size = workers ?? availableParallelism();
  return size === 0 ? new InlineSignatureVerifier() : new SignaturePool({ ...options, workers: size });
}
