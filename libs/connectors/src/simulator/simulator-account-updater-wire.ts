/** The simulated account updater's HTTP messages (`/v1/account-updater/jobs`), snake_case as on the wire. */
import type { AccountUpdaterOutcome } from '../account-updater';

export interface WireAccountUpdaterJobRequest {
  readonly reference: string;
  readonly inquiries: readonly {
    readonly reference: string;
    readonly card: { readonly number: string; readonly expiration_date: string };
  }[];
}

export interface WireAccountUpdaterResult {
  readonly reference: string;
  readonly outcome: AccountUpdaterOutcome;
  readonly number: string | null;
  readonly expiration_date: string | null;
}

/** `results`: null while `pending`; one per inquiry, in the request's order, once `completed`. */
export interface WireAccountUpdaterJob {
  readonly job_id: string;
  readonly reference: string;
  readonly status: 'pending' | 'completed';
  readonly inquiry_count: number;
  readonly results: readonly WireAccountUpdaterResult[] | null;
}
