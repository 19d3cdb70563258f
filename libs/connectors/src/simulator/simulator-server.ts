/**
 * The provider simulator: a standalone HTTP server with an in-memory ledger, serving the `mock-card` and
 * `mock-paypal` connectors (cards, network tokens, a redirect wallet), a 3-D Secure directory server / ACS
 * (`simulator-acs.ts`), the `mock-gift-card` provider (`simulator-gift-cards.ts`) and an account updater
 * (`simulator-account-updater.ts`). Connectors call it over real HTTP; it POSTs signed notifications to a callback URL
 * over real HTTP. Every behaviour is decided by the values in `simulator-values.ts` (docs/simulator.md).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventIdHeader, signatureHeader, signNotification } from './notification-signature';
import { SimulatorAccountUpdater } from './simulator-account-updater';
import { SimulatorAcs } from './simulator-acs';
import { SimulatorGiftCards } from './simulator-gift-cards';
import { SimulatorNetworkTokens } from './simulator-network-tokens';
import {
  baseUrlOf,
  html,
  HttpFailure,
  readBody,
  requireAmount,
  requireCurrency,
  requireText,
  send,
  sendFailure,
  withQueryParameter,
  type RouteAnswer,
} from './simulator-http';
import {
  defaultLedgerCapacity,
  SimulatorLedger,
  toWireTransaction,
  type BuyerApproval,
  type SimulatedTransaction,
} from './simulator-ledger';
import {
  approve,
  approvedCodes,
  capture,
  increment,
  pendingCodes,
  refund,
  reject,
  setCodes,
  voidOrCancel,
} from './simulator-operations';
import { approvalPage } from './simulator-pages';
import {
  avsForPostalCode,
  cvvForSecurityCode,
  decisionForAmount,
  scenarioForAmount,
  slowResponseDelayMs,
} from './simulator-values';
import {
  merchantIdHeader,
  type WireApprovalDecision,
  type WireAuthorizeRequest,
  type WireCaptureRequest,
  type WireGiftCardLedgerCard,
  type WireIncrementRequest,
  type WireNotification,
  type WireRefund,
  type WireRefundRequest,
  type WireTransaction,
} from './simulator-wire';

export interface SimulatorOptions {
  readonly host?: string;
  /** 0 (default): any free port. */
  readonly port?: number;
  /** HMAC key for the `x-mock-card-signature` header; the connection's `webhookSecret` must match. */
  readonly webhookSecret: string;
  /** Default notification target when an authorization names no `notification_url`. */
  readonly callbackUrl?: string;
  /**
   * Delay before a pending authorization is settled by notification (500001, 500002, 500005), and before the
   * notification of a buyer's wallet decision is sent. Default 50 ms.
   */
  readonly settleDelayMs?: number;
  /** How long 500006 keeps the caller waiting, and how late 500013 arrives; longer than any timeout. Default 30 s. */
  readonly unknownOutcomeDelayMs?: number;
  /** 500011: its notification and its answer each wait a random 0..raceWindowMs, independently. Default 20 ms. */
  readonly raceWindowMs?: number;
  /** Where the 500011 delays come from, in [0, 1). Default `Math.random`. */
  readonly random?: () => number;
  readonly now?: () => Date;
  /** How long the account updater takes to answer a job (`/v1/account-updater/jobs`). Default 200 ms. */
  readonly accountUpdaterDelayMs?: number;
  /**
   * How many references (with their counts and transactions), network tokens and notification deliveries the
   * simulator keeps in memory, the oldest forgotten first. Default 10,000.
   */
  readonly ledgerCapacity?: number;
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
  /** Every notification attempt, in order; the last `ledgerCapacity` of them. */
  readonly deliveries: readonly NotificationDelivery[];
  /** Settles every pending refund, delivers their notifications, and returns the settlement file. */
  produceSettlementFile(): Promise<SettlementFile>;
  /**
   * While down, every POST under `/v1/authorizations`, `/v1/gift-cards` and `/v1/account-updater` for that merchant
   * id answers 503 and records nothing.
   */
  setOutage(merchantId: string, down: boolean): void;
  /** The gift card provider's ledger for one card (`GET /v1/gift-cards/cards/{number}`); undefined when never seen. */
  giftCard(number: string): WireGiftCardLedgerCard | undefined;
  stop(): Promise<void>;
}

export async function startSimulator(options: SimulatorOptions): Promise<RunningSimulator> {
  const ledger = new SimulatorLedger(options.ledgerCapacity ?? defaultLedgerCapacity);
  const acs = new SimulatorAcs((prefix) => ledger.newId(prefix));
  const networkTokens = new SimulatorNetworkTokens(ledger);
  const giftCards = new SimulatorGiftCards(
    (prefix) => ledger.newId(prefix),
    (request, body) => refuseDuringOutage(request, body),
  );
  const deliveries: NotificationDelivery[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const settledOperationIds = new Set<string>();
  const merchantsDown = new Set<string>();
  const now = options.now ?? (() => new Date());
  const settleDelayMs = options.settleDelayMs ?? 50;
  const unknownOutcomeDelayMs = options.unknownOutcomeDelayMs ?? 30_000;
  const random = options.random ?? Math.random;
  const raceDelayMs = () => random() * (options.raceWindowMs ?? 20);

  const later = (ms: number, work: () => Promise<void> | void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      void work();
    }, ms);
    timers.add(timer);
  };
  const sleep = (ms: number) => new Promise<void>((resolve) => later(ms, resolve));
  const accountUpdater = new SimulatorAccountUpdater({
    newId: (prefix) => ledger.newId(prefix),
    later,
    refuse: (request, body) => refuseDuringOutage(request, body),
    delayMs: options.accountUpdaterDelayMs ?? 200,
  });

  function notification(
    t: SimulatedTransaction,
    type: WireNotification['type'],
    fields: Partial<WireNotification>,
  ): WireNotification {
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
      recordDelivery({ url, eventId: body.event_id, status: response.status });
    } catch {
      recordDelivery({ url, eventId: body.event_id, status: 'network_error' });
    }
  }

  function recordDelivery(delivery: NotificationDelivery): void {
    deliveries.push(delivery);
    if (deliveries.length > ledger.capacity) deliveries.shift();
  }

  async function authorize(body: WireAuthorizeRequest, baseUrl: string): Promise<WireTransaction> {
    requireAmount(body.amount);
    requireText(body, ['reference']);
    requireCurrency(body.currency);
    const instrument = body.payment_instrument;
    if (!['card', 'network_token', 'redirect'].includes(instrument?.type))
      throw new HttpFailure(400, 'invalid_request', 'payment_instrument is required');
    if (instrument.type === 'redirect') {
      requireText(instrument, ['method', 'return_url'], 'payment_instrument.');
      if (!URL.canParse(instrument.return_url))
        throw new HttpFailure(400, 'invalid_request', 'payment_instrument.return_url must be an absolute URL');
    }
    const scenario = scenarioForAmount(body.amount);
    if (scenario === 'serviceUnavailable') throw new HttpFailure(503, 'service_unavailable', 'simulated outage');
    // Still on its way: until it arrives, the provider has no record of it (a sync answers 404).
    if (scenario === 'lateAuthorization') await sleep(unknownOutcomeDelayMs);

    ledger.count(body.reference, 'authorizations');
    const id = ledger.newId('sim_txn');
    // A token our token service issued answers as its card would, unless the token itself stands in the way.
    const tokenUse =
      instrument.type === 'network_token' ? networkTokens.useForAuthorization(instrument, body.reference) : undefined;
    const decision = tokenUse?.refusal ?? decisionForAmount(body.amount);
    const reachedIssuer = decision.result !== 'failed' && instrument.type !== 'redirect';
    const buyerApproval: BuyerApproval | undefined =
      instrument.type === 'redirect'
        ? {
            url: `${baseUrl}/v1/approvals/${id}`,
            returnUrl: instrument.return_url,
            method: instrument.method,
            capture: body.capture,
          }
        : undefined;
    const t: SimulatedTransaction = {
      id,
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
      cvvResponseCode: reachedIssuer
        ? cvvForSecurityCode(instrument.type === 'card' ? instrument.security_code : undefined)
        : null,
      ...(buyerApproval && { buyerApproval }),
      captures: [],
      refunds: [],
      sequence: 0,
    };
    ledger.add(t);

    // A redirect payment waits for the buyer; the amount decides only once they approve (`decideApproval`).
    if (buyerApproval) {
      t.status = 'buyer_approval_required';
      return toWireTransaction(t);
    }
    if (decision.result !== 'approved') {
      reject(t, decision.result, decision.errorCode);
      return toWireTransaction(t);
    }
    switch (scenario) {
      case 'pendingThenAuthorized':
      case 'pendingThenDeclined':
        setCodes(t, pendingCodes);
        later(settleDelayMs, async () => {
          if (settlePending(t, scenario === 'pendingThenAuthorized', body.capture))
            await deliver(t, authorizationNotification(t));
        });
        return toWireTransaction(t);
      case 'outOfOrderNotifications': {
        setCodes(t, pendingCodes);
        const first = authorizationNotification(t);
        later(settleDelayMs, async () => {
          if (!settlePending(t, true, body.capture)) return;
          await deliver(t, authorizationNotification(t));
          await deliver(t, first);
        });
        return toWireTransaction(t);
      }
      case 'failureNotifiedDuringRequest':
      case 'failureNotifiedThenApproved': {
        reject(t, 'failed', 'service_error');
        t.avsResponseCode = null;
        t.cvvResponseCode = null;
        const event = authorizationNotification(t);
        if (scenario === 'failureNotifiedDuringRequest') {
          await deliver(t, event);
          return toWireTransaction(t);
        }
        // The ledger keeps `failed`, as its notification says; the answer claims an approval the ledger does not hold.
        later(raceDelayMs(), () => deliver(t, event));
        await sleep(raceDelayMs());
        const claimed: SimulatedTransaction = { ...t };
        approve(claimed, body.capture);
        return toWireTransaction(claimed);
      }
      default:
        break;
    }
    approve(t, body.capture);
    if (scenario === 'lateAuthorization') later(0, () => deliver(t, authorizationNotification(t)));
    if (scenario === 'duplicateNotification') {
      const event = authorizationNotification(t);
      later(settleDelayMs, async () => {
        await deliver(t, event);
        await deliver(t, event);
      });
    }
    const storedCard =
      instrument.type === 'card'
        ? { number: instrument.number, expirationDate: instrument.expiration_date }
        : tokenUse?.card;
    if (body.store_payment_method === true && storedCard !== undefined && scenario !== 'approvedWithoutVaultToken') {
      const event = notification(t, 'vault_token', {
        token: ledger.newId('sim_tok'),
        card_last4: storedCard.number.slice(-4),
        expiration_date: storedCard.expirationDate,
      });
      later(settleDelayMs, () => deliver(t, event));
    }
    const delay = scenario === 'timeoutUnknownOutcome' ? unknownOutcomeDelayMs : slowResponseDelayMs(body.amount);
    if (delay > 0) await sleep(delay);
    return toWireTransaction(t);
  }

  /** Returns false when the transaction is no longer pending (cancelled meanwhile): nothing to settle or notify. */
  function settlePending(t: SimulatedTransaction, authorized: boolean, capture: boolean): boolean {
    if (t.status !== 'pending') return false;
    if (authorized) approve(t, capture);
    else reject(t, 'declined', 'issuer_decline');
    return true;
  }

  /**
   * The buyer's decision on the approval page: approve → the amount table decides; cancel → declined
   * (`cancelled_buyer_approval`). The browser goes back at once; the status follows by notification only.
   */
  function decideApproval(t: SimulatedTransaction, approval: BuyerApproval, body: WireApprovalDecision): RouteAnswer {
    if (body.decision !== 'approve' && body.decision !== 'cancel')
      throw new HttpFailure(400, 'invalid_request', 'decision must be approve or cancel');
    const decision =
      body.decision === 'approve'
        ? decisionForAmount(t.amount)
        : ({ result: 'declined', errorCode: 'cancelled_buyer_approval' } as const);
    if (decision.result === 'approved') approve(t, approval.capture);
    else reject(t, decision.result, decision.errorCode);
    const event = authorizationNotification(t);
    later(settleDelayMs, () => deliver(t, event));
    return { status: 303, location: withQueryParameter(approval.returnUrl, 'provider_transaction_id', t.id) };
  }

  async function produceSettlementFile(): Promise<SettlementFile> {
    const settledAt = now().toISOString();
    const lines = [
      'record_type,provider_transaction_id,reference,provider_operation_id,operation_reference,amount,currency,status,settled_at',
    ];
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
          notifications.push([
            t,
            notification(t, 'refund', {
              status: 'succeeded',
              amount: r.amount,
              currency: t.currency,
              refund_id: r.id,
              refund_reference: r.refund_reference,
              error_code: null,
            }),
          ]);
        }
        lines.push(
          ['refund', t.id, t.reference, r.id, r.refund_reference, r.amount, t.currency, 'settled', settledAt].join(','),
        );
      });
    }
    for (const [t, event] of notifications) await deliver(t, event);
    return {
      fileName: `mock-card-settlement-${settledAt.slice(0, 10)}-${ledger.newId('file')}.csv`,
      content: `${lines.join('\n')}\n`,
    };
  }

  function find(id: string): SimulatedTransaction {
    const t = ledger.get(id);
    if (t === undefined) throw new HttpFailure(404, 'not_found', `no transaction ${id}`);
    return t;
  }

  function refuseDuringOutage(request: IncomingMessage, body: unknown): void {
    const merchantId = request.headers[merchantIdHeader] ?? (body as { merchant_id?: unknown }).merchant_id;
    if (typeof merchantId === 'string' && merchantsDown.has(merchantId))
      throw new HttpFailure(503, 'service_unavailable', `simulated outage for merchant ${merchantId}`);
  }

  async function route(request: IncomingMessage): Promise<RouteAnswer> {
    const url = new URL(request.url ?? '/', 'http://simulator');
    const method = request.method ?? 'GET';
    const segments = url.pathname.split('/').filter((s) => s !== '');
    if (segments[0] !== 'v1') throw new HttpFailure(404, 'not_found', 'unknown path');
    const [, collection, id, action] = segments;
    if (collection === '3ds') return acs.route(request, segments.slice(2));
    if (collection === 'gift-cards') return giftCards.route(request, segments.slice(2));
    if (collection === 'network-tokens') return networkTokens.route(request, segments.slice(2));
    if (collection === 'account-updater') return accountUpdater.route(request, segments.slice(2));
    if (collection === 'authorizations' && method === 'POST') {
      const body = await readBody(request);
      refuseDuringOutage(request, body);
      if (id === undefined)
        return { status: 201, body: await authorize(body as WireAuthorizeRequest, baseUrlOf(request)) };
      const t = find(id);
      if (action === 'captures') return { status: 200, body: capture(ledger, t, body as WireCaptureRequest) };
      if (action === 'void') return { status: 200, body: voidOrCancel(ledger, t, 'voids') };
      if (action === 'cancel') return { status: 200, body: voidOrCancel(ledger, t, 'cancels') };
      if (action === 'refunds') return { status: 200, body: refund(ledger, t, body as WireRefundRequest) };
      if (action === 'increments') return { status: 200, body: increment(ledger, t, body as WireIncrementRequest) };
    }
    if (collection === 'authorizations' && method === 'GET' && action === undefined) {
      if (id !== undefined) {
        const t = find(id);
        ledger.count(t.reference, 'syncs');
        return { status: 200, body: toWireTransaction(t) };
      }
      const reference = url.searchParams.get('reference') ?? '';
      ledger.count(reference, 'syncs');
      const t = ledger.findByReference(reference);
      if (t === undefined) throw new HttpFailure(404, 'not_found', `no transaction with reference ${reference}`);
      return { status: 200, body: toWireTransaction(t) };
    }
    if (collection === 'approvals' && id !== undefined && (method === 'GET' || method === 'POST')) {
      const t = find(id);
      if (t.buyerApproval === undefined) throw new HttpFailure(404, 'not_found', `${id} is not a redirect payment`);
      if (t.status !== 'buyer_approval_required')
        throw new HttpFailure(409, 'approval_completed', `${id} is already ${t.status}`);
      if (method === 'GET')
        return html(approvalPage({ id, amount: t.amount, currency: t.currency, method: t.buyerApproval.method }));
      return decideApproval(t, t.buyerApproval, (await readBody(request)) as WireApprovalDecision);
    }
    if (collection === 'outages' && id !== undefined && (method === 'PUT' || method === 'DELETE')) {
      setOutage(id, method === 'PUT');
      return { status: 204 };
    }
    if (collection === 'ledger' && method === 'GET')
      return { status: 200, body: ledger.counts(url.searchParams.get('reference') ?? '') };
    if (collection === 'settlement-files' && method === 'POST') {
      const file = await produceSettlementFile();
      return { status: 201, body: file.content, contentType: 'text/csv' };
    }
    throw new HttpFailure(404, 'not_found', `no route ${method} ${url.pathname}`);
  }

  function setOutage(merchantId: string, down: boolean): void {
    if (down) merchantsDown.add(merchantId);
    else merchantsDown.delete(merchantId);
  }

  const server: Server = createServer((request, response) => {
    route(request)
      .then((answer) => send(response, answer))
      .catch((error: unknown) => sendFailure(request, response, error));
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
    setOutage,
    giftCard: (number) => giftCards.ledgerCard(number),
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
