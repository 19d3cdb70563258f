/** An account updater job as the API shows it (`AccountUpdaterJob`): the payment methods scheduled, one inquiry each. */
import type { AccountUpdaterJob } from '@switchyard/contracts';
import type { ExistingAccountUpdaterJob } from './account-updater-job';

export function toAccountUpdaterJob(
  job: Pick<ExistingAccountUpdaterJob, 'id' | 'merchantAccountId' | 'inquiries' | 'createdAt' | 'updatedAt'>,
): AccountUpdaterJob {
  return {
    type: 'account-updater-job',
    id: job.id,
    merchant_account_id: job.merchantAccountId,
    inquiries: job.inquiries.map((inquiry) => ({
      type: 'account-updater-inquiry',
      id: inquiry.id,
      payment_method_id: inquiry.paymentMethodId,
    })),
    created_at: job.createdAt,
    updated_at: job.updatedAt,
  };
}
