/**
 * Account updater jobs on the wire — `POST /account-updater/jobs` schedules stored cards for an update — and the
 * vault service's RPC pattern behind it. Shapes of `../shared/reference/wire-compat.md`
 * (AccountUpdaterJobCreate, AccountUpdaterJob, AccountUpdaterInquirySummary).
 */
import { z } from 'zod';

export const accountUpdaterPatterns = {
  createJob: 'vault.account-updater.jobs.create',
} as const;

/** Ours: one job takes at most 1,000 payment methods. */
export const MAX_ACCOUNT_UPDATER_PAYMENT_METHODS = 1000;

const timestamp = z.iso.datetime({ offset: true });

export const accountUpdaterJobCreateSchema = z
  .object({
    payment_method_ids: z
      .array(z.uuid())
      .min(1)
      .max(MAX_ACCOUNT_UPDATER_PAYMENT_METHODS)
      .meta({
        description:
          `1 to ${MAX_ACCOUNT_UPDATER_PAYMENT_METHODS} stored payment method ids. Only stored cards of this merchant account that are not ` +
          'already waiting for an update are scheduled, and only when the account has `account_updater_enabled`; the others are skipped.',
      }),
  })
  .strict()
  .meta({ id: 'AccountUpdaterJobCreate' });
export type AccountUpdaterJobCreateInput = z.infer<typeof accountUpdaterJobCreateSchema>;

export const accountUpdaterInquirySummarySchema = z
  .object({
    type: z.literal('account-updater-inquiry'),
    id: z.uuid(),
    payment_method_id: z.uuid(),
  })
  .meta({ id: 'AccountUpdaterInquirySummary', description: 'One payment method scheduled for an update.' });
export type AccountUpdaterInquirySummary = z.infer<typeof accountUpdaterInquirySummarySchema>;

export const accountUpdaterJobSchema = z
  .object({
    type: z.literal('account-updater-job'),
    id: z.uuid(),
    merchant_account_id: z.string(),
    inquiries: z.array(accountUpdaterInquirySummarySchema),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({
    id: 'AccountUpdaterJob',
    description: 'The payment methods scheduled; their results arrive later, on each payment method.',
  });
export type AccountUpdaterJob = z.infer<typeof accountUpdaterJobSchema>;

/** `createJob`: the job, or null when no payment method was scheduled (the gateway answers 204). */
export interface AccountUpdaterJobCreateRequest {
  readonly merchant_account_id: string;
  readonly body: AccountUpdaterJobCreateInput;
}
