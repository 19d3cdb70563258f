/**
 * The plumbing every transaction flow shares (the slice's and the authorization's). Every change is a command
 * decided by the transaction decider on the stream's current state and appended with the revision read
 * (`handleCommand`), so the money rules hold under any concurrency; commands on one transaction are also queued in
 * process so 50 racing requests do not exhaust the conflict retries. Also here: the transaction as the stream and
 * the read model hold it, provider calls, and the requests kept with Idempotency-Keys.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ApiError } from '@switchyard/api';
import {
  ConnectorRequestRejectedError,
  ConnectorUnavailableError,
  type ProviderResponse,
} from '@switchyard/connectors';
import type { TransactionActor, Transaction as WireTransaction } from '@switchyard/contracts';
import { DomainError, handleCommands, loadState, StreamStates } from '@switchyard/decider';
import {
  BoundResourceAbsent,
  IdempotencyStore,
  type IdempotencyBinding,
  type IdempotentRequest,
} from '../idempotency/idempotency-store';
import type { PaymentServiceConnection, PaymentServices } from '../payment-services/payment-services.slice';
import { asApiErrors, type TransactionsContext } from '../transactions-context';
import { KeyedQueue } from '@switchyard/service';
import { transactionStream, type Transaction, type TransactionEvent, type TransactionState } from './transaction';
import { transaction, type TransactionCommand } from './transaction.decide';
import { toTransaction } from './transaction-wire';
import { TransactionsReadModel, type TransactionView } from './transactions.read-model';

/** Codes a late or repeated provider message can meet: the record already says more than the message. */
/**
 * What an idempotent request's key is bound to once it recorded what it acts on, or a provider may have been called:
 * the transaction, and the operation of it the request made (its answer is rendered from these when the request
 * cannot give it).
 */
export interface RequestBinding extends IdempotencyBinding {
  readonly transaction_id: string;
  readonly capture_id?: string;
  readonly void_id?: string;
  readonly refund_ids?: readonly string[];
  readonly increment_id?: string;
}

/**
 * How long a request may run before it counts as abandoned (its process died): the Idempotency-Key lease, and how long
 * a create request not waiting for a buyer may stay open before the hold timer completes it for reconciliation.
 */
export const abandonedRequestAfterMs = 120_000;

const staleNotificationCodes = new Set([
  'authorization_already_decided',
  'capture_not_pending',
  'capture_not_found',
  'refund_not_processing',
  'refund_not_found',
  'void_not_found',
  'transaction_declined',
  'transaction_failed',
  'transaction_voided',
  'transaction_refunded',
]);

const isStale = (refusal: unknown): boolean =>
  refusal instanceof DomainError && staleNotificationCodes.has(refusal.code);

/**
 * Transactions whose state is kept (`StreamStates`): a payment's decisions come within milliseconds of each other, so
 * this covers every payment under way at a few hundred a second.
 */
const TRANSACTION_STATES_KEPT = 1_000;

export class TransactionStore {
  readonly readModel: TransactionsReadModel;
  private readonly idempotency: IdempotencyStore;
  private readonly queue = new KeyedQueue();
  /**
   * Who the work in progress is for, recorded in the metadata of every event it appends. Held in async context
   * rather than passed down: the flows reach `append` through many layers (authorization, 3-D Secure, gift cards,
   * provider messages), and the actor is the same for all of them — set once where a request or a timer's round
   * enters the slice (`actingAs`).
   */
  private readonly actors = new AsyncLocalStorage<TransactionActor>();
  /** The idempotent request in progress (its key is bound before every provider call it makes: `call`). */
  private readonly requests = new AsyncLocalStorage<IdempotentRequest>();
  /**
   * The transactions decided on last, each with the revision it folds up to: a payment's second and third decision
   * read only the events after it (`StreamStates`; a capture or refund of an older one reads its whole stream).
   */
  private readonly states = new StreamStates<TransactionState>(TRANSACTION_STATES_KEPT);

  constructor(
    private readonly context: TransactionsContext,
    private readonly paymentServices: PaymentServices,
    /** Keys the request fingerprints kept with Idempotency-Keys (see `TransactionsDependencies.fingerprintKey`). */
    private readonly fingerprintKey: Buffer,
  ) {
    this.readModel = new TransactionsReadModel(context.db);
    // Every transaction flow binds its key once it records what it acts on, and before its first provider call
    // (`bindRequest`, `command`, `call`).
    this.idempotency = new IdempotencyStore(context.db, {
      now: context.now,
      leaseMs: abandonedRequestAfterMs,
      bindsBeforeProviderCalls: true,
    });
  }

  now(): string {
    return this.context.now().toISOString();
  }

  /**
   * Runs a request kept with its Idempotency-Key. Once it may have reached a provider the key is bound to what it
   * did (`bindRequest`): a retry after a failure, or after the process died, answers `answerBound` — the current
   * state of what the binding names — and never calls the provider again.
   */
  idempotent<T>(
    merchantAccountId: string,
    operation: string,
    key: string | undefined,
    body: unknown,
    execute: () => Promise<T>,
    answerBound: (binding: RequestBinding) => Promise<T>,
  ): Promise<T> {
    return this.idempotency.runRequest(
      { merchantAccountId, operation, key, body, fingerprintKey: this.fingerprintKey },
      (request) => this.requests.run(request, execute),
      async (binding) => {
        // A binding without a transaction: a provider call this service did not expect to make for the request.
        if (typeof binding.transaction_id !== 'string') throw unknownOutcome();
        return answerBound(binding as RequestBinding);
      },
    );
  }

  /**
   * Names what the idempotent request in progress acts on (no-op without a key); written once a command records it
   * (`command`) or before a provider call (`call`), whichever comes first.
   */
  bindRequest(binding: RequestBinding): void {
    this.requests.getStore()?.bind(binding);
  }

  /** Runs `work` on behalf of `actor` (null: nobody said; the events record no actor). */
  actingAs<T>(actor: TransactionActor | null, work: () => T): T {
    return actor ? this.actors.run(actor, work) : work();
  }

  /**
   * Decides and appends, queued per transaction in this process (so a burst does not exhaust the conflict retries).
   * Several commands go in one append (`handleCommands`); a refusal `skip` accepts leaves its command out.
   */
  private append(
    id: string,
    commands: readonly Omit<TransactionCommand, 'metadata'>[],
    skip?: (refusal: unknown) => boolean,
  ) {
    const actor = this.actors.getStore();
    const now = this.now();
    return this.queue.run(id, () =>
      handleCommands(
        this.context.store,
        transactionStream(id),
        transaction,
        commands.map((command) => ({ ...command, metadata: { now } }) as TransactionCommand),
        { ...(actor ? { metadata: { actor } } : {}), ...(skip ? { skip } : {}), states: this.states },
      ),
    );
  }

  /** The events of the transaction's stream, oldest first (empty when it does not exist). */
  events(id: string) {
    return this.context.store.readStream(transactionStream(id));
  }

  /**
   * A caller's command: domain errors become the spec's errors. Once it is appended, the idempotent request in
   * progress keeps its key with what it bound (the transaction, capture or refund it just recorded): a failure after
   * this point must not let a retry make a second one.
   */
  async command(id: string, command: Omit<TransactionCommand, 'metadata'>) {
    const decided = await asApiErrors(() => this.append(id, [command]));
    this.requests.getStore()?.recorded();
    return decided;
  }

  /**
   * `command` for the one that creates the resource the idempotent request is bound to (the transaction): the key's
   * binding is written before the append, so that a crash between the append and the answer leaves the key with the
   * transaction instead of letting a retry make a second one. A retry that finds it never recorded runs again
   * (`renderBound`).
   */
  async commandCreating(id: string, command: Omit<TransactionCommand, 'metadata'>) {
    this.requests.getStore()?.beforeRecording();
    return this.command(id, command);
  }

  /**
   * `render` of the transaction an Idempotency-Key is bound to; `BoundResourceAbsent` when it was never recorded (the
   * key was bound before its append, which failed or never happened), so that the request runs again.
   */
  async renderBound(merchantAccountId: string, id: string): Promise<WireTransaction> {
    if ((await this.state(id)).status === 'absent') throw new BoundResourceAbsent(`transaction ${id}`);
    return this.render(merchantAccountId, id);
  }

  /**
   * Records what a provider said (its answer, a notification, a sync). The provider's later word may already have
   * settled what this message is about: stale or repeated messages are dropped; any other refusal surfaces. A
   * success after a decided failure is not stale: it is recorded (`LateAuthorizationReceived`) for reversal.
   * Returns the events appended.
   */
  async record(id: string, command: Omit<TransactionCommand, 'metadata'>): Promise<readonly TransactionEvent[]> {
    return this.recordAll(id, [command]);
  }

  /**
   * `record` for commands that follow one another (a provider's answer, then the create request's completion): one
   * append, one commit. A command that a separate `record` would have dropped as stale is left out.
   */
  async recordAll(
    id: string,
    commands: readonly Omit<TransactionCommand, 'metadata'>[],
  ): Promise<readonly TransactionEvent[]> {
    return (await this.append(id, commands, isStale)).events;
  }

  async state(id: string): Promise<TransactionState> {
    return loadState(this.context.store, transactionStream(id), transaction, { states: this.states });
  }

  /** The transaction from its stream (not the read model: a decision needs the latest state); 404 outside the account. */
  async load(merchantAccountId: string, id: string): Promise<Transaction> {
    const state = await this.state(id);
    if (state.status === 'absent' || state.merchantAccountId !== merchantAccountId) throw ApiError.notFound();
    return state;
  }

  owned(merchantAccountId: string, id: string): TransactionView {
    const view = this.readModel.find(id);
    if (!view || view.state.merchantAccountId !== merchantAccountId) throw ApiError.notFound();
    return view;
  }

  /** The payment method's connection; refused (400) when it was deleted, or when gift cards alone paid. */
  connectionOf(t: Transaction): PaymentServiceConnection {
    const connection = this.paymentServices.connection(t.merchantAccountId, t.paymentServiceId);
    if (!connection) throw ApiError.badRequest('The payment service of this transaction was deleted');
    if (connection.method === 'gift-card')
      throw ApiError.badRequest(
        'This transaction was paid with gift cards only: it has no payment method to do this with',
      );
    return connection;
  }

  /** The transaction as a caller sees it, from the read model once it has seen what was just appended. */
  async render(merchantAccountId: string, id: string): Promise<WireTransaction> {
    await this.context.catchUp();
    return toTransaction(this.owned(merchantAccountId, id));
  }

  /**
   * A provider call. An unreachable provider (refused connection, 5xx) did nothing: that is a failure with
   * `service_unavailable`. A request the provider rejected as malformed is `invalid_service_request`.
   */
  async call<T>(request: () => Promise<T>): Promise<T | ProviderResponse> {
    // From here on the provider may act: the request's Idempotency-Key stays with what it bound.
    this.requests.getStore()?.beforeProviderCall();
    try {
      return await request();
    } catch (error) {
      if (error instanceof ConnectorUnavailableError)
        return { outcome: 'failed', errorCode: 'service_unavailable', rawResponseDescription: error.message };
      if (error instanceof ConnectorRequestRejectedError)
        return { outcome: 'failed', errorCode: 'invalid_service_request', rawResponseDescription: error.message };
      throw error;
    }
  }
}

const unknownOutcome = () =>
  new ApiError(
    409,
    'A request with this Idempotency-Key did not complete and its outcome is unknown; ' +
      'check the resource and retry with a new Idempotency-Key',
    [],
    { code: 'concurrent_request' },
  );
