/**
 * Account updater jobs: `POST /account-updater/jobs` schedules stored cards of the merchant account with the account
 * updater service, whose answers (new expiry dates, new numbers, closed accounts) arrive later and are recorded on
 * each payment method.
 *
 * - **Scheduling.** A payment method is eligible when it is a `succeeded` card of the merchant account, the merchant
 *   account has `account_updater_enabled`, and it waits in no open inquiry. Each eligible one is claimed on its claim
 *   stream (`account-updater-claim.ts`: of two racing requests exactly one gets it), then the job is created with
 *   the ones claimed. None claimed: no job (the gateway answers 204).
 * - **Submission** follows the answer (it does not wait for the updater): the cards are read from the vault for the
 *   call only. The updater is idempotent by the job id, so a submission that failed (updater unreachable) or whose
 *   record was lost (a crash) is simply sent again by `poll()`.
 * - **Results.** `poll()` (on the service's timer) asks for each submitted job's results; each payment method is
 *   updated (`applyAccountUpdate`, idempotent by job) BEFORE its inquiry is recorded as completed, so a crash in
 *   between replays the update rather than losing it.
 */
import type { AccountUpdaterOutcome, AccountUpdaterService } from '@switchyard/connectors';
import {
  accountUpdaterPatterns,
  type AccountUpdaterJob,
  type AccountUpdaterJobCreateRequest,
} from '@switchyard/contracts';
import { asDomainEvent, handleCommand } from '@switchyard/decider';
import type { RpcHandlers } from '@switchyard/rpc';
import { asApiErrors, type VaultContext, type VaultSlice } from '../vault-context';
import {
  accountUpdaterClaimDecider,
  accountUpdaterClaimStream,
  holds,
  type AccountUpdaterClaimEvent,
  type AccountUpdaterClaimState,
} from './account-updater-claim';
import {
  accountUpdaterJobDecider,
  accountUpdaterJobStream,
  type AccountUpdaterInquiry,
  type AccountUpdaterInquiryCompletion,
  type AccountUpdaterJobCommand,
  type AccountUpdaterJobEvent,
  type AccountUpdaterJobState,
} from './account-updater-job';
import { AccountUpdaterReadModel } from './account-updater.read-model';
import { toAccountUpdaterJob } from './account-updater-wire';

/** What this slice uses of the payment methods slice. */
export interface AccountUpdaterPaymentMethods {
  /** Null when absent, deleted, or another merchant account's. */
  find(merchantAccountId: string, id: string): { readonly status: string; readonly method: string } | null;
  /** The card for the updater call only (never log, persist or emit it); null when absent, deleted or shredded. */
  cardOf(merchantAccountId: string, id: string): { readonly number: string; readonly expirationDate: string } | null;
  /** Records the updater's answer on the payment method; idempotent by `jobId`. */
  applyAccountUpdate(
    merchantAccountId: string,
    id: string,
    update: {
      readonly jobId: string;
      readonly outcome: AccountUpdaterOutcome;
      readonly number?: string;
      readonly expirationDate?: string;
    },
  ): Promise<void>;
}

/** The merchant account's settings, from identity. */
export interface AccountUpdaterSettings {
  get(merchantAccountId: string): Promise<{ readonly account_updater_enabled: boolean } | null>;
}

export interface AccountUpdaterDependencies {
  readonly paymentMethods: AccountUpdaterPaymentMethods;
  readonly merchantAccounts: AccountUpdaterSettings;
  readonly updater: AccountUpdaterService;
  /**
   * How long a claim whose job was never created still counts (the request that took it may still be running).
   * Default 10 minutes: far longer than any request, so a live request's claim is never taken over.
   */
  readonly claimGraceMs?: number;
  /** Told of a submission that failed right after the answer (`poll()` sends it again). */
  readonly onBackgroundError?: (error: unknown) => void;
}

/** Payment methods updated between two records of their inquiries' completion. */
const COMPLETION_BATCH = 50;

export class AccountUpdater implements VaultSlice {
  readonly readModel: AccountUpdaterReadModel;
  private readonly claimGraceMs: number;
  private readonly onBackgroundError: (error: unknown) => void;
  /** Submissions running in this process, by job id: `poll()` waits for one rather than sending it twice. */
  private readonly submitting = new Map<string, Promise<void>>();

  constructor(
    private readonly context: VaultContext,
    private readonly deps: AccountUpdaterDependencies,
  ) {
    this.readModel = new AccountUpdaterReadModel(context.db);
    this.claimGraceMs = deps.claimGraceMs ?? 10 * 60 * 1000;
    this.onBackgroundError = deps.onBackgroundError ?? (() => undefined);
  }

  get projection() {
    return this.readModel.projection;
  }

  /** The job, or null when no payment method was scheduled (unknown, ineligible, or already waiting). */
  async createJob({
    merchant_account_id: merchantAccountId,
    body,
  }: AccountUpdaterJobCreateRequest): Promise<AccountUpdaterJob | null> {
    const settings = await this.deps.merchantAccounts.get(merchantAccountId);
    if (settings?.account_updater_enabled !== true) return null;
    const candidates = [...new Set(body.payment_method_ids)].filter((id) => this.eligible(merchantAccountId, id));
    if (candidates.length === 0) return null;

    const jobId = this.context.newId();
    const claims = await Promise.all(
      candidates.map(async (paymentMethodId): Promise<AccountUpdaterInquiry | null> => {
        const inquiry = { id: this.context.newId(), paymentMethodId };
        return (await this.claim(merchantAccountId, jobId, inquiry)) ? inquiry : null;
      }),
    );
    const inquiries = claims.filter((inquiry): inquiry is AccountUpdaterInquiry => inquiry !== null);
    if (inquiries.length === 0) return null;

    const { state } = await asApiErrors(() =>
      handleCommand(this.context.store, accountUpdaterJobStream(jobId), accountUpdaterJobDecider, {
        type: 'CreateAccountUpdaterJob',
        data: { id: jobId, merchantAccountId, inquiries },
        metadata: { now: this.now() },
      }),
    );
    await this.context.catchUp();
    if (state.status === 'absent') throw new Error(`account updater job ${jobId} was not created`);
    void this.submit(jobId).catch(this.onBackgroundError);
    return toAccountUpdaterJob(state);
  }

  /**
   * One round of the timer: sends the jobs not yet with the updater, and records the answers of those it has
   * answered. Each job on its own: one failing does not hold the others back; the failures are thrown together at
   * the end (the timer reports them and the next round tries again).
   */
  async poll(): Promise<void> {
    const failures: unknown[] = [];
    for (const job of this.readModel.openJobs()) {
      try {
        if (job.status === 'created') await this.submit(job.id);
        else await this.collect(job.id);
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1)
      throw new AggregateError(failures, `${failures.length} account updater jobs failed this round`);
  }

  rpcHandlers(): RpcHandlers {
    return {
      [accountUpdaterPatterns.createJob]: async (payload) => this.createJob(payload as AccountUpdaterJobCreateRequest),
    };
  }

  private eligible(merchantAccountId: string, paymentMethodId: string): boolean {
    const paymentMethod = this.deps.paymentMethods.find(merchantAccountId, paymentMethodId);
    return (
      paymentMethod !== null &&
      paymentMethod.status === 'succeeded' &&
      paymentMethod.method === 'card' &&
      !this.readModel.isWaiting(paymentMethodId)
    );
  }

  /** Whether the job now holds the payment method: free, or held by a claim that no longer counts. */
  private async claim(merchantAccountId: string, jobId: string, inquiry: AccountUpdaterInquiry): Promise<boolean> {
    const stream = accountUpdaterClaimStream(inquiry.paymentMethodId);
    const current = await this.fold<AccountUpdaterClaimEvent, AccountUpdaterClaimState>(
      stream,
      accountUpdaterClaimDecider,
    );
    let replacing: string | null = null;
    if (current.status === 'held') {
      if (!(await this.claimIsStale(current))) return false;
      replacing = current.jobId;
    }
    const { state } = await handleCommand(this.context.store, stream, accountUpdaterClaimDecider, {
      type: 'ClaimPaymentMethodForUpdate',
      data: { paymentMethodId: inquiry.paymentMethodId, merchantAccountId, jobId, inquiryId: inquiry.id, replacing },
      metadata: { now: this.now() },
    });
    return holds(state, jobId);
  }

  /** A claim stops counting once its inquiry is completed, or when its job was never created within the grace period. */
  private async claimIsStale(holder: {
    readonly jobId: string;
    readonly inquiryId: string;
    readonly at: string;
  }): Promise<boolean> {
    const job = await this.jobState(holder.jobId);
    if (job.status === 'absent') return this.context.now().getTime() - Date.parse(holder.at) > this.claimGraceMs;
    return holder.inquiryId in job.outcomes || !job.inquiries.some((inquiry) => inquiry.id === holder.inquiryId);
  }

  /** Sends the job to the updater, once per process at a time. */
  private submit(jobId: string): Promise<void> {
    const running = this.submitting.get(jobId);
    if (running) return running;
    const submission = this.sendToUpdater(jobId).finally(() => this.submitting.delete(jobId));
    this.submitting.set(jobId, submission);
    return submission;
  }

  private async sendToUpdater(jobId: string): Promise<void> {
    const job = await this.jobState(jobId);
    if (job.status !== 'created') return;
    const gone: AccountUpdaterInquiryCompletion[] = [];
    const inquiries: { reference: string; card: { number: string; expirationDate: string } }[] = [];
    for (const inquiry of job.inquiries) {
      if (inquiry.id in job.outcomes) continue;
      const card = this.deps.paymentMethods.cardOf(job.merchantAccountId, inquiry.paymentMethodId);
      if (card)
        inquiries.push({ reference: inquiry.id, card: { number: card.number, expirationDate: card.expirationDate } });
      else gone.push({ inquiryId: inquiry.id, outcome: 'payment_method_unavailable' });
    }
    // Deleted since it was scheduled: nothing to ask about (the last one completes the job).
    if (gone.length > 0)
      await this.handle(jobId, {
        type: 'CompleteAccountUpdaterInquiries',
        data: { completions: gone },
        metadata: { now: this.now() },
      });
    if (inquiries.length === 0) return;
    const { providerJobId } = await this.deps.updater.submit({ reference: jobId, inquiries });
    await this.handle(jobId, {
      type: 'RecordAccountUpdaterSubmission',
      data: { providerJobId },
      metadata: { now: this.now() },
    });
  }

  /** Records the updater's answers once it has them all: each payment method updated first, then its inquiry completed. */
  private async collect(jobId: string): Promise<void> {
    const job = await this.jobState(jobId);
    if (job.status !== 'submitted' || job.providerJobId === null) return;
    const answer = await this.deps.updater.results(job.providerJobId);
    if (answer.status === 'pending') return;
    const results = new Map(answer.results.map((result) => [result.reference, result]));
    let batch: AccountUpdaterInquiryCompletion[] = [];
    const record = async () => {
      if (batch.length === 0) return;
      const completions = batch;
      batch = [];
      await this.handle(jobId, {
        type: 'CompleteAccountUpdaterInquiries',
        data: { completions },
        metadata: { now: this.now() },
      });
    };
    try {
      for (const inquiry of job.inquiries) {
        if (inquiry.id in job.outcomes) continue;
        const result = results.get(inquiry.id);
        if (result) {
          const { outcome, number, expirationDate } = result;
          const update = {
            jobId,
            outcome,
            ...(number !== undefined && { number }),
            ...(expirationDate !== undefined && { expirationDate }),
          };
          await this.deps.paymentMethods.applyAccountUpdate(job.merchantAccountId, inquiry.paymentMethodId, update);
        }
        batch.push({ inquiryId: inquiry.id, outcome: result ? result.outcome : 'not_answered' });
        if (batch.length >= COMPLETION_BATCH) await record();
      }
    } finally {
      // What was applied is recorded even when a later update failed (that one is tried again next round).
      await record();
    }
  }

  private jobState(jobId: string): Promise<AccountUpdaterJobState> {
    return this.fold<AccountUpdaterJobEvent, AccountUpdaterJobState>(
      accountUpdaterJobStream(jobId),
      accountUpdaterJobDecider,
    );
  }

  private async fold<Event extends { type: string; data: unknown }, State>(
    stream: string,
    decider: { evolve(state: State, event: Event): State; initialState(): State },
  ): Promise<State> {
    const events = await this.context.store.readStream(stream);
    return events.reduce((state, event) => decider.evolve(state, asDomainEvent<Event>(event)), decider.initialState());
  }

  /** Runs the command on the job's stream, then waits for the read model. */
  private async handle(jobId: string, command: AccountUpdaterJobCommand): Promise<void> {
    await handleCommand(this.context.store, accountUpdaterJobStream(jobId), accountUpdaterJobDecider, command);
    await this.context.catchUp();
  }

  private now(): string {
    return this.context.now().toISOString();
  }
}
