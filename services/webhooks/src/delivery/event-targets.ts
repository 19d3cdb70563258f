/**
 * From a bus message and one of its public names to the webhook event's `target`: which resource the name is
 * about (the transaction, one of its captures or refunds, an API key pair) and that resource as the API returns it,
 * fetched from the owning service over RPC (docs/events.md, "Target schemas").
 */
import { ApiError } from '@switchyard/api';
import { apiKeyPairPatterns, transactionsPatterns, type EventMessage } from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';

export const TRANSACTION_STREAM_PREFIX = 'transaction-';
export const API_KEY_PAIR_STREAM_PREFIX = 'api-key-pair-';

/** The resource a webhook event is about, and how to fetch it. */
export interface ResourceRef {
  /** The wire `type` of the resource (`transaction`, `transaction-capture`, `refund`, `api-key-pair`). */
  readonly type: string;
  readonly id: string;
  readonly pattern: string;
  readonly payload: Readonly<Record<string, unknown>>;
}

const field = (data: unknown, name: string): string | undefined => {
  const value = data !== null && typeof data === 'object' ? (data as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
};

const streamSuffix = (streamId: string, prefix: string): string | undefined =>
  streamId.startsWith(prefix) && streamId.length > prefix.length ? streamId.slice(prefix.length) : undefined;

/**
 * The resource of `name` for this message, or null when it cannot be told (an unknown name, or data missing the
 * id): such a name is skipped. Transaction streams need the merchant account (every transaction RPC is scoped by it).
 */
export function resourceOf(
  message: Pick<EventMessage, 'stream_id' | 'data'>,
  name: string,
  merchantAccountId: string | null,
): ResourceRef | null {
  const family = name.slice(0, name.indexOf('.'));
  if (family === 'api-key-pair') {
    const id = streamSuffix(message.stream_id, API_KEY_PAIR_STREAM_PREFIX) ?? field(message.data, 'id');
    return id ? { type: 'api-key-pair', id, pattern: apiKeyPairPatterns.get, payload: { id } } : null;
  }
  const transactionId = streamSuffix(message.stream_id, TRANSACTION_STREAM_PREFIX);
  if (!transactionId || merchantAccountId === null) return null;
  const scope = { merchant_account_id: merchantAccountId };
  switch (family) {
    case 'transaction':
      return {
        type: 'transaction',
        id: transactionId,
        pattern: transactionsPatterns.get,
        payload: { ...scope, transaction_id: transactionId },
      };
    case 'capture': {
      // An `intent: capture` authorization is also its direct capture (`directCaptureId`).
      const captureId = field(message.data, 'captureId') ?? field(message.data, 'directCaptureId');
      return captureId
        ? {
            type: 'transaction-capture',
            id: captureId,
            pattern: transactionsPatterns.captureGet,
            payload: { ...scope, transaction_id: transactionId, capture_id: captureId },
          }
        : null;
    }
    case 'refund': {
      const refundId = field(message.data, 'refundId');
      return refundId
        ? {
            type: 'refund',
            id: refundId,
            pattern: transactionsPatterns.refundById,
            payload: { ...scope, refund_id: refundId },
          }
        : null;
    }
    default:
      return null;
  }
}

export interface RenderOptions {
  /**
   * Waits between tries while the owning service's read model has not caught up with the event yet (the resource
   * is not found, or its `updated_at` is older than the event): the relay may publish an event before the read
   * model behind the RPC has applied it. After the last wait, what the service answers is taken as is.
   */
  readonly catchUpDelaysMs?: readonly number[];
}

const defaultCatchUpDelaysMs = [25, 50, 100, 200, 400, 800];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const isNotFound = (error: unknown): boolean => error instanceof ApiError && error.status === 404;

/** Older than the event: the resource's `updated_at` is before the event's time. Unknown either way: not stale. */
const isStale = (target: Readonly<Record<string, unknown>>, occurredAt: string): boolean => {
  const updated = typeof target.updated_at === 'string' ? Date.parse(target.updated_at) : Number.NaN;
  const occurred = Date.parse(occurredAt);
  return Number.isFinite(updated) && Number.isFinite(occurred) && updated < occurred;
};

/** Default of `TargetMemory`'s bound: entries kept per set. */
export const defaultTargetMemoryLimit = 10_000;

/**
 * What ingestion learned about resources: ones that rendered (they exist, so a later 404 means deleted) and ones
 * found gone. A 404 only waits for the owning read model when the resource was never seen: after a webhooks
 * outage, a backlog of events about a since-deleted resource must not cost a catch-up wait each.
 *
 * Bounded: each set keeps its `limit` newest keys (one remembered again becomes the newest), the oldest forgotten
 * first. Forgetting costs time, never a different target: a 404 for a forgotten resource is taken as "not projected
 * yet", so it waits the catch-up delays and asks again before rendering the same `{type, id}` placeholder, and
 * a forgotten resource that exists renders from the service as before (the memory never stands in for a lookup).
 */
export class TargetMemory {
  private readonly seen = new Set<string>();
  private readonly gone = new Set<string>();

  constructor(private readonly limit = defaultTargetMemoryLimit) {}

  wasSeen(key: string): boolean {
    return this.seen.has(key);
  }

  isGone(key: string): boolean {
    return this.gone.has(key);
  }

  markSeen(key: string): void {
    this.remember(this.seen, key);
  }

  markGone(key: string): void {
    this.remember(this.gone, key);
  }

  /** Entries kept, per set. */
  get size(): { readonly seen: number; readonly gone: number } {
    return { seen: this.seen.size, gone: this.gone.size };
  }

  private remember(set: Set<string>, key: string): void {
    // A Set iterates in insertion order: deleting and adding again makes the key the newest.
    set.delete(key);
    set.add(key);
    for (const oldest of set) {
      if (set.size <= this.limit) break;
      set.delete(oldest);
    }
  }
}

/**
 * The resource as the API returns it. A resource that is gone (404 — a deleted API key pair) renders as
 * `{type, id}`. Any other failure (the service unreachable, a 5xx) rejects: the bus message is then not
 * acknowledged and comes again, so nothing is dropped for a passing outage.
 */
export async function renderTarget(
  rpc: RpcClient,
  ref: ResourceRef,
  event: { readonly name: string; readonly occurredAt: string },
  options: RenderOptions = {},
  memory: TargetMemory = new TargetMemory(),
): Promise<Readonly<Record<string, unknown>>> {
  const key = `${ref.pattern}\u0000${ref.id}`;
  const placeholder = { type: ref.type, id: ref.id };
  // A deletion's resource is expected to be gone: no waiting for it.
  const delays = event.name.endsWith('.deleted') ? [] : (options.catchUpDelaysMs ?? defaultCatchUpDelaysMs);
  for (let attempt = 0; ; attempt += 1) {
    let target: Readonly<Record<string, unknown>> | null;
    try {
      target = await rpc.call<Readonly<Record<string, unknown>>>(ref.pattern, ref.payload);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      target = null;
    }
    if (target === null) {
      // Existed before, or already found gone: it was deleted, not yet-to-be-projected.
      if (memory.wasSeen(key) || memory.isGone(key)) {
        memory.markGone(key);
        return placeholder;
      }
    } else {
      memory.markSeen(key);
    }
    const fresh = target !== null && !isStale(target, event.occurredAt);
    const delay = delays[attempt];
    if (fresh || delay === undefined) {
      if (target === null) memory.markGone(key);
      return target ?? placeholder;
    }
    await sleep(delay);
  }
}
