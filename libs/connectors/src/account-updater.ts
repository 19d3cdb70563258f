/**
 * The account updater port: what Switchyard asks of a card account updater service (the card schemes' updater
 * programmes, or the simulator's, `simulator/simulator-account-updater.ts`). A job is a batch of stored cards sent
 * under OUR reference; the service answers asynchronously, so results are asked for later by the service's job id.
 *
 * `submit` is idempotent by the job's reference: sending the same reference again (after a timeout, or a crash before
 * the provider's job id was recorded) answers the same job and schedules nothing twice. An unreachable service, a
 * 5xx or no answer in time throws a retriable `ConnectorUnavailableError`; a refused request
 * `ConnectorRequestRejectedError` (connector-errors.ts).
 */

/**
 * What the service found for one card: a new expiry, a new number (a reissued card, with its new expiry when the
 * service gives one), nothing new, an account closed, or the cardholder to be asked (the issuer would not say more).
 */
export type AccountUpdaterOutcome = 'updated_expiry' | 'updated_number' | 'no_change' | 'closed' | 'contact_cardholder';

export const accountUpdaterOutcomes: readonly AccountUpdaterOutcome[] = [
  'updated_expiry',
  'updated_number',
  'no_change',
  'closed',
  'contact_cardholder',
];

export interface AccountUpdaterCard {
  /** 12 to 19 digits. Only ever sent to the service: never logged, stored or emitted. */
  readonly number: string;
  /** MM/YY. */
  readonly expirationDate: string;
}

export interface AccountUpdaterInquiryRequest {
  /** Ours (the inquiry id): the result for this card carries it back. */
  readonly reference: string;
  readonly card: AccountUpdaterCard;
}

export interface AccountUpdaterJobRequest {
  /** Ours (the job id); the service is idempotent by it. */
  readonly reference: string;
  readonly inquiries: readonly AccountUpdaterInquiryRequest[];
}

export interface AccountUpdaterResult {
  /** The inquiry's reference. */
  readonly reference: string;
  readonly outcome: AccountUpdaterOutcome;
  /** The new number (`updated_number`); hand it to the vault only. */
  readonly number?: string;
  /** The new expiry, MM/YY (`updated_expiry`, and `updated_number` when the service gives one). */
  readonly expirationDate?: string;
}

export type AccountUpdaterJobResults =
  | { readonly status: 'pending' }
  | { readonly status: 'completed'; readonly results: readonly AccountUpdaterResult[] };

export interface AccountUpdaterService {
  submit(job: AccountUpdaterJobRequest): Promise<{ readonly providerJobId: string }>;
  /** `pending` until the service has answered for every card of the job. */
  results(providerJobId: string): Promise<AccountUpdaterJobResults>;
}
