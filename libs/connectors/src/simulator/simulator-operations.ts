/**
 * The simulator's operations on an existing transaction (capture, void, cancel, refund, increment) and the
 * response codes every answer carries. Rules: docs/simulator.md "Other rules".
 */
import { requireAmount } from './simulator-http';
import { toWireTransaction, type SimulatedTransaction, type SimulatorLedger } from './simulator-ledger';
import { declineAmounts, decisionForAmount, failureAmounts, scenarioAmounts } from './simulator-values';
import type {
  WireCapture,
  WireCaptureRequest,
  WireCaptureResponse,
  WireIncrementRequest,
  WireOperationResponse,
  WireRefund,
  WireRefundRequest,
  WireRefundResponse,
  WireResponseCodes,
} from './simulator-wire';

export const approvedCodes: WireResponseCodes = {
  error_code: null,
  raw_response_code: '00',
  raw_response_description: 'Approved',
};
export const pendingCodes: WireResponseCodes = {
  error_code: null,
  raw_response_code: '01',
  raw_response_description: 'Pending',
};

/** Raw code = the reference amount that triggers the error code, as a PSP's own numeric code would be. */
export function errorCodes(errorCode: string): WireResponseCodes {
  const entry = Object.entries({ ...declineAmounts, ...failureAmounts }).find(([, code]) => code === errorCode);
  return {
    error_code: errorCode,
    raw_response_code: entry?.[0] ?? '999999',
    raw_response_description: errorCode.replace(/_/g, ' '),
  };
}

export function setCodes(t: SimulatedTransaction, codes: WireResponseCodes): void {
  Object.assign(t, {
    errorCode: codes.error_code,
    rawResponseCode: codes.raw_response_code,
    rawResponseDescription: codes.raw_response_description,
  });
}

/** Approves the full amount: `captured` when the authorization asked for capture, else `authorized`. */
export function approve(t: SimulatedTransaction, capture: boolean): void {
  t.status = capture ? 'captured' : 'authorized';
  t.authorizedAmount = t.amount;
  t.capturedAmount = capture ? t.amount : 0;
  setCodes(t, approvedCodes);
}

export function reject(t: SimulatedTransaction, status: 'declined' | 'failed', errorCode: string): void {
  t.status = status;
  setCodes(t, errorCodes(errorCode));
}

export function capture(
  ledger: SimulatorLedger,
  t: SimulatedTransaction,
  body: WireCaptureRequest,
): WireCaptureResponse {
  requireAmount(body.amount);
  ledger.count(t.reference, 'captures');
  const record = (status: WireCapture['status'], codes: WireResponseCodes): WireCapture => {
    const captured: WireCapture = { id: ledger.newId('sim_cap'), amount: body.amount, status, ...codes };
    t.captures.push(captured);
    return captured;
  };
  let result: WireCapture;
  if (t.status !== 'authorized' && t.status !== 'captured') result = record('failed', errorCodes('unexpected_state'));
  else if (t.capturedAmount + body.amount > Math.max(t.authorizedAmount, body.max_total_amount ?? 0))
    result = record('failed', errorCodes('invalid_amount'));
  else if (t.amount === scenarioAmounts.captureDeclined)
    result = record('declined', errorCodes('expired_authorization'));
  else {
    t.capturedAmount += body.amount;
    t.status = 'captured';
    result = record('succeeded', approvedCodes);
  }
  return { capture: result, transaction: toWireTransaction(t) };
}

/** Cancel also abandons a redirect payment the buyer has not decided on yet. */
export function voidOrCancel(
  ledger: SimulatorLedger,
  t: SimulatedTransaction,
  operation: 'voids' | 'cancels',
): WireOperationResponse {
  ledger.count(t.reference, operation);
  const allowed =
    operation === 'voids'
      ? t.status === 'authorized' && t.capturedAmount === 0
      : t.status === 'pending' || t.status === 'buyer_approval_required';
  if (!allowed) return { status: 'failed', ...errorCodes('unexpected_state'), transaction: toWireTransaction(t) };
  t.status = operation === 'voids' ? 'voided' : 'cancelled';
  return { status: 'succeeded', ...approvedCodes, transaction: toWireTransaction(t) };
}

export function refund(ledger: SimulatorLedger, t: SimulatedTransaction, body: WireRefundRequest): WireRefundResponse {
  requireAmount(body.amount);
  ledger.count(t.reference, 'refunds');
  const pending = t.refunds.filter((r) => r.status === 'pending').reduce((sum, r) => sum + r.amount, 0);
  const record = (status: WireRefund['status'], codes: WireResponseCodes): WireRefund => {
    const refunded: WireRefund = {
      id: ledger.newId('sim_ref'),
      refund_reference: body.refund_reference,
      amount: body.amount,
      currency: t.currency,
      status,
      ...codes,
    };
    t.refunds.push(refunded);
    return refunded;
  };
  let result: WireRefund;
  if (t.status !== 'captured') result = record('failed', errorCodes('unexpected_state'));
  else if (body.amount > t.capturedAmount - t.refundedAmount - pending)
    result = record('failed', errorCodes('invalid_amount'));
  else if (t.amount === scenarioAmounts.refundFails) result = record('failed', errorCodes('refund_period_expired'));
  else if (t.amount === scenarioAmounts.refundSettlesAsynchronously && body.allow_async_settlement)
    result = record('pending', pendingCodes);
  else {
    t.refundedAmount += body.amount;
    result = record('succeeded', approvedCodes);
  }
  return { refund: result, transaction: toWireTransaction(t) };
}

export function increment(
  ledger: SimulatorLedger,
  t: SimulatedTransaction,
  body: WireIncrementRequest,
): WireOperationResponse {
  requireAmount(body.amount);
  ledger.count(t.reference, 'increments');
  if (t.status !== 'authorized')
    return { status: 'failed', ...errorCodes('unexpected_state'), transaction: toWireTransaction(t) };
  // An increment by the "pending" scenario amount is left undecided by the issuer: nothing changes.
  if (body.amount === scenarioAmounts.pendingThenAuthorized)
    return { status: 'pending', ...pendingCodes, transaction: toWireTransaction(t) };
  const decision = decisionForAmount(body.amount);
  if (decision.result !== 'approved')
    return { status: decision.result, ...errorCodes(decision.errorCode), transaction: toWireTransaction(t) };
  t.authorizedAmount += body.amount;
  return { status: 'succeeded', ...approvedCodes, transaction: toWireTransaction(t) };
}
