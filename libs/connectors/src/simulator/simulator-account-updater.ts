/**
 * The simulator's account updater (`/v1/account-updater/jobs`): takes a batch of cards under the caller's reference
 * and answers for every card once `delayMs` has passed, as a real updater answers a batch later. Outcomes are decided
 * at submission by each card's last four digits (`simulator-account-updater-values.ts`). docs/simulator.md
 * "Account updater".
 *
 * Card numbers are kept in memory only (this is the provider's side) and never appear in an error message.
 */
import type { IncomingMessage } from 'node:http';
import { HttpFailure, readBody, type RouteAnswer } from './simulator-http';
import { accountUpdaterOutcomeForCard, extendedExpiry, replacementNumber } from './simulator-account-updater-values';
import type {
  WireAccountUpdaterJob,
  WireAccountUpdaterJobRequest,
  WireAccountUpdaterResult,
} from './simulator-account-updater-wire';

/** Ours: a job holds 1 to 1,000 cards, as `POST /account-updater/jobs` takes 1 to 1,000 payment methods. */
export const MAX_ACCOUNT_UPDATER_INQUIRIES = 1000;

const EXPIRY = /^(0[1-9]|1[0-2])\/\d{2}$/;
const CARD_NUMBER = /^\d{12,19}$/;

interface SimulatedJob {
  readonly id: string;
  readonly reference: string;
  readonly results: readonly WireAccountUpdaterResult[];
  completed: boolean;
}

export class SimulatorAccountUpdater {
  private readonly byId = new Map<string, SimulatedJob>();
  private readonly byReference = new Map<string, SimulatedJob>();

  /**
   * `later`: runs work after a delay (the simulator's timers, cleared on stop); `refuse`: throws while the caller's
   * merchant id is down (outages apply to submissions).
   */
  constructor(
    private readonly options: {
      readonly newId: (prefix: string) => string;
      readonly later: (ms: number, work: () => void) => void;
      readonly refuse: (request: IncomingMessage, body: unknown) => void;
      readonly delayMs: number;
    },
  ) {}

  /** `segments`: the path after `/v1/account-updater`. */
  async route(
    request: IncomingMessage,
    [collection, id, ...rest]: readonly (string | undefined)[],
  ): Promise<RouteAnswer> {
    const method = request.method ?? 'GET';
    if (collection === 'jobs' && rest.length === 0) {
      if (method === 'POST' && id === undefined) {
        const body = await readBody(request);
        this.options.refuse(request, body);
        return this.submit(body);
      }
      if (method === 'GET' && id !== undefined) {
        const job = this.byId.get(id);
        if (job === undefined) throw new HttpFailure(404, 'not_found', `no account updater job ${id}`);
        return { status: 200, body: toWire(job) };
      }
    }
    throw new HttpFailure(404, 'not_found', `no route ${method} ${request.url ?? ''}`);
  }

  /** 201 with a new job; 200 with the first one when its reference was seen before (its cards stand). */
  private submit(body: unknown): RouteAnswer {
    const job = validJob(body);
    const seen = this.byReference.get(job.reference);
    if (seen !== undefined) return { status: 200, body: toWire(seen) };
    const created: SimulatedJob = {
      id: this.options.newId('sim_au_job'),
      reference: job.reference,
      results: job.inquiries.map(({ reference, card }) => resultFor(reference, card.number, card.expiration_date)),
      completed: false,
    };
    this.byId.set(created.id, created);
    this.byReference.set(created.reference, created);
    this.options.later(this.options.delayMs, () => {
      created.completed = true;
    });
    return { status: 201, body: toWire(created) };
  }
}

function resultFor(reference: string, number: string, expirationDate: string): WireAccountUpdaterResult {
  const outcome = accountUpdaterOutcomeForCard(number);
  switch (outcome) {
    case 'updated_expiry':
      return { reference, outcome, number: null, expiration_date: extendedExpiry(expirationDate) };
    case 'updated_number':
      return { reference, outcome, number: replacementNumber(number), expiration_date: extendedExpiry(expirationDate) };
    default:
      return { reference, outcome, number: null, expiration_date: null };
  }
}

function toWire(job: SimulatedJob): WireAccountUpdaterJob {
  return {
    job_id: job.id,
    reference: job.reference,
    status: job.completed ? 'completed' : 'pending',
    inquiry_count: job.results.length,
    results: job.completed ? job.results : null,
  };
}

/** The request, or a 400 naming the first bad field (never its value: it may be a card number). */
function validJob(body: unknown): WireAccountUpdaterJobRequest {
  const job = body as Partial<WireAccountUpdaterJobRequest>;
  if (!isText(job.reference)) throw invalid('reference required');
  const inquiries: unknown = job.inquiries;
  if (!Array.isArray(inquiries) || inquiries.length === 0 || inquiries.length > MAX_ACCOUNT_UPDATER_INQUIRIES) {
    throw invalid(`inquiries must hold 1 to ${MAX_ACCOUNT_UPDATER_INQUIRIES} cards`);
  }
  const references = new Set<string>();
  inquiries.forEach((inquiry: unknown, index) => {
    const { reference, card } = (typeof inquiry === 'object' && inquiry !== null ? inquiry : {}) as {
      reference?: unknown;
      card?: { number?: unknown; expiration_date?: unknown };
    };
    if (!isText(reference)) throw invalid(`inquiries[${index}].reference required`);
    if (references.has(reference)) throw invalid(`inquiries[${index}].reference repeats another inquiry's`);
    references.add(reference);
    if (typeof card?.number !== 'string' || !CARD_NUMBER.test(card.number))
      throw invalid(`inquiries[${index}].card.number must be 12 to 19 digits`);
    if (typeof card.expiration_date !== 'string' || !EXPIRY.test(card.expiration_date))
      throw invalid(`inquiries[${index}].card.expiration_date must be MM/YY`);
  });
  return job as WireAccountUpdaterJobRequest;
}

const isText = (value: unknown): value is string => typeof value === 'string' && value !== '';

const invalid = (message: string) => new HttpFailure(400, 'invalid_request', message);
