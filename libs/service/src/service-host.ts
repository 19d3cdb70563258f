/**
 * What every service (identity, transactions, …) is made of: feature slices — each with its decider, its read model
 * (a projection with its own checkpoint) and its RPC handlers — over one event store and one local SQLite file.
 * The host owns the projectors, so read-your-writes (`catchUp`) covers every read model of the service.
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { withUpcasting, type EventStore, type EventUpcasters } from '@switchyard/eventstore';
import { Projector, type Projection } from '@switchyard/readmodel';
import type { RpcHandlers } from '@switchyard/rpc';

export interface ServiceContext {
  readonly store: EventStore;
  readonly db: Database.Database;
  readonly now: () => Date;
  readonly newId: () => string;
  /** Resolves when every read model has applied everything appended so far (by this or another process). */
  catchUp(): Promise<void>;
}

export interface ServiceSlice {
  /** The slice's read model, fed from the log; absent for slices without one (the role catalog). */
  readonly projection?: Projection;
  rpcHandlers(): RpcHandlers;
}

export interface ServiceHostOptions {
  readonly store: EventStore;
  /**
   * The service's one registry of event schema versions: every append is stamped with its version and every read
   * of the slices, their command handlers and their projections is upcast to the current shape through it.
   */
  readonly upcasters?: EventUpcasters;
  /** The service's local SQLite file for its read models (the event store's own file in SQLite mode). */
  readonly db: Database.Database;
  readonly now?: () => Date;
  readonly newId?: () => string;
  readonly pollIntervalMs?: number;
  /** A read model that fails a batch (it is retried on its own, the others go on). */
  readonly onError?: (error: unknown, what: string) => void;
}

export class ServiceHost {
  readonly context: ServiceContext;
  private readonly slices: ServiceSlice[] = [];
  private readonly projectors: Projector[] = [];
  /** Projections of slices added since the last projector was made. */
  private readonly unprojected: Projection[] = [];
  private following = false;

  private readonly store: EventStore;

  constructor(private readonly options: ServiceHostOptions) {
    this.store = options.upcasters ? withUpcasting(options.store, options.upcasters) : options.store;
    this.context = {
      store: this.store,
      db: options.db,
      now: options.now ?? (() => new Date()),
      newId: options.newId ?? randomUUID,
      catchUp: () => this.catchUp(),
    };
  }

  add(...slices: ServiceSlice[]): void {
    for (const slice of slices) {
      this.slices.push(slice);
      if (slice.projection) this.unprojected.push(slice.projection);
    }
  }

  /** Brings every read model up to date (call before serving), then follows the log. */
  async catchUpAndFollow(): Promise<void> {
    await this.catchUp();
    this.following = true;
    for (const projector of this.projectors) projector.start();
  }

  async stop(): Promise<void> {
    this.following = false;
    await Promise.all(this.projectors.map((projector) => projector.stop()));
  }

  async catchUp(): Promise<void> {
    this.projectNewSlices();
    await Promise.all(this.projectors.map((projector) => projector.catchUp()));
  }

  /** One projector for the read models of the slices added so far: they share its reads and its commits. */
  private projectNewSlices(): void {
    if (this.unprojected.length === 0) return;
    const projector = new Projector(this.options.db, this.store, this.unprojected.splice(0), {
      ...(this.options.pollIntervalMs !== undefined ? { pollIntervalMs: this.options.pollIntervalMs } : {}),
      ...(this.options.onError ? { onError: this.options.onError } : {}),
    });
    this.projectors.push(projector);
    if (this.following) projector.start();
  }

  /** Every slice's handlers, plus the service's readiness ping. */
  rpcHandlers(pingPattern: string): RpcHandlers {
    return Object.assign(
      { [pingPattern]: async () => ({ status: 'ok' }) },
      ...this.slices.map((slice) => slice.rpcHandlers()),
    );
  }
}
