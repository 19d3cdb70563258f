/**
 * The `mock-card` provider simulator: a standalone HTTP server with an in-memory ledger. The mock-card connector
 * calls it over real HTTP; it POSTs signed notifications to a callback URL over real HTTP. Every behaviour is
 * decided by the values in `simulator-values.ts` (docs/simulator.md).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventIdHeader, signatureHeader, signNotification } from './notification-signature';
import { SimulatorLedger, toWireTransaction, type SimulatedTransaction } from './simulator-ledger';
import {
  avsForPostalCode,
  cvvForSecurityCode,
  declineAmounts,
  decisionForAmount,
  failureAmounts,
  scenarioAmounts,
  scenarioForAmount,
  slowResponseDelayMs,
} from './simulator-values';
import type {
  WireAuthorizeRequest,
  WireCapture,
  WireCaptureRequest,
  WireIncrementRequest,
  WireNotification,
  WireOperationResponse,
  WireRefund,
  WireRefundRequest,
  WireResponseCodes,
} from './simulator-wire';

export interface SimulatorOptions {
  readonly host?: string;
  /** 0 (default): any free port. */
  readonly port?: number;
  /** HMAC key for the `x-mock-card-signature` header; the connection's `webhookSecret` must match. */
  readonly webhookSecret: string;
  /** Default notification target when an authorization names no `notification_url`. */
  readonly callbackUrl?: string;
  /** Delay before a pending authorization is settled by notification (500001, 500002, 500005). Default 50 ms. */
  readonly settleDelayMs?: number;
  /** How long 500006 keeps the caller waiting; longer than any client timeout. Default 30 s. */
  readonly unknownOutcomeDelayMs?: number;
  readonly now?: () => Date;
}

export interface NotificationDelivery {
  readonly url: string;
  readonly eventId: string;
  readonly status: number | 'network_error';
}

export interface SettlementFile {
  readonly fileName: string;
  /** CSV, see docs/simulator.md "Settlement file". */
  readonly content: string;
}

export interface RunningSimulator {
  /** Base URL, e.g. http://127.0.0.1:43121 */
  readonly url: string;
  readonly ledger: SimulatorLedger;
  readonly deliveries: readonly NotificationDelivery[];
  /** Settles every pending refund, delivers their notifications, and returns the settlement file. */
  produceSettlementFile(): Promise<SettlementFile>;
  stop(): Promise<void>;
}

class HttpFailure extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

const approvedCodes: WireResponseCodes = { error_code: null, raw_response_code: '00', raw_response_description: 'Approved' };
const pendingCodes: WireResponseCodes = { error_code: null, raw_response_code: '01', raw_response_description: 'Pending' };

/** Raw code = the reference amount that triggers the error code, as a PSP's own numeric code would be. */
function errorCodes(errorCode: string): WireResponseCodes {
  const entry = Object.entries({ ...declineAmounts, ...failureAmounts }).find(([, code]) => code === errorCode);
  return { error_code: errorCode, raw_response_code: entry?.[0] ?? '999999', raw_response_description: errorCode.replace(/_/g, ' ') };
}

export async function startSimulator(options: SimulatorOptions): Promise<RunningSimulator> {
  const ledger = new SimulatorLedger();
  const deliveries: NotificationDelivery[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const settledOperationIds = new Set<string>();
  const now = options.now ?? (() => new Date());
  const settleDelayMs = options.settleDelayMs ?? 50;
  const unknownOutcomeDelayMs = options.unknownOutcomeDelayMs ?? 30_000;

  const later = (ms: number, work: () => Promise<void> | void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      void work();
    }, ms);
    timers.add(timer);
  };
  const sleep = (ms: number) => new Promise<void>((resolve) => later(ms, resolve));

  function notification(t: SimulatedTransaction, type: WireNotification['type'], fields: Partial<WireNotification>): WireNotification {
    t.sequence += 1;
    return {
      event_id: ledger.newId('sim_evt'),
      type,
      sequence: t.sequence,
      occurred_at: now().toISOString(),
      reference: t.reference,
      transaction_id: t.id,
      ...fields,
    };
  }

  function authorizationNotification(t: SimulatedTransaction): WireNotification {
    return notification(t, 'authorization', {
      status: t.status,
      amount: t.amount,
      currency: t.currency,
      error_code: t.errorCode,
      raw_response_code: t.rawResponseCode,
      raw_response_description: t.rawResponseDescription,
      avs_response_code: t.avsResponseCode,
      cvv_response_code: t.cvvResponseCode,
    });
  }

  async function deliver(t: SimulatedTransaction, body: WireNotification): Promise<void> {
    const url = t.notificationUrl ?? options.callbackUrl;
    if (url === undefined) return;
    const raw = JSON.stringify(body);
    const signature = signNotification(options.webhookSecret, raw, Math.floor(now().getTime() / 1000));
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [signatureHeader]: signature, [eventIdHeader]: body.event_id },
        body: raw,
        signal: AbortSignal.timeout(5_000),
      });
      await response.arrayBuffer();
      deliveries.push({ url, eventId: body.event_id, status: response.status });
    } catch {
      deliveries.push({ url, eventId: body.event_id, status: 'network_error' });
    }
  }

  /** Returns false when the transaction is no longer pending (cancelled meanwhile): nothing to settle or notify. */
  function settle(t: SimulatedTransaction, outcome: 'authorized' | 'declined', capture: boolean): boolean {
    if (t.status !== 'pending') return false;
    if (outcome === 'authorized') {
      t.status = capture ? 'captured' : 'authorized';
      t.authorizedAmount = t.amount;
      t.capturedAmount = capture ? t.amount : 0;
      Object.assign(t, { errorCode: null, rawResponseCode: '00', rawResponseDescription: 'Approved' });
    } else {
      t.status = 'declined';
      const codes = errorCodes('issuer_decline');
      Object.assign(t, { errorCode: codes.error_code, rawResponseCode: codes.raw_response_code, rawResponseDescription: codes.raw_response_description });
    }
    return true;
  }

  async function authorize(body: WireAuthorizeRequest) {
    requireAmount(body.amount);
    if (typeof body.reference !== 'string' || body.reference === '') throw new HttpFailure(400, 'invalid_request', 'reference is required');
    if (typeof body.currency !== 'string' || !/^[A-Z]{3}$/.test(body.currency)) throw new HttpFailure(400, 'invalid_request', 'currency must be ISO 4217');
    const instrument = body.payment_instrument;
    if (instrument?.type !== 'card' && instrument?.type !== 'network_token') throw new HttpFailure(400, 'invalid_request', 'payment_instrument is required');
    const scenario = scenarioForAmount(body.amount);
    if (scenario === 'serviceUnavailable') throw new HttpFailure(503, 'service_unavailable', 'simulated outage');

    ledger.count(body.reference, 'authorizations');
    const decision = decisionForAmount(body.amount);
    const reachedIssuer = decision.result !== 'failed';
    const t: SimulatedTransaction = {
      id: ledger.newId('sim_txn'),
      reference: body.reference,
      amount: body.amount,
      currency: body.currency,
      notificationUrl: body.notification_url,
      status: 'pending',
      authorizedAmount: 0,
      capturedAmount: 0,
      refundedAmount: 0,
      errorCode: null,
      rawResponseCode: null,
      rawResponseDescription: null,
      avsResponseCode: reachedIssuer ? avsForPostalCode(body.billing_postal_code) : null,
      cvvResponseCode: reachedIssuer ? cvvForSecurityCode(instrument.type === 'card' ? instrument.security_code : undefined) : null,
      captures: [],
      refunds: [],
      sequence: 0,
    };
    ledger.add(t);
    const setCodes = (codes: WireResponseCodes) =>
      Object.assign(t, { errorCode: codes.error_code, rawResponseCode: codes.raw_response_code, rawResponseDescription: codes.raw_response_description });

    if (decision.result !== 'approved') {
      t.status = decision.result;
      setCodes(errorCodes(decision.errorCode));
      return toWireTransaction(t);
    }
    switch (scenario) {
      case 'pendingThenAuthorized':
      case 'pendingThenDeclined':
        setCodes(pendingCodes);
        later(settleDelayMs, async () => {
          if (settle(t, scenario === 'pendingThenAuthorized' ? 'authorized' : 'declined', body.capture)) {
            await deliver(t, authorizationNotification(t));
          }
        });
        return toWireTransaction(t);
      case 'outOfOrderNotifications': {
        setCodes(pendingCodes);
        const first = authorizationNotification(t);
        later(settleDelayMs, async () => {
          if (!settle(t, 'authorized', body.capture)) return;
          await deliver(t, authorizationNotification(t));
          await deliver(t, first);
        });
        return toWireTransaction(t);
      }
      case 'failureNotifiedDuringRequest':
        t.status = 'failed';
        t.avsResponseCode = null;
        t.cvvResponseCode = null;
        setCodes(errorCodes('service_error'));
        await deliver(t, authorizationNotification(t));
        return toWireTransaction(t);
      default:
        break;
    }
    t.status = body.capture ? 'captured' : 'authorized';
    t.authorizedAmount = body.amount;
    t.capturedAmount = body.capture ? body.amount : 0;
    setCodes(approvedCodes);
    if (scenario === 'duplicateNotification') {
      const event = authorizationNotification(t);
      later(settleDelayMs, async () => {
        await deliver(t, event);
        await deliver(t, event);
      });
    }
    if (body.store_payment_method === true && instrument.type === 'card') {
      const event = notification(t, 'vault_token', {
        token: ledger.newId('sim_tok'),
        card_last4: instrument.number.slice(-4),
        expiration_date: instrument.expiration_date,
      });
      later(settleDelayMs, () => deliver(t, event));
    }
    const delay = scenario === 'timeoutUnknownOutcome' ? unknownOutcomeDelayMs : slowResponseDelayMs(body.amount);
    if (delay > 0) await sleep(delay);
    return toWireTransaction(t);
  }

  function capture(t: SimulatedTransaction, body: WireCaptureRequest) {
    requireAmount(body.amount);
    ledger.count(t.reference, 'captures');
    const record = (status: WireCapture['status'], codes: WireResponseCodes): WireCapture => {
      const captured: WireCapture = { id: ledger.newId('sim_cap'), amount: body.amount, status, ...codes };
      t.captures.push(captured);
      return captured;
    };
    let result: WireCapture;
    if (t.status !== 'authorized' && t.status !== 'captured') result = record('failed', errorCodes('unexpected_state'));
    else if (t.capturedAmount + body.amount > Math.max(t.authorizedAmount, body.max_total_amount ?? 0)) result = record('failed', errorCodes('invalid_amount'));
    else if (t.amount === scenarioAmounts.captureDeclined) result = record('declined', errorCodes('expired_authorization'));
    else {
      t.capturedAmount += body.amount;
      t.status = 'captured';
      result = record('succeeded', approvedCodes);
    }
    return { capture: result, transaction: toWireTransaction(t) };
  }

  function voidOrCancel(t: SimulatedTransaction, operation: 'voids' | 'cancels'): WireOperationResponse {
    ledger.count(t.reference, operation);
    const allowed = operation === 'voids' ? t.status === 'authorized' && t.capturedAmount === 0 : t.status === 'pending';
    if (!allowed) return { status: 'failed', ...errorCodes('unexpected_state'), transaction: toWireTransaction(t) };
    t.status = operation === 'voids' ? 'voided' : 'cancelled';
    return { status: 'succeeded', ...approvedCodes, transaction: toWireTransaction(t) };
  }

  function refund(t: SimulatedTransaction, body: WireRefundRequest) {
    requireAmount(body.amount);
    ledger.count(t.reference, 'refunds');
    const pending = t.refunds.filter((r) => r.status === 'pending').reduce((sum, r) => sum + r.amount, 0);
    const record = (status: WireRefund['status'], codes: WireResponseCodes): WireRefund => {
      const refunded: WireRefund = { id: ledger.newId('sim_ref'), refund_reference: body.refund_reference, amount: body.amount, currency: t.currency, status, ...codes };
      t.refunds.push(refunded);
      return refunded;
    };
    let result: WireRefund;
    if (t.status !== 'captured') result = record('failed', errorCodes('unexpected_state'));
    else if (body.amount > t.capturedAmount - t.refundedAmount - pending) result = record('failed', errorCodes('invalid_amount'));
    else if (t.amount === scenarioAmounts.refundFails) result = record('failed', errorCodes('refund_period_expired'));
    else if (t.amount === scenarioAmounts.refundSettlesAsynchronously && body.allow_async_settlement) result = record('pending', pendingCodes);
    else {
      t.refundedAmount += body.amount;
      result = record('succeeded', approvedCodes);
    }
    return { refund: result, transaction: toWireTransaction(t) };
  }

  function increment(t: SimulatedTransaction, body: WireIncrementRequest): WireOperationResponse {
    requireAmount(body.amount);
    ledger.count(t.reference, 'increments');
    if (t.status !== 'authorized') return { status: 'failed', ...errorCodes('unexpected_state'), transaction: toWireTransaction(t) };
    // An increment by the "pending" scenario amount is left undecided by the issuer: nothing changes.
    if (body.amount === scenarioAmounts.pendingThenAuthorized) return { status: 'pending', raw_response_code: '01', raw_response_description: 'Pending', error_code: null, transaction: toWireTransaction(t) };
    const decision = decisionForAmount(body.amount);
    if (decision.result !== 'approved') return { status: decision.result, ...errorCodes(decision.errorCode), transaction: toWireTransaction(t) };
    t.authorizedAmount += body.amount;
    return { status: 'succeeded', ...approvedCodes, transaction: toWireTransaction(t) };
  }

  async function produceSettlementFile(): Promise<SettlementFile> {
    const settledAt = now().toISOString();
    const lines = ['record_type,provider_transaction_id,reference,provider_operation_id,operation_reference,amount,currency,status,settled_at'];
    const notifications: [SimulatedTransaction, WireNotification][] = [];
    for (const t of ledger.all()) {
      for (const c of t.captures) {
        if (c.status !== 'succeeded' || settledOperationIds.has(c.id)) continue;
        settledOperationIds.add(c.id);
        lines.push(['capture', t.id, t.reference, c.id, '', c.amount, t.currency, 'settled', settledAt].join(','));
      }
      t.refunds.forEach((r, index) => {
        if (r.status === 'failed' || settledOperationIds.has(r.id)) return;
        settledOperationIds.add(r.id);
        if (r.status === 'pending') {
          const settled: WireRefund = { ...r, ...approvedCodes, status: 'succeeded' };
          t.refunds[index] = settled;
          t.refundedAmount += r.amount;
          notifications.push([t, notification(t, 'refund', { status: 'succeeded', amount: r.amount, currency: t.currency, refund_id: r.id, refund_reference: r.refund_reference, error_code: null })]);
        }
        lines.push(['refund', t.id, t.reference, r.id, r.refund_reference, r.amount, t.currency, 'settled', settledAt].join(','));
      });
    }
    for (const [t, event] of notifications) await deliver(t, event);
    return { fileName: `mock-card-settlement-${settledAt.slice(0, 10)}-${ledger.newId('file')}.csv`, content: `${lines.join('\n')}\n` };
  }

  function find(id: string): SimulatedTransaction {
    const t = ledger.get(id);
    if (t === undefined) throw new HttpFailure(404, 'not_found', `no transaction ${id}`);
    return t;
  }

  async function route(request: IncomingMessage): Promise<{ status: number; body: unknown; contentType?: string }> {
    const url = new URL(request.url ?? '/', 'http://simulator');
    const method = request.method ?? 'GET';
    const segments = url.pathname.split('/').filter((s) => s !== '');
    if (segments[0] !== 'v1') throw new HttpFailure(404, 'not_found', 'unknown path');
    const [, collection, id, action] = segments;
    if (collection === 'authorizations' && id === undefined) {
      if (method === 'POST') return { status: 201, body: await authorize((await readJson(request)) as WireAuthorizeRequest) };
      if (method === 'GET') {
        const reference = url.searchParams.get('reference') ?? '';
        ledger.count(reference, 'syncs');
        const t = ledger.findByReference(reference);
        if (t === undefined) throw new HttpFailure(404, 'not_found', `no transaction with reference ${reference}`);
        return { status: 200, body: toWireTransaction(t) };
      }
    }
    if (collection === 'authorizations' && id !== undefined) {
      const t = find(id);
      if (action === undefined && method === 'GET') {
        ledger.count(t.reference, 'syncs');
        return { status: 200, body: toWireTransaction(t) };
      }
      if (method === 'POST') {
        const body = await readJson(request);
        if (action === 'captures') return { status: 200, body: capture(t, body as WireCaptureRequest) };
        if (action === 'void') return { status: 200, body: voidOrCancel(t, 'voids') };
        if (action === 'cancel') return { status: 200, body: voidOrCancel(t, 'cancels') };
        if (action === 'refunds') return { status: 200, body: refund(t, body as WireRefundRequest) };
        if (action === 'increments') return { status: 200, body: increment(t, body as WireIncrementRequest) };
      }
    }
    if (collection === 'ledger' && method === 'GET') return { status: 200, body: ledger.counts(url.searchParams.get('reference') ?? '') };
    if (collection === 'settlement-files' && method === 'POST') {
      const file = await produceSettlementFile();
      return { status: 201, body: file.content, contentType: 'text/csv' };
    }
    throw new HttpFailure(404, 'not_found', `no route ${method} ${url.pathname}`);
  }

  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    route(request)
      .then(({ status, body, contentType }) => send(response, status, body, contentType))
      .catch((error: unknown) => {
        if (error instanceof HttpFailure) send(response, error.status, { error: error.code, message: error.message });
        else send(response, 500, { error: 'internal_error', message: String(error) });
      });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;

  return {
    url: `http://${address.address}:${address.port}`,
    ledger,
    deliveries,
    produceSettlementFile,
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function requireAmount(amount: unknown): void {
  if (typeof amount !== 'number' || !Number.isInteger(amount) || amount <= 0) {
    throw new HttpFailure(400, 'invalid_request', 'amount must be a positive integer in minor units');
  }
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpFailure(400, 'invalid_request', 'body is not JSON');
  }
}

function send(response: ServerResponse, status: number, body: unknown, contentType = 'application/json'): void {
  if (response.destroyed || response.writableEnded) return; // the caller gave up (timeout scenario)
  const text = contentType === 'application/json' ? JSON.stringify(body) : String(body);
  response.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  response.end(text);
}
