/**
 * What providers send on their own: notifications (verified by the connector, applied once per provider event id,
 * remembered in `provider_notifications`) and settlement files (a settled refund moves from `processing` to
 * `succeeded`). Both are recorded through the shared plumbing, so a late or repeated message changes nothing.
 */
import type Database from 'better-sqlite3';
import { ApiError } from '@switchyard/api';
import { NotificationRejectedError, type ProviderNotification } from '@switchyard/connectors';
import type {
  ProviderNotificationAnswer,
  ProviderNotificationRequest,
  SettlementFileRequest,
  SettlementFileResult,
} from '@switchyard/contracts';
import type { PaymentServices } from '../payment-services/payment-services.slice';
import type { TransactionsContext } from '../transactions-context';
import { providerError, verificationCodes } from './provider-answers';
import { LateAuthorizations } from './late-authorizations';
import type { ProviderConnectors } from './provider-connectors';
import { parseSettlementFile } from './settlement-file';
import type { Transaction } from './transaction';
import type { ProviderOutcome } from './transaction.decide';
import type { TransactionStore } from './transaction-store';

export class ProviderMessages {
  private readonly notificationSeen: Database.Statement<[string, string]>;
  private readonly notificationApplied: Database.Statement<[string, string, string]>;
  private readonly lateAuthorizations: LateAuthorizations;

  constructor(
    private readonly context: TransactionsContext,
    private readonly store: TransactionStore,
    private readonly paymentServices: PaymentServices,
    private readonly connectors: ProviderConnectors,
    /** Where a vault-token notification goes (spec, Events rule 3); absent: acknowledged, nothing to make usable. */
    private readonly vaultTokens?: {
      receiveVaultToken(transactionId: string, paymentServiceId: string): Promise<void>;
    } | null,
  ) {
    context.db.exec(`CREATE TABLE IF NOT EXISTS provider_notifications (
      payment_service_id TEXT NOT NULL, event_id TEXT NOT NULL, received_at TEXT NOT NULL, PRIMARY KEY (payment_service_id, event_id))`);
    this.notificationSeen = context.db.prepare(
      'SELECT 1 FROM provider_notifications WHERE payment_service_id = ? AND event_id = ?',
    );
    this.notificationApplied = context.db.prepare(
      'INSERT OR IGNORE INTO provider_notifications (payment_service_id, event_id, received_at) VALUES (?, ?, ?)',
    );
    this.lateAuthorizations = new LateAuthorizations(store, paymentServices, connectors);
  }

  /**
   * A provider notification: verified by the connector (signature over the raw bytes), applied once per provider
   * event id. Answers what the connector's provider expects to hear back (null: 204).
   */
  async notify(request: ProviderNotificationRequest): Promise<ProviderNotificationAnswer | null> {
    const row = this.paymentServices.readModel.find(request.payment_service_id);
    if (!row) throw ApiError.notFound();
    const connection = this.paymentServices.connection(row.merchantAccountId, row.id);
    // A gift card service notifies nothing: its answers are synchronous (gift-card-payments.ts).
    if (!connection || connection.method === 'gift-card') throw ApiError.notFound();
    const connector = this.connectors.connectorFor(connection);
    const answer = connector.notificationAnswer
      ? {
          status: connector.notificationAnswer.status,
          content_type: connector.notificationAnswer.contentType,
          body: connector.notificationAnswer.body,
        }
      : null;
    let parsed: ProviderNotification | readonly ProviderNotification[] | null;
    try {
      parsed = connector.parseNotification(request.raw_body, request.headers);
    } catch (error) {
      if (!(error instanceof NotificationRejectedError)) throw error;
      if (error.reason === 'malformed_body')
        throw ApiError.badRequest(`The notification was rejected: ${error.message}`);
      throw ApiError.unauthorized(`The notification was rejected: ${error.message}`);
    }
    // Verified, but about nothing a transaction tracks (a report, a dispute): acknowledged so it is not resent.
    const notifications: readonly ProviderNotification[] = parsed === null ? [] : isList(parsed) ? parsed : [parsed];
    // Several events in one request (Adyen's batches): each is applied once; one about a transaction we do not know
    // refuses the request after the others are applied, so the provider's redelivery brings only that one back.
    let unknownTransaction = false;
    for (const notification of notifications) {
      if (this.notificationSeen.get(connection.id, notification.providerEventId)) continue;
      const state = await this.store.state(notification.reference);
      const ours =
        state.status !== 'absent' &&
        state.merchantAccountId === connection.merchantAccountId &&
        state.route.includes(connection.id);
      if (!ours) {
        unknownTransaction = true;
        continue;
      }
      // A connection the transaction failed over from has nothing more to say about it: acknowledged, not applied.
      if (state.paymentServiceId === connection.id) await this.applyNotification(state, notification);
      this.notificationApplied.run(connection.id, notification.providerEventId, this.store.now());
    }
    if (notifications.length > 0) await this.context.catchUp();
    if (unknownTransaction) throw ApiError.notFound();
    return answer;
  }

  private async applyNotification(t: Transaction, notification: ProviderNotification): Promise<void> {
    const id = t.id;
    switch (notification.type) {
      case 'authorization': {
        const error = providerError(notification);
        switch (notification.status) {
          case 'authorized':
          case 'captured': {
            const recorded = await this.store.record(id, {
              type: 'RecordAuthorizationResult',
              data: {
                source: 'notification',
                result: {
                  outcome: 'succeeded',
                  captured: notification.status === 'captured',
                  authorizedAmount: notification.amount,
                  paymentServiceTransactionId: notification.providerTransactionId,
                  ...(notification.avsResponseCode ? { avsResponseCode: notification.avsResponseCode } : {}),
                  ...(notification.cvvResponseCode ? { cvvResponseCode: notification.cvvResponseCode } : {}),
                  ...(notification.rawResponseCode ? { rawResponseCode: notification.rawResponseCode } : {}),
                },
              },
            });
            // A success after a decided failure: reversed now; the timer tries again if the provider cannot yet.
            await this.lateAuthorizations.reverseReceived(id, recorded).catch(() => undefined);
            return;
          }
          case 'declined':
          case 'failed':
            await this.store.record(id, {
              type: 'RecordAuthorizationResult',
              data: {
                source: 'notification',
                result: { outcome: notification.status, error, ...verificationCodes(notification) },
              },
            });
            return;
          case 'pending':
            await this.store.record(id, {
              type: 'RecordAuthorizationResult',
              data: {
                source: 'notification',
                result: { outcome: 'pending', paymentServiceTransactionId: notification.providerTransactionId },
              },
            });
            return;
          case 'voided':
            if (t.pendingVoidId)
              await this.store.record(id, {
                type: 'RecordVoidResult',
                data: { voidId: t.pendingVoidId, outcome: 'succeeded' },
              });
            return;
          case 'cancelled':
            return; // recorded by the cancel request itself, once the provider confirmed it
        }
        return;
      }
      case 'capture': {
        const { captureReference, providerCaptureId, amount } = notification;
        const open = (c: Transaction['captures'][number]) => c.status === 'pending';
        const capture = operationOf(t.captures, captureReference, providerCaptureId, amount, open);
        if (!capture) return;
        const outcome: ProviderOutcome =
          notification.status === 'succeeded'
            ? { outcome: 'succeeded', providerOperationId: providerCaptureId }
            : { outcome: notification.status, error: providerError(notification) };
        await this.store.record(id, { type: 'RecordCaptureResult', data: { captureId: capture.id, ...outcome } });
        return;
      }
      case 'refund': {
        const { refundReference, providerRefundId, amount } = notification;
        // Not a gift card redemption's refund: those are the gift card service's, answered at once.
        const open = (r: Transaction['refunds'][number]) => r.status === 'processing' && !r.target;
        const refund = operationOf(t.refunds, refundReference, providerRefundId, amount, open);
        if (!refund) return;
        const outcome: ProviderOutcome =
          notification.status === 'succeeded'
            ? { outcome: 'succeeded', providerOperationId: providerRefundId }
            : { outcome: 'failed', error: providerError(notification) };
        await this.store.record(id, { type: 'RecordRefundResult', data: { refundId: refund.id, ...outcome } });
        return;
      }
      case 'void': {
        if (!t.pendingVoidId) return;
        const outcome: ProviderOutcome =
          notification.status === 'succeeded'
            ? { outcome: 'succeeded' }
            : { outcome: 'failed', error: providerError(notification) };
        await this.store.record(id, { type: 'RecordVoidResult', data: { voidId: t.pendingVoidId, ...outcome } });
        return;
      }
      case 'authorization-increment': {
        // The increment was recorded `pending` when the provider took it; its final word raises the amount, or
        // records that it was not applied. An authorization captured or voided meanwhile has nothing to raise.
        if (t.status !== 'authorization_succeeded') return;
        const amount = notification.authorizedAmount - t.authorizedAmount;
        const incrementId = notification.incrementReference ?? notification.providerEventId;
        const responseCode = notification.rawResponseCode ? { responseCode: notification.rawResponseCode } : {};
        if (notification.status === 'succeeded' && amount > 0) {
          await this.store.record(id, {
            type: 'RecordAuthorizationIncrement',
            data: { incrementId, amount, outcome: 'succeeded', ...responseCode },
          });
          return;
        }
        if (notification.status === 'failed' && amount > 0) {
          await this.store.record(id, {
            type: 'RecordAuthorizationIncrement',
            data: { incrementId, amount, outcome: 'failed', ...responseCode },
          });
          return;
        }
        return;
      }
      case 'vault-token':
        // The provider vaulted the card a purchase asked to store: that payment method becomes usable.
        return this.vaultTokens?.receiveVaultToken(id, t.paymentServiceId);
    }
  }

  /**
   * A provider's settlement file: each refund record moves its `processing` refund to `succeeded` (spec, Refund
   * statuses). Records of other accounts' or unknown refunds are counted as unmatched; repeats change nothing.
   */
  async ingestSettlementFile(request: SettlementFileRequest): Promise<SettlementFileResult> {
    const connection = this.paymentServices.connection(request.merchant_account_id, request.payment_service_id);
    if (!connection) throw ApiError.notFound();
    const records = parseSettlementFile(request.content);
    let settled = 0;
    let already = 0;
    let unmatched = 0;
    for (const record of records) {
      if (record.recordType !== 'refund') continue;
      const owner = this.store.readModel.refundOwner(record.operationReference);
      if (
        !owner ||
        owner.merchantAccountId !== request.merchant_account_id ||
        owner.transactionId !== record.reference
      ) {
        unmatched += 1;
        continue;
      }
      const handled = await this.store
        .command(owner.transactionId, { type: 'IngestSettledRefund', data: { refundId: record.operationReference } })
        .catch((error: unknown) => {
          if (error instanceof ApiError && error.status === 400) return null; // declined or failed refunds do not settle
          throw error;
        });
      if (handled === null) unmatched += 1;
      else if (handled.events.length > 0) settled += 1;
      else already += 1;
    }
    await this.context.catchUp();
    return {
      type: 'settlement-file-ingestion',
      file_name: request.file_name,
      records: records.length,
      refunds_settled: settled,
      already_settled: already,
      unmatched,
    };
  }
}

type Parsed = ProviderNotification | readonly ProviderNotification[];
const isList = (parsed: Parsed): parsed is readonly ProviderNotification[] => Array.isArray(parsed);

/**
 * The capture or refund a provider's notification is about: by our id where the provider echoes it, else by the
 * provider's reference of it (recorded when it answered `pending`). A notification faster than that answer (the
 * provider call still on its way back) finds neither: it settles the oldest open one of its amount without a
 * reference yet, else of its amount at all — equal amounts make any choice add up the same.
 */
function operationOf<T extends { readonly id: string; readonly amount: number; readonly providerOperationId?: string }>(
  operations: readonly T[],
  ourId: string | undefined,
  providerId: string,
  amount: number,
  open: (operation: T) => boolean,
): T | undefined {
  if (ourId) return operations.find((o) => o.id === ourId);
  const byProvider = operations.find((o) => o.providerOperationId === providerId);
  if (byProvider) return byProvider;
  const candidates = operations.filter((o) => open(o) && o.amount === amount);
  return candidates.find((o) => o.providerOperationId === undefined) ?? candidates[0];
}
