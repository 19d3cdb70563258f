/**
 * A local Adyen for the tests: Checkout API v71 on a loopback port (point a connection's `api_base_url` at `url`).
 * Every request is checked against Adyen's own OpenAPI document (operation, API key, body schema) and every answer
 * it gives against the document's response schemas; what fails is kept in `violations` (a spec asserts it empty)
 * and a bad request is answered 422 as Adyen would. Notifications follow each operation as Adyen sends them —
 * validated against the Webhooks-v1 document and signed with the connection's HMAC key — to the URL registered
 * for the merchant account. It never writes a request anywhere: card numbers stay in this process's memory.
 *
 * Scenarios by amount (minor units): 200012 refused (12, Not enough balance), 200038 refused (38, Authentication
 * required: a soft decline), 500006 authorised but answered only after `slowAnswerMs` (the connector times out);
 * any other amount is authorised. A merchant account in `unavailableAccounts` answers 500 to everything.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { hmacValidator, type Types } from '@adyen/api-library';
import { OpenApiValidator } from '../../testing/openapi-validator';
import { readProviderDocument } from '../../testing/provider-documents';

export const adyenScenarioAmounts = {
  insufficientFunds: 200_012,
  authenticationRequired: 200_038,
  slowAnswer: 500_006,
} as const;

export interface AdyenFakeOptions {
  readonly apiKey: string;
  /** Hex, as Adyen shows it. */
  readonly hmacKey: string;
  /** How long the 500006 answer waits. Default 3 s. */
  readonly slowAnswerMs?: number;
  /** Wait before a notification is sent. Default 30 ms. */
  readonly notificationDelayMs?: number;
}

interface FakePayment {
  readonly pspReference: string;
  readonly reference: string;
  readonly merchantAccount: string;
  readonly currency: string;
  authorised: number;
  captured: number;
  refunded: number;
  cancelled: boolean;
}

export interface AdyenNotificationDelivery {
  readonly eventCode: string;
  readonly body: string;
  status?: number;
  answer?: string;
}

export interface RunningAdyenFake {
  /** The base URL a connection's `api_base_url` takes (the connector appends `/v71/...`). */
  readonly url: string;
  /** Every request received: operation, the Idempotency-Key, whether its body was valid. */
  readonly requests: {
    readonly method: string;
    readonly path: string;
    readonly operation?: string;
    readonly idempotencyKey?: string;
    readonly replayed: boolean;
  }[];
  /** Request, answer and webhook bodies that did not validate against Adyen's documents. */
  readonly violations: string[];
  readonly deliveries: AdyenNotificationDelivery[];
  readonly payments: ReadonlyMap<string, FakePayment>;
  /** Where each merchant account's notifications go (the connection's `webhook_url`). */
  readonly webhookUrls: Map<string, string>;
  readonly unavailableAccounts: Set<string>;
  /** false: notifications wait in `held` until `release` (to deliver them out of order). */
  autoNotify: boolean;
  /** How long the answer to a capture, refund, cancel or amount update waits (its notification does not). Default 0. */
  modificationAnswerDelayMs: number;
  readonly held: AdyenNotificationDelivery[];
  release(delivery: AdyenNotificationDelivery): Promise<void>;
  /** Sends held notifications of one merchant account as one request, their items in the order given. */
  releaseTogether(deliveries: readonly AdyenNotificationDelivery[]): Promise<AdyenNotificationDelivery>;
  /** POSTs a body (signed or not) to a merchant account's webhook URL, as a replay or a forgery would. */
  post(merchantAccount: string, body: string): Promise<{ status: number; text: string }>;
  /** Resolves once `count` notifications of `eventCode` were delivered. */
  waitForDeliveries(eventCode: string, count: number, timeoutMs?: number): Promise<AdyenNotificationDelivery[]>;
  stop(): Promise<void>;
}

const checkoutBasePath = '/v71';

export async function startAdyenFake(options: AdyenFakeOptions): Promise<RunningAdyenFake> {
  const checkout = new OpenApiValidator(readProviderDocument('adyen/CheckoutService-v71.json'), 'adyen-checkout-v71');
  const webhooks = new OpenApiValidator(readProviderDocument('adyen/Webhooks-v1.json'), 'adyen-webhooks-v1');
  const requests: RunningAdyenFake['requests'] = [];
  const violations: string[] = [];
  const deliveries: AdyenNotificationDelivery[] = [];
  const held: AdyenNotificationDelivery[] = [];
  const payments = new Map<string, FakePayment>();
  const idempotent = new Map<string, { status: number; body: unknown }>();
  const webhookUrls = new Map<string, string>();
  const unavailableAccounts = new Set<string>();
  const timers = new Set<NodeJS.Timeout>();
  const pspReference = () => randomBytes(8).toString('hex').toUpperCase();
  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => (timers.delete(timer), run()), ms);
    timers.add(timer);
  };

  const post = async (merchantAccount: string, body: string) => {
    const url = webhookUrls.get(merchantAccount);
    if (!url) return { status: 0, text: `no webhook URL for ${merchantAccount}` };
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return { status: response.status, text: await response.text() };
  };

  const deliver = async (merchantAccount: string, delivery: AdyenNotificationDelivery) => {
    const answer = await post(merchantAccount, delivery.body).catch((error: unknown) => ({
      status: 0,
      text: String(error),
    }));
    delivery.status = answer.status;
    delivery.answer = answer.text;
    deliveries.push(delivery);
  };

  /** One signed standard webhook, validated against the Webhooks-v1 document before it leaves. */
  const notify = (
    payment: FakePayment,
    eventCode: string,
    fields: { pspReference: string; merchantReference: string; value: number; success: boolean; reason?: string },
    delayMs?: number,
  ) => {
    const item: Types.notification.NotificationRequestItem = {
      amount: { currency: payment.currency, value: fields.value },
      eventCode: eventCode as Types.notification.NotificationRequestItem.EventCodeEnum,
      eventDate: new Date().toISOString().replace(/\.\d{3}Z$/, '+00:00'),
      merchantAccountCode: payment.merchantAccount,
      merchantReference: fields.merchantReference,
      ...(eventCode === 'AUTHORISATION' ? {} : { originalReference: payment.pspReference }),
      paymentMethod: 'visa',
      pspReference: fields.pspReference,
      reason: fields.reason ?? '',
      success: String(fields.success) as Types.notification.NotificationRequestItem.SuccessEnum,
    };
    const signed = {
      ...item,
      additionalData: { hmacSignature: new hmacValidator().calculateHmac(item, options.hmacKey) },
    };
    const body = { live: 'false', notificationItems: [{ NotificationRequestItem: signed }] };
    for (const problem of webhooks.webhookErrors(`/${eventCode}`, body))
      violations.push(`webhook ${eventCode}: ${problem}`);
    const delivery: AdyenNotificationDelivery = { eventCode, body: JSON.stringify(body) };
    later(delayMs ?? options.notificationDelayMs ?? 30, () => {
      if (running.autoNotify) void deliver(payment.merchantAccount, delivery);
      else held.push(delivery);
    });
  };

  const answer = (
    response: http.ServerResponse,
    method: string,
    template: string | undefined,
    status: number,
    body: unknown,
  ) => {
    if (template)
      for (const problem of checkout.responseErrors(method, template, status, body))
        violations.push(`answer ${method} ${template} ${status}: ${problem}`);
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const error = (status: number, errorCode: string, message: string, errorType: string) => ({
    status,
    errorCode,
    message,
    errorType,
    pspReference: pspReference(),
  });

  /** The operation's answer (status and body) and what follows it; undefined status: answer later (slow). */
  const operate = (
    template: string,
    params: Record<string, string>,
    body: Record<string, unknown>,
  ): { status: number; body: unknown; delayMs?: number } => {
    const merchantAccount = String(body.merchantAccount);
    if (unavailableAccounts.has(merchantAccount))
      return { status: 500, body: error(500, '901', 'Internal error', 'internal') };
    const amount = body.amount as { currency: string; value: number } | undefined;
    if (template === '/payments') {
      const payment: FakePayment = {
        pspReference: pspReference(),
        reference: String(body.reference),
        merchantAccount,
        currency: amount?.currency ?? 'EUR',
        authorised: 0,
        captured: 0,
        refunded: 0,
        cancelled: false,
      };
      const value = amount?.value ?? 0;
      const refusal =
        value === adyenScenarioAmounts.insufficientFunds
          ? ['12', 'Not enough balance']
          : value === adyenScenarioAmounts.authenticationRequired
            ? ['38', 'Authentication required']
            : null;
      const capture = body.captureDelayHours === 0;
      payments.set(payment.pspReference, payment);
      if (refusal) {
        notify(payment, 'AUTHORISATION', {
          pspReference: payment.pspReference,
          merchantReference: payment.reference,
          value,
          success: false,
          reason: refusal[1],
        });
        return {
          status: 200,
          body: {
            resultCode: 'Refused',
            pspReference: payment.pspReference,
            refusalReason: refusal[1],
            refusalReasonCode: refusal[0],
            merchantReference: payment.reference,
            amount,
            additionalData: { cvcResult: '1 Matches', avsResult: '4 AVS not supported for this card type' },
          },
        };
      }
      payment.authorised = value;
      if (capture) payment.captured = value;
      // A slow answer comes with a slow notification: the connector has given up on the call by then.
      const slow = value === adyenScenarioAmounts.slowAnswer;
      notify(
        payment,
        'AUTHORISATION',
        { pspReference: payment.pspReference, merchantReference: payment.reference, value, success: true },
        slow ? (options.slowAnswerMs ?? 3_000) + 100 : undefined,
      );
      const approved = {
        resultCode: 'Authorised',
        pspReference: payment.pspReference,
        merchantReference: payment.reference,
        amount,
        additionalData: {
          cvcResult: '1 Matches',
          avsResult: '7 Both postal code and address match',
          authCode: '012345',
        },
      };
      return { status: 200, body: approved, ...(slow ? { delayMs: options.slowAnswerMs ?? 3_000 } : {}) };
    }
    const payment = payments.get(params.paymentPspReference ?? '');
    if (!payment || payment.merchantAccount !== merchantAccount)
      return {
        status: 422,
        body: error(422, '167', 'Original pspReference required for this operation', 'validation'),
      };
    const modification = {
      merchantAccount,
      paymentPspReference: payment.pspReference,
      pspReference: pspReference(),
      status: 'received',
      ...(body.reference ? { reference: body.reference } : {}),
    };
    // Webhooks-v1: a modification's notification carries the payment's merchantReference ("Your reference to uniquely
    // identify the payment"), the modification's pspReference and the payment's as originalReference.
    const merchantReference = payment.reference;
    const value = amount?.value ?? 0;
    switch (template) {
      case '/payments/{paymentPspReference}/captures': {
        const success = !payment.cancelled && payment.captured + value <= payment.authorised;
        if (success) payment.captured += value;
        notify(payment, 'CAPTURE', {
          pspReference: modification.pspReference,
          merchantReference,
          value,
          success,
          ...(success ? {} : { reason: 'Insufficient balance on payment' }),
        });
        return { status: 201, body: { ...modification, amount } };
      }
      case '/payments/{paymentPspReference}/refunds': {
        const success = payment.refunded + value <= payment.captured;
        if (success) payment.refunded += value;
        notify(payment, 'REFUND', {
          pspReference: modification.pspReference,
          merchantReference,
          value,
          success,
          ...(success ? {} : { reason: 'Insufficient balance on payment' }),
        });
        return { status: 201, body: { ...modification, amount } };
      }
      case '/payments/{paymentPspReference}/cancels': {
        const success = payment.captured === 0 && !payment.cancelled;
        payment.cancelled = payment.cancelled || success;
        notify(payment, 'CANCELLATION', {
          pspReference: modification.pspReference,
          merchantReference,
          value: payment.authorised,
          success,
          ...(success ? {} : { reason: 'Payment already captured' }),
        });
        return { status: 201, body: modification };
      }
      case '/payments/{paymentPspReference}/amountUpdates': {
        const success = !payment.cancelled && value > payment.authorised;
        if (success) payment.authorised = value;
        notify(payment, 'AUTHORISATION_ADJUSTMENT', {
          pspReference: modification.pspReference,
          merchantReference,
          value,
          success,
          ...(success ? {} : { reason: 'Refused' }),
        });
        return { status: 201, body: { ...modification, amount } };
      }
      default:
        return { status: 422, body: error(422, '000', `the fake does not play ${template}`, 'validation') };
    }
  };

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const method = request.method ?? 'GET';
      const url = new URL(request.url ?? '/', 'http://fake');
      const idempotencyKey = header(request, 'idempotency-key');
      const path = url.pathname.startsWith(`${checkoutBasePath}/`)
        ? url.pathname.slice(checkoutBasePath.length)
        : undefined;
      const matched = path === undefined ? undefined : checkout.match(method, path);
      const replay = idempotencyKey ? idempotent.get(`${method} ${url.pathname} ${idempotencyKey}`) : undefined;
      requests.push({
        method,
        path: url.pathname,
        ...(matched ? { operation: matched.template } : {}),
        ...(idempotencyKey ? { idempotencyKey } : {}),
        replayed: Boolean(replay),
      });
      if (!matched) {
        violations.push(`no operation ${method} ${url.pathname} in Checkout v71`);
        return answer(response, method, undefined, 404, error(404, '000', 'Not found', 'validation'));
      }
      if (header(request, 'x-api-key') !== options.apiKey)
        return answer(
          response,
          method,
          matched.template,
          401,
          error(401, '000', 'HTTP Status Response - Unauthorized', 'security'),
        );
      if (replay) return answer(response, method, matched.template, replay.status, replay.body);
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        violations.push(`${method} ${matched.template}: body is not JSON`);
        return answer(
          response,
          method,
          matched.template,
          400,
          error(400, '702', 'Structure of request body is invalid', 'validation'),
        );
      }
      const problems = checkout.requestErrors(method, matched.template, body);
      if (problems.length > 0) {
        violations.push(...problems.map((problem) => `request ${method} ${matched.template}: ${problem}`));
        return answer(response, method, matched.template, 422, error(422, '702', problems.join('; '), 'validation'));
      }
      const result = operate(matched.template, matched.params, body);
      const modification = matched.template !== '/payments' && result.status < 500;
      if (modification && running.modificationAnswerDelayMs > 0) result.delayMs = running.modificationAnswerDelayMs;
      if (idempotencyKey && result.status < 500)
        idempotent.set(`${method} ${url.pathname} ${idempotencyKey}`, { status: result.status, body: result.body });
      if (result.delayMs)
        later(result.delayMs, () => answer(response, method, matched.template, result.status, result.body));
      else answer(response, method, matched.template, result.status, result.body);
    });
  });
  // Compiled once up front, so the first request of a spec is not slowed by schema compilation.
  for (const template of [
    '/payments',
    '/payments/{paymentPspReference}/captures',
    '/payments/{paymentPspReference}/refunds',
    '/payments/{paymentPspReference}/cancels',
    '/payments/{paymentPspReference}/amountUpdates',
  ]) {
    checkout.requestErrors('POST', template, {});
    checkout.responseErrors('POST', template, template === '/payments' ? 200 : 201, {});
  }
  for (const eventCode of ['AUTHORISATION', 'CAPTURE', 'REFUND', 'CANCELLATION', 'AUTHORISATION_ADJUSTMENT'])
    webhooks.webhookErrors(`/${eventCode}`, {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const running: RunningAdyenFake = {
    url: `http://127.0.0.1:${port}`,
    requests,
    violations,
    deliveries,
    payments,
    webhookUrls,
    unavailableAccounts,
    autoNotify: true,
    modificationAnswerDelayMs: 0,
    held,
    async release(delivery) {
      held.splice(held.indexOf(delivery), 1);
      await deliver(itemsOf(delivery)[0]?.NotificationRequestItem.merchantAccountCode ?? '', delivery);
    },
    async releaseTogether(together) {
      for (const delivery of together) held.splice(held.indexOf(delivery), 1);
      const items = together.flatMap(itemsOf);
      // Each item was validated against its event's schema when it was made; the envelope is the same array.
      const body = { live: 'false', notificationItems: items };
      const eventCode = together.map((d) => d.eventCode).join('+');
      const batch: AdyenNotificationDelivery = { eventCode, body: JSON.stringify(body) };
      await deliver(items[0]?.NotificationRequestItem.merchantAccountCode ?? '', batch);
      return batch;
    },
    post,
    async waitForDeliveries(eventCode, count, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = deliveries.filter((d) => d.eventCode === eventCode);
        if (found.length >= count) return found;
        if (Date.now() > deadline)
          throw new Error(`${found.length} of ${count} ${eventCode} notifications delivered in ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return running;
}

type NotificationBody = { notificationItems: { NotificationRequestItem: { merchantAccountCode: string } }[] };
const itemsOf = (delivery: AdyenNotificationDelivery) =>
  (JSON.parse(delivery.body) as NotificationBody).notificationItems;

function header(request: http.IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
