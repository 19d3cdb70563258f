/**
 * `authorize → capture → refund` load for the crash suites: a few concurrent clients, each running payment flows
 * one after another, every write with its own Idempotency-Key, recording every request it sent and every 2xx it
 * got (with the body). A connection error is not an acknowledgement: the client retries the same request with the
 * same key until the service answers (after a restart). A key the killed process left running answers 409
 * `concurrent_request` for as long as it is kept: the outcome is then unknown, and the client does what the API
 * tells it to — it reads the transaction and carries on from what it shows.
 */
import type { ServiceApi } from './http-api';
import { sleep, type Random } from './random';

export type OpKind = 'create' | 'capture' | 'refund';

/**
 * - `acknowledged`: a 2xx came (`ack` holds it);
 * - `refused`: a 4xx other than `concurrent_request` (`refusal` holds it);
 * - `unknown`: no answer could be had: the request may or may not have taken effect (`why`).
 */
export type OpOutcome = 'running' | 'acknowledged' | 'refused' | 'unknown';

export interface OpRecord {
  readonly kind: OpKind;
  readonly key: string;
  readonly path: string;
  readonly body: Readonly<Record<string, unknown>>;
  /** The amount this write asks for (create: authorize, capture, refund). */
  readonly amount: number;
  attempts: number;
  /** Attempts that got no answer (connection refused or reset: the service was down or died). */
  noAnswers: number;
  outcome: OpOutcome;
  ack?: { readonly status: number; readonly body: any };
  refusal?: { readonly status: number; readonly body: any };
  why?: string;
}

export interface FlowRecord {
  /** Also the transaction's `external_identifier`, so that a transaction whose create was never answered is found. */
  readonly id: string;
  readonly client: number;
  readonly amount: number;
  /** From the create's acknowledgement, or from reading after an unknown outcome; null when never learned. */
  transactionId: string | null;
  readonly ops: OpRecord[];
  /** Why the flow stopped where it did. */
  end: string;
}

export interface RequestLogEntry {
  readonly flow: string;
  readonly kind: OpKind;
  readonly key: string;
  readonly attempt: number;
  /** Date.now() when sent. */
  readonly at: number;
  /** Milliseconds until the answer (or the error). */
  readonly ms: number;
  /** The status, or `no-answer`. */
  readonly result: number | 'no-answer';
  readonly error?: string;
}

export interface LoadCounters {
  /** Write requests sent (every attempt). */
  sent: number;
  /** Of them, answered with 2xx. */
  acknowledged: number;
  /** Of them, with no answer (connection refused / reset). */
  noAnswer: number;
  /** 409 `concurrent_request`: a key left running by a killed request. */
  concurrentRequest: number;
  /** Answered 5xx (retried with the same key: a 5xx frees it). */
  serverErrors: number;
  /** Reads made by the clients to learn an unknown outcome. */
  reads: number;
}

export interface LoadOptions {
  readonly api: ServiceApi;
  /** Concurrent clients. */
  readonly clients: number;
  readonly random: Random;
  /** Distinguishes this run's flow ids and keys. */
  readonly runId: string;
  /** How long one write keeps retrying while the service gives no answer. Default 90 s. */
  readonly giveUpAfterMs?: number;
  /**
   * How many 5xx answers one write retries (200 ms apart, the same key) before it counts as refused. Default 20.
   * In the distributed runtime a gateway answers 502 while the service behind it is down: raise it there.
   */
  readonly serverErrorRetries?: number;
  /** How many 409 `concurrent_request` answers mean "left running by a killed request". Default 5 (~1 s). */
  readonly concurrentAnswersBeforeUnknown?: number;
  /** The card every payment uses (a test card; the simulator decides by amount, not by number). */
  readonly card?: { readonly number: string; readonly expiration_date: string; readonly security_code: string };
  /** Amounts stay inside [min, max] minor units: clear of the simulator's scenario amounts (≥ 200001). */
  readonly amountRange?: readonly [number, number];
}

export interface LoadRun {
  readonly flows: readonly FlowRecord[];
  readonly requests: readonly RequestLogEntry[];
  readonly counters: Readonly<LoadCounters>;
  /** Clients finish the write under way (retrying until answered) and start nothing new. */
  stop(): void;
  /** Resolves when every client has stopped. */
  readonly done: Promise<void>;
}

const transactionOpen = new Set([
  'processing',
  'buyer_approval_pending',
  'capture_pending',
  'authorization_void_pending',
]);

export function startLoad(options: LoadOptions): LoadRun {
  const { api, random } = options;
  const giveUpAfterMs = options.giveUpAfterMs ?? 90_000;
  const concurrentLimit = options.concurrentAnswersBeforeUnknown ?? 5;
  const serverErrorRetries = options.serverErrorRetries ?? 20;
  const card = options.card ?? { number: '4111111111111111', expiration_date: '12/30', security_code: '123' };
  const [minAmount, maxAmount] = options.amountRange ?? [100, 99_999];
  const flows: FlowRecord[] = [];
  const requests: RequestLogEntry[] = [];
  const counters: LoadCounters = {
    sent: 0,
    acknowledged: 0,
    noAnswer: 0,
    concurrentRequest: 0,
    serverErrors: 0,
    reads: 0,
  };
  let stopping = false;

  async function write(
    flow: FlowRecord,
    kind: OpKind,
    path: string,
    body: Record<string, unknown>,
    amount: number,
    headers: Record<string, string> = {},
  ): Promise<OpRecord> {
    const op: OpRecord = {
      kind,
      key: `${flow.id}:${kind}:${flow.ops.length}`,
      path,
      body,
      amount,
      attempts: 0,
      noAnswers: 0,
      outcome: 'running',
    };
    flow.ops.push(op);
    const started = Date.now();
    let concurrent = 0;
    let serverErrors = 0;
    for (;;) {
      op.attempts += 1;
      counters.sent += 1;
      const at = Date.now();
      const attempt = await api.send('POST', path, { body, headers: { 'idempotency-key': op.key, ...headers } });
      if (attempt.kind === 'no-answer') {
        op.noAnswers += 1;
        counters.noAnswer += 1;
        requests.push({
          flow: flow.id,
          kind,
          key: op.key,
          attempt: op.attempts,
          at,
          ms: Date.now() - at,
          result: 'no-answer',
          error: attempt.error,
        });
        if (Date.now() - started > giveUpAfterMs) {
          op.outcome = 'unknown';
          op.why = `no answer within ${giveUpAfterMs} ms (${attempt.error})`;
          return op;
        }
        // The service is down or restarting: the same request, the same key, a moment later.
        await sleep(random.int(50, 150));
        continue;
      }
      const { status, body: answerBody } = attempt.answer;
      requests.push({
        flow: flow.id,
        kind,
        key: op.key,
        attempt: op.attempts,
        at,
        ms: Date.now() - at,
        result: status,
      });
      if (status >= 200 && status < 300) {
        counters.acknowledged += 1;
        op.outcome = 'acknowledged';
        op.ack = { status, body: answerBody };
        return op;
      }
      if (status === 409 && answerBody?.code === 'concurrent_request') {
        counters.concurrentRequest += 1;
        concurrent += 1;
        if (concurrent >= concurrentLimit) {
          op.outcome = 'unknown';
          op.why =
            'the Idempotency-Key stayed `running` (409 concurrent_request): the request was under way when the service was killed';
          return op;
        }
        await sleep(200);
        continue;
      }
      if (status >= 500) {
        counters.serverErrors += 1;
        serverErrors += 1;
        if (serverErrors <= serverErrorRetries) {
          await sleep(200);
          continue;
        }
      }
      op.outcome = 'refused';
      op.refusal = { status, body: answerBody };
      return op;
    }
  }

  /** After an unknown outcome: what the transaction shows now. */
  async function look(transactionId: string): Promise<any> {
    counters.reads += 1;
    return api.get(`/transactions/${transactionId}`);
  }

  async function runFlow(client: number, n: number): Promise<void> {
    const amount = random.int(minAmount, maxAmount);
    const flow: FlowRecord = {
      id: `${options.runId}-c${client}-f${n}`,
      client,
      amount,
      transactionId: null,
      ops: [],
      end: '',
    };
    flows.push(flow);

    const create = await write(
      flow,
      'create',
      '/transactions',
      {
        amount,
        currency: 'USD',
        country: 'US',
        intent: 'authorize',
        external_identifier: flow.id,
        payment_method: { method: 'card', ...card },
      },
      amount,
    );
    if (create.outcome !== 'acknowledged') {
      flow.end = `create ${create.outcome}`;
      return;
    }
    flow.transactionId = create.ack?.body?.id ?? null;
    if (create.ack?.body?.status !== 'authorization_succeeded' || !flow.transactionId) {
      flow.end = `authorization ${create.ack?.body?.status}`;
      return;
    }
    const id = flow.transactionId;

    // Capture: in full or in part; after an unknown outcome, whatever the transaction shows decides.
    let captured = 0;
    for (let tries = 0; captured === 0; tries += 1) {
      if (stopping || tries >= 2 || !random.chance(tries === 0 ? 0.9 : 1)) {
        flow.end = captured === 0 && tries > 0 ? 'capture not applied' : 'authorized only';
        return;
      }
      const captureAmount = random.chance(0.5) ? amount : random.int(1, amount);
      const capture = await write(
        flow,
        'capture',
        `/transactions/${id}/capture`,
        { amount: captureAmount },
        captureAmount,
        { prefer: 'resource=transaction-capture' },
      );
      if (capture.outcome === 'acknowledged') {
        if (capture.ack?.body?.status !== 'succeeded') {
          flow.end = `capture ${capture.ack?.body?.status}`;
          return;
        }
        captured = captureAmount;
      } else if (capture.outcome === 'unknown') {
        const now = await look(id);
        if (now.status === 'capture_succeeded') captured = now.captured_amount;
        else if (transactionOpen.has(now.status)) {
          flow.end = `capture outcome unknown; the transaction shows ${now.status}`;
          return;
        }
        // authorization_succeeded: the capture never took effect; try again with a new key.
      } else {
        flow.end = `capture refused ${capture.refusal?.status} ${capture.refusal?.body?.code ?? ''}`;
        return;
      }
    }

    // Up to two refunds of what was captured.
    let refunded = 0;
    for (let i = 0; i < 2; i += 1) {
      const left = captured - refunded;
      if (stopping || left <= 0 || !random.chance(0.8)) break;
      const refundAmount = i === 1 || random.chance(0.3) ? left : random.int(1, left);
      const refund = await write(flow, 'refund', `/transactions/${id}/refunds`, { amount: refundAmount }, refundAmount);
      if (refund.outcome === 'acknowledged') {
        if (refund.ack?.body?.status !== 'succeeded') {
          flow.end = `refund ${refund.ack?.body?.status}`;
          return;
        }
        refunded += refundAmount;
      } else if (refund.outcome === 'unknown') {
        const now = await look(id);
        flow.end = `refund outcome unknown; the transaction shows ${now.status}, refunded ${now.refunded_amount}`;
        return;
      } else {
        flow.end = `refund refused ${refund.refusal?.status} ${refund.refusal?.body?.code ?? ''}`;
        return;
      }
    }
    flow.end = refunded === 0 ? 'captured' : refunded === captured ? 'refunded' : 'partly refunded';
  }

  const clients = Array.from({ length: options.clients }, async (_, client) => {
    for (let n = 0; !stopping; n += 1) await runFlow(client, n);
  });
  const done = Promise.all(clients).then(() => undefined);

  return {
    flows,
    requests,
    counters,
    stop: () => {
      stopping = true;
    },
    done,
  };
}
