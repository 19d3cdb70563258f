/**
 * A local Stripe for the tests (point a connection's `api_base_url` at `url`). It answers with Stripe's own example
 * objects (`fixtures3.json`: payment_intent, payment_method, charge, refund, event) adjusted per request, and checks
 * every request — form body or query — against the parameters the official `stripe` package's declarations allow
 * (stripe-parameters.ts); what fails is kept in `violations` (a spec asserts it empty) and answered 400 as Stripe
 * would. Events follow as Stripe sends them, signed with `Stripe-Signature` by the library, to the URL registered
 * for the secret key. Requests stay in this process's memory: nothing with a card number is written anywhere.
 *
 * Scenarios by amount (minor units): 200051 declined (card_declined, insufficient_funds), 200099 declined
 * (try_again_later: a soft decline), 500006 authorized but answered only after `slowAnswerMs`; any other amount is
 * authorized. A secret key in `unavailableKeys` answers 500 to everything. An intent shows in search results only
 * `searchLagMs` after it was made, as Stripe's search lags behind its writes ("under normal operating conditions, data
 * is searchable in under 1 minute"); retrieve and list see it at once.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { readProviderDocument } from '../../testing/provider-documents';
import { declaredParameters, parameterErrors } from './stripe-parameters';

export const stripeScenarioAmounts = {
  insufficientFunds: 200_051,
  tryAgainLater: 200_099,
  slowAnswer: 500_006,
} as const;

type StripeObject = Record<string, unknown> & { id: string };

export interface StripeEventDelivery {
  readonly type: string;
  readonly body: string;
  readonly signature: string;
  status?: number;
}

export interface RunningStripeFake {
  readonly url: string;
  readonly requests: {
    readonly method: string;
    readonly path: string;
    readonly idempotencyKey?: string;
    readonly replayed: boolean;
  }[];
  readonly violations: string[];
  readonly deliveries: StripeEventDelivery[];
  readonly intents: ReadonlyMap<string, StripeObject>;
  /** Where each secret key's events go (the connection's `webhook_url`) and the endpoint's signing secret. */
  readonly endpoints: Map<string, { readonly url: string; readonly secret: string }>;
  readonly unavailableKeys: Set<string>;
  /** POSTs an event body with a signature header (a replay, or a forgery) to a secret key's endpoint. */
  post(secretKey: string, body: string, signature: string): Promise<{ status: number; text: string }>;
  waitForDeliveries(type: string, count: number, timeoutMs?: number): Promise<StripeEventDelivery[]>;
  stop(): Promise<void>;
}

/** Operation → the params interface the `stripe` package declares for it. */
const operations: readonly {
  readonly method: string;
  readonly pattern: RegExp;
  readonly params: string;
  readonly name: string;
}[] = [
  {
    method: 'POST',
    pattern: /^\/v1\/payment_methods$/,
    params: 'PaymentMethodCreateParams',
    name: 'createPaymentMethod',
  },
  { method: 'POST', pattern: /^\/v1\/payment_intents$/, params: 'PaymentIntentCreateParams', name: 'createIntent' },
  {
    method: 'GET',
    pattern: /^\/v1\/payment_intents\/search$/,
    params: 'PaymentIntentSearchParams',
    name: 'searchIntents',
  },
  {
    method: 'GET',
    pattern: /^\/v1\/payment_intents\/([^/]+)$/,
    params: 'PaymentIntentRetrieveParams',
    name: 'retrieveIntent',
  },
  {
    method: 'POST',
    pattern: /^\/v1\/payment_intents\/([^/]+)\/capture$/,
    params: 'PaymentIntentCaptureParams',
    name: 'capture',
  },
  {
    method: 'POST',
    pattern: /^\/v1\/payment_intents\/([^/]+)\/cancel$/,
    params: 'PaymentIntentCancelParams',
    name: 'cancel',
  },
  {
    method: 'POST',
    pattern: /^\/v1\/payment_intents\/([^/]+)\/increment_authorization$/,
    params: 'PaymentIntentIncrementAuthorizationParams',
    name: 'increment',
  },
  { method: 'POST', pattern: /^\/v1\/refunds$/, params: 'RefundCreateParams', name: 'createRefund' },
  { method: 'GET', pattern: /^\/v1\/refunds$/, params: 'RefundListParams', name: 'listRefunds' },
];

export interface StripeFakeOptions {
  /** How long the 500006 answer waits. Default 3 s. */
  readonly slowAnswerMs?: number;
  /** Wait before an event is sent. Default 30 ms. */
  readonly eventDelayMs?: number;
  /** How long a new intent stays out of search results. Default 0. */
  readonly searchLagMs?: number;
}

export async function startStripeFake(options: StripeFakeOptions = {}): Promise<RunningStripeFake> {
  const fixtures = readProviderDocument<{ resources: Record<string, StripeObject> }>('stripe/fixtures3.json').resources;
  const example = (name: string): StripeObject => structuredClone(fixtures[name] as StripeObject);
  for (const operation of operations) declaredParameters(operation.params); // read the declarations once, up front
  const signer = new Stripe('sk_test_signer');
  const requests: RunningStripeFake['requests'] = [];
  const violations: string[] = [];
  const deliveries: StripeEventDelivery[] = [];
  const intents = new Map<string, StripeObject & { owner: string; searchableAt: number }>();
  const methods = new Map<string, StripeObject>();
  const refunds = new Map<string, StripeObject>();
  const idempotent = new Map<string, { body: string; status: number; answer: unknown }>();
  const endpoints = new Map<string, { url: string; secret: string }>();
  const unavailableKeys = new Set<string>();
  const timers = new Set<NodeJS.Timeout>();
  const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => (timers.delete(timer), run()), ms);
    timers.add(timer);
  };
  const now = () => Math.floor(Date.now() / 1000);

  const post = async (secretKey: string, body: string, signature: string) => {
    const endpoint = endpoints.get(secretKey);
    if (!endpoint) return { status: 0, text: 'no endpoint' };
    const response = await fetch(endpoint.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': signature },
      body,
    });
    return { status: response.status, text: await response.text() };
  };

  /** One event of Stripe's example shape about `object`, signed for the key's endpoint, sent after a moment. */
  const emit = (secretKey: string, type: string, object: StripeObject, delayMs?: number) => {
    const endpoint = endpoints.get(secretKey);
    if (!endpoint) return;
    const event = {
      ...example('event'),
      id: id('evt'),
      type,
      created: now(),
      data: { object: structuredClone(object) },
    };
    const body = JSON.stringify(event);
    const signature = signer.webhooks.generateTestHeaderString({ payload: body, secret: endpoint.secret });
    const delivery: StripeEventDelivery = { type, body, signature };
    later(delayMs ?? options.eventDelayMs ?? 30, () => {
      void post(secretKey, body, signature)
        .then((answer) => (delivery.status = answer.status))
        .catch(() => (delivery.status = 0))
        .finally(() => deliveries.push(delivery));
    });
  };

  const chargeOf = (intent: StripeObject): StripeObject => {
    const charge = example('charge');
    const details = (charge.payment_method_details ?? {}) as Record<string, unknown>;
    return {
      ...charge,
      id: String((intent as { latest_charge_id?: string }).latest_charge_id),
      amount: intent.amount,
      amount_captured: intent.amount_received,
      captured: (intent.amount_received as number) > 0,
      payment_intent: intent.id,
      payment_method_details: {
        ...details,
        type: 'card',
        card: {
          ...((details.card as object) ?? {}),
          checks: { address_line1_check: null, address_postal_code_check: 'pass', cvc_check: 'pass' },
        },
      },
    };
  };
  /** The intent as Stripe answers it: `latest_charge` expanded when asked. */
  const view = (intent: StripeObject, expand: boolean): StripeObject => {
    type Kept = StripeObject & { owner?: string; searchableAt?: number; latest_charge_id?: string };
    const { owner: _owner, searchableAt: _searchableAt, latest_charge_id: chargeId, ...shown } = intent as Kept;
    return { ...shown, latest_charge: chargeId ? (expand ? chargeOf(intent) : chargeId) : null };
  };
  const stripeError = (status: number, type: string, message: string, extra: Record<string, unknown> = {}) => ({
    status,
    answer: { error: { type, message, ...extra } },
  });

  const operate = (
    name: string,
    key: string,
    pathId: string | undefined,
    form: URLSearchParams,
  ): { status: number; answer: unknown; delayMs?: number } => {
    if (unavailableKeys.has(key)) return stripeError(500, 'api_error', 'An unknown error occurred');
    const expand = [...form.entries()].some(([k, v]) => k.startsWith('expand') && v.includes('latest_charge'));
    const owned = pathId ? intents.get(pathId) : undefined;
    if (pathId && (!owned || owned.owner !== key))
      return stripeError(404, 'invalid_request_error', `No such payment_intent: '${pathId}'`, {
        code: 'resource_missing',
      });
    switch (name) {
      case 'createPaymentMethod': {
        const method = { ...example('payment_method'), id: id('pm'), type: 'card' };
        methods.set(method.id, method);
        return { status: 200, answer: method };
      }
      case 'createIntent': {
        const amount = Number(form.get('amount'));
        const manual = form.get('capture_method') === 'manual';
        const intent = {
          ...example('payment_intent'),
          id: id('pi'),
          owner: key,
          searchableAt: Date.now() + (options.searchLagMs ?? 0),
          amount,
          currency: form.get('currency'),
          capture_method: manual ? 'manual' : 'automatic',
          payment_method: form.get('payment_method'),
          metadata: Object.fromEntries(
            [...form.entries()].filter(([k]) => k.startsWith('metadata[')).map(([k, v]) => [k.slice(9, -1), v]),
          ),
          created: now(),
          canceled_at: null,
          cancellation_reason: null,
          last_payment_error: null,
          next_action: null,
          latest_charge_id: id('ch'),
          amount_capturable: 0,
          amount_received: 0,
        } as StripeObject & { owner: string; searchableAt: number };
        intents.set(intent.id, intent);
        const decline =
          amount === stripeScenarioAmounts.insufficientFunds
            ? 'insufficient_funds'
            : amount === stripeScenarioAmounts.tryAgainLater
              ? 'try_again_later'
              : null;
        if (decline) {
          const error = {
            type: 'card_error',
            code: 'card_declined',
            decline_code: decline,
            message: 'Your card was declined.',
            charge: intent.latest_charge_id,
          };
          Object.assign(intent, { status: 'requires_payment_method', last_payment_error: error });
          emit(key, 'payment_intent.payment_failed', view(intent, false));
          return stripeError(402, 'card_error', error.message, {
            code: error.code,
            decline_code: decline,
            charge: intent.latest_charge_id,
            payment_intent: view(intent, expand),
          });
        }
        Object.assign(
          intent,
          manual
            ? { status: 'requires_capture', amount_capturable: amount }
            : { status: 'succeeded', amount_received: amount },
        );
        // A slow answer comes with a slow event: the connector has given up on the call by then.
        const slow = amount === stripeScenarioAmounts.slowAnswer ? (options.slowAnswerMs ?? 3_000) : undefined;
        emit(
          key,
          manual ? 'payment_intent.amount_capturable_updated' : 'payment_intent.succeeded',
          view(intent, true),
          slow === undefined ? undefined : slow * 4,
        );
        return { status: 200, answer: view(intent, expand), ...(slow === undefined ? {} : { delayMs: slow }) };
      }
      case 'retrieveIntent':
        return { status: 200, answer: view(owned as StripeObject, expand) };
      case 'searchIntents': {
        const wanted = /metadata\['([^']+)'\]:'([^']*)'/.exec(form.get('query') ?? '');
        const matches = (i: StripeObject) => (i.metadata as Record<string, string>)[wanted?.[1] ?? ''] === wanted?.[2];
        const searchable = (i: { owner: string; searchableAt: number }) =>
          i.owner === key && i.searchableAt <= Date.now();
        const found = wanted ? [...intents.values()].filter((i) => searchable(i) && matches(i)) : [];
        return {
          status: 200,
          answer: {
            object: 'search_result',
            data: found.map((i) => view(i, true)),
            has_more: false,
            next_page: null,
            url: '/v1/payment_intents/search',
          },
        };
      }
      case 'capture': {
        const intent = owned as StripeObject;
        const amount = Number(form.get('amount_to_capture') ?? intent.amount_capturable);
        if (intent.status !== 'requires_capture' || amount > (intent.amount_capturable as number)) {
          return stripeError(400, 'invalid_request_error', 'This PaymentIntent could not be captured', {
            code: 'payment_intent_unexpected_state',
          });
        }
        const final = form.get('final_capture') !== 'false';
        const received = (intent.amount_received as number) + amount;
        Object.assign(intent, {
          amount_received: received,
          amount_capturable: final ? 0 : (intent.amount_capturable as number) - amount,
          status: final ? 'succeeded' : 'requires_capture',
        });
        return { status: 200, answer: view(intent, expand) };
      }
      case 'cancel': {
        const intent = owned as StripeObject;
        if (intent.status === 'succeeded' || intent.status === 'canceled')
          return stripeError(
            400,
            'invalid_request_error',
            `You cannot cancel this PaymentIntent because it has a status of ${String(intent.status)}.`,
            { code: 'payment_intent_unexpected_state' },
          );
        Object.assign(intent, {
          status: 'canceled',
          canceled_at: now(),
          cancellation_reason: 'requested_by_customer',
          amount_capturable: 0,
        });
        emit(key, 'payment_intent.canceled', view(intent, false));
        return { status: 200, answer: view(intent, expand) };
      }
      case 'increment': {
        const intent = owned as StripeObject;
        const amount = Number(form.get('amount'));
        if (intent.status !== 'requires_capture' || amount <= (intent.amount as number))
          return stripeError(400, 'invalid_request_error', 'The amount must be greater than the current amount', {
            code: 'parameter_invalid_integer',
          });
        Object.assign(intent, { amount, amount_capturable: amount - (intent.amount_received as number) });
        return { status: 200, answer: view(intent, expand) };
      }
      case 'createRefund': {
        const intent = intents.get(form.get('payment_intent') ?? '');
        if (!intent || intent.owner !== key)
          return stripeError(404, 'invalid_request_error', 'No such payment_intent', { code: 'resource_missing' });
        const amount = Number(form.get('amount') ?? intent.amount_received);
        const refunded = [...refunds.values()]
          .filter((r) => r.payment_intent === intent.id)
          .reduce((total, r) => total + (r.amount as number), 0);
        if (refunded + amount > (intent.amount_received as number))
          return stripeError(
            400,
            'invalid_request_error',
            'Refund amount is greater than unrefunded amount on charge',
            { code: 'amount_too_large' },
          );
        const metadata = Object.fromEntries(
          [...form.entries()].filter(([k]) => k.startsWith('metadata[')).map(([k, v]) => [k.slice(9, -1), v]),
        );
        const refund = {
          ...example('refund'),
          id: id('re'),
          amount,
          currency: intent.currency,
          payment_intent: intent.id,
          charge: (intent as { latest_charge_id?: string }).latest_charge_id,
          status: 'succeeded',
          metadata,
          created: now(),
        };
        refunds.set(refund.id, refund);
        emit(key, 'refund.created', refund);
        return { status: 200, answer: refund };
      }
      case 'listRefunds': {
        const data = [...refunds.values()].filter(
          (r) =>
            r.payment_intent === form.get('payment_intent') && intents.get(String(r.payment_intent))?.owner === key,
        );
        return { status: 200, answer: { object: 'list', data, has_more: false, url: '/v1/refunds' } };
      }
      default:
        return stripeError(404, 'invalid_request_error', `Unrecognized request URL`);
    }
  };

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const method = request.method ?? 'GET';
      const url = new URL(request.url ?? '/', 'http://fake');
      const text = Buffer.concat(chunks).toString('utf8');
      const form = method === 'GET' ? url.searchParams : new URLSearchParams(text);
      const idempotencyKey = header(request, 'idempotency-key');
      const key = (header(request, 'authorization') ?? '').replace(/^Bearer /, '');
      const send = (status: number, answer: unknown) =>
        response
          .writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') })
          .end(JSON.stringify(answer));
      const operation = operations.find((o) => o.method === method && o.pattern.test(url.pathname));
      const stored = idempotencyKey ? idempotent.get(`${key} ${idempotencyKey}`) : undefined;
      requests.push({
        method,
        path: url.pathname,
        ...(idempotencyKey ? { idempotencyKey } : {}),
        replayed: Boolean(stored),
      });
      if (!operation) {
        violations.push(`no operation ${method} ${url.pathname}`);
        return send(404, { error: { type: 'invalid_request_error', message: 'Unrecognized request URL' } });
      }
      if (!key.startsWith('sk_'))
        return send(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
      if (
        method === 'POST' &&
        request.headers['content-type']?.startsWith('application/x-www-form-urlencoded') !== true
      )
        violations.push(`${operation.name}: not form-encoded`);
      const problems = parameterErrors(declaredParameters(operation.params), form);
      if (problems.length > 0) {
        violations.push(...problems.map((problem) => `${operation.name}: ${problem}`));
        return send(400, { error: { type: 'invalid_request_error', message: problems.join('; ') } });
      }
      if (stored) {
        // Stripe compares a retried request's parameters with the first one's.
        if (stored.body !== text)
          return send(400, {
            error: {
              type: 'idempotency_error',
              message:
                'Keys for idempotent requests can only be used with the same parameters they were first used with.',
            },
          });
        return send(stored.status, stored.answer);
      }
      const result = operate(operation.name, key, operation.pattern.exec(url.pathname)?.[1], form);
      if (idempotencyKey && method === 'POST' && result.status < 500)
        idempotent.set(`${key} ${idempotencyKey}`, { body: text, status: result.status, answer: result.answer });
      if (result.delayMs) later(result.delayMs, () => send(result.status, result.answer));
      else send(result.status, result.answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    violations,
    deliveries,
    intents,
    endpoints,
    unavailableKeys,
    post,
    async waitForDeliveries(type, count, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = deliveries.filter((d) => d.type === type);
        if (found.length >= count) return found;
        if (Date.now() > deadline)
          throw new Error(`${found.length} of ${count} ${type} events delivered in ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function header(request: http.IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
