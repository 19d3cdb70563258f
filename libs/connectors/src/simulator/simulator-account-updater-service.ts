/**
 * The AccountUpdaterService port over real HTTP to the simulator's account updater (`/v1/account-updater/jobs`,
 * simulator-account-updater.ts). Unreachable, 5xx and no answer within `timeoutMs` throw a retriable
 * ConnectorUnavailableError (a submission is idempotent by its reference, so it is safe to send again); 4xx and
 * answers that break the protocol throw ConnectorRequestRejectedError.
 */
import {
  accountUpdaterOutcomes,
  type AccountUpdaterJobRequest,
  type AccountUpdaterJobResults,
  type AccountUpdaterResult,
  type AccountUpdaterService,
} from '../account-updater';
import { ConnectorRequestRejectedError, ConnectorUnavailableError } from '../connector-errors';
import { callSimulator, type SimulatorEndpoint } from './simulator-http-client';
import type {
  WireAccountUpdaterJob,
  WireAccountUpdaterJobRequest,
  WireAccountUpdaterResult,
} from './simulator-account-updater-wire';
import { merchantIdHeader } from './simulator-wire';

export interface SimulatorAccountUpdaterConfig {
  /** The simulator's base URL, e.g. http://127.0.0.1:4010 */
  readonly baseUrl: string;
  /** Sent as `x-mock-card-merchant-id`, which the simulator's outages match. Default `switchyard`. */
  readonly merchantId?: string;
  /** Per-request timeout. Default 10 s. */
  readonly timeoutMs?: number;
}

export class SimulatorAccountUpdaterService implements AccountUpdaterService {
  private readonly endpoint: SimulatorEndpoint;

  constructor(config: SimulatorAccountUpdaterConfig) {
    this.endpoint = {
      name: 'account updater',
      baseUrl: config.baseUrl,
      timeoutMs: config.timeoutMs ?? 10_000,
      headers: { [merchantIdHeader]: config.merchantId ?? 'switchyard' },
    };
  }

  async submit(job: AccountUpdaterJobRequest): Promise<{ providerJobId: string }> {
    const body: WireAccountUpdaterJobRequest = {
      reference: job.reference,
      inquiries: job.inquiries.map(({ reference, card }) => ({
        reference,
        card: { number: card.number, expiration_date: card.expirationDate },
      })),
    };
    const answer = await this.call('POST', '/v1/account-updater/jobs', body);
    return { providerJobId: answer.job_id };
  }

  async results(providerJobId: string): Promise<AccountUpdaterJobResults> {
    const answer = await this.call('GET', `/v1/account-updater/jobs/${encodeURIComponent(providerJobId)}`, undefined);
    if (answer.status === 'pending') return { status: 'pending' };
    if (!Array.isArray(answer.results)) throw this.broken('GET', 'results for a completed job');
    return { status: 'completed', results: answer.results.map((result) => this.toResult(result)) };
  }

  private async call(method: 'GET' | 'POST', path: string, body: unknown): Promise<WireAccountUpdaterJob> {
    const answer = await callSimulator<WireAccountUpdaterJob>(this.endpoint, method, path, body);
    if (answer.kind === 'unknown')
      throw new ConnectorUnavailableError(
        `${this.endpoint.name} gave no answer to ${method} ${path}`,
        true,
        undefined,
        { timedOut: answer.timedOut },
      );
    const job = answer.body as Partial<WireAccountUpdaterJob> | null;
    if (typeof job?.job_id !== 'string' || (job.status !== 'pending' && job.status !== 'completed')) {
      throw new ConnectorRequestRejectedError(
        `${this.endpoint.name} answered ${method} ${path} without job_id and status`,
        answer.status,
      );
    }
    return job as WireAccountUpdaterJob;
  }

  private toResult(result: WireAccountUpdaterResult): AccountUpdaterResult {
    const { reference, outcome, number, expiration_date: expirationDate } = result;
    if (typeof reference !== 'string' || !accountUpdaterOutcomes.includes(outcome))
      throw this.broken('GET', 'a reference and a known outcome per result');
    if (outcome === 'updated_number' && typeof number !== 'string')
      throw this.broken('GET', 'the new number of an updated_number result');
    if (outcome === 'updated_expiry' && typeof expirationDate !== 'string')
      throw this.broken('GET', 'the new expiry of an updated_expiry result');
    return {
      reference,
      outcome,
      ...(typeof number === 'string' && { number }),
      ...(typeof expirationDate === 'string' && { expirationDate }),
    };
  }

  /** The message names what is missing, never a value (results carry card numbers). */
  private broken(method: string, what: string): ConnectorRequestRejectedError {
    return new ConnectorRequestRejectedError(`${this.endpoint.name} answered ${method} without ${what}`);
  }
}
