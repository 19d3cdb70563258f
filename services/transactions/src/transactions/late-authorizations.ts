/**
 * A provider's success that came after we recorded the authorization as failed or declined — a redirect approved
 * after the hold window ended, an authorization that reached the provider after reconciliation was told "not found",
 * any late notification or sync — is recorded by the decider (`LateAuthorizationReceived`) and reversed here at the
 * provider: voided, or refunded when the provider captured it too. The record keeps the failure it had decided; the
 * reversal is `LateAuthorizationReversed`. Shared by every connector: it runs wherever an authorization result is
 * recorded from the provider (notifications, sync), and the service's timer retries reversals the provider refused
 * or could not take (unreachable) on every round.
 */
import type { PaymentServices } from '../payment-services/payment-services.slice';
import type { ProviderConnectors } from './provider-connectors';
import type { TransactionEvent } from './transaction';
import type { TransactionStore } from './transaction-store';

export class LateAuthorizations {
  constructor(
    private readonly store: TransactionStore,
    private readonly paymentServices: PaymentServices,
    private readonly connectors: ProviderConnectors,
  ) {}

  /** After recording a provider's word: reverses the late authorization those events received, if any. */
  async reverseReceived(id: string, recorded: readonly TransactionEvent[]): Promise<void> {
    if (recorded.some((event) => event.type === 'LateAuthorizationReceived')) await this.reverse(id);
  }

  /**
   * Reverses the transaction's late authorization at the provider unless it is already. True when it was reversed
   * now; false when there is nothing to reverse, or the provider did not confirm it (tried again on the next round).
   */
  async reverse(id: string): Promise<boolean> {
    const t = await this.store.state(id);
    if (t.status === 'absent' || !t.lateAuthorization || t.lateAuthorization.reversed) return false;
    const late = t.lateAuthorization;
    const connection = this.paymentServices.connection(t.merchantAccountId, t.paymentServiceId);
    if (!connection)
      throw new Error(
        `transaction ${id}: its late authorization cannot be reversed, ` +
          `payment service ${t.paymentServiceId} was deleted`,
      );
    const connector = this.connectors.connectorFor(connection);
    const providerTransactionId = late.paymentServiceTransactionId ?? '';
    // The transaction's own id is the reversal's reference: its one late authorization, never one of its operations.
    const answer = late.captured
      ? await this.store.call(() =>
          connector.refund({
            reference: id,
            providerTransactionId,
            refundReference: id,
            amount: late.amount,
            currency: t.currency,
          }),
        )
      : await this.store.call(() => connector.void({ reference: id, providerTransactionId, voidReference: id }));
    if (answer.outcome !== 'succeeded') return false;
    const via = late.captured ? 'refund' : 'void';
    await this.store.record(id, {
      type: 'RecordLateAuthorizationReversal',
      data: { via, ...(answer.rawResponseCode ? { rawResponseCode: answer.rawResponseCode } : {}) },
    });
    return true;
  }
}
