/**
 * Issue 11, item 2: the fault suite. Faults are injected while the service runs, and each test proves that the
 * service stays up (`/healthz` answers, other merchants' payments keep working), answers a 5xx only where the spec's
 * codes say it must (502 `bad_gateway` for a provider that failed or could not be reached, 504 `gateway_timeout`
 * for one that did not answer in time — and only where a request has no business outcome to report: a payment the
 * provider failed is a `201` with status `authorization_failed`, one whose outcome is unknown a `201` with status
 * `processing`), never corrupts state, and recovers without a restart.
 *
 * Provider faults — the embedded runtime, its card simulator behind a switchable proxy (`faults/fault-proxy.ts`):
 * slow answers, a timeout with unknown outcome (500006, the slow band past MOCK_CARD_TIMEOUT_MS), the answer lost
 * after the provider acted, a request reset or left hanging before the provider saw it, a provider 500, the
 * simulator's outage (503), connections refused, a failover past a failing connection, the provider contradicting
 * itself (500011), and a gift card provider failing and timing out. Unknown outcomes are reconciled by the service
 * itself (RECONCILE_AFTER_MS), with nobody calling `/sync`.
 *
 * Infrastructure faults — the distributed runtime (each service its own process) on a Redis and a Kafka broker of
 * this suite's own (`faults/own-infra.ts`; the shared ones are never touched): Redis stopped and started again,
 * Kafka stopped and started again.
 *
 * Afterwards every transaction is compared with the simulator's ledger: decided, at most one authorization, the
 * same captured and refunded amounts, no capture or refund more at the provider than in our record. The figures go
 * to tests/reliability/results/faults.json. CI runs reduced counts; RELIABILITY_FULL=1 the full ones.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describeWithInfra, expectErrorBody, signToken, waitFor } from '@switchyard/testing';
import { WebhookReceiver } from '../../services/standalone/src/webhooks.receiver';
import { startDistributedRuntime, type ApiKey, type DistributedRuntime } from '../distributed.fixture';
import { ApiClient, cardPayment, inconsistencies, providerView, type Answer } from './faults/api-client';
import { startEmbeddedBehindProxy, type EmbeddedBehindProxy } from './faults/embedded-behind-proxy';
import { authorizationsOf, postsOf, type Fault, type ProxiedRequest } from './faults/fault-proxy';
import { OwnKafka, OwnRedis, ownInfraAvailability, redisCommand } from './faults/own-infra';

const full = process.env.RELIABILITY_FULL === '1';
/** Payments per fault (and healthy payments alongside each fault). */
const PER_FAULT = full ? 12 : 3;
const HEALTHY = full ? 6 : 2;
/** Provider calls time out after this; unknown outcomes are reconciled after RECONCILE_AFTER_MS. */
const PROVIDER_TIMEOUT_MS = 2_000;
const RECONCILE_AFTER_MS = 500;
/** How long a reconciled transaction may take to be decided (timeouts, reconciliation rounds, a loaded machine). */
const DECIDED_WITHIN_MS = 20_000;

interface FaultFigure {
  fault: string;
  injected: number;
  requests: number;
  recovered_without_restart: boolean;
}

const figures: FaultFigure[] = [];
const reconciled = { authorization_succeeded: 0, authorization_failed: 0 };
/**
 * 500011: the provider answers "approved" and notifies "failed" (its ledger: failed), in a random order. The record
 * follows whichever came first (issue 5's rule: one terminal outcome, the one answered, never flipped), so it can
 * disagree with the provider's ledger; counted here and left out of the comparison with the provider.
 */
const contradictions = { authorization_succeeded: 0, authorization_failed: 0 };
const consistency = {
  transactions_checked: 0,
  corrupted_states: 0,
  duplicates_at_provider: 0,
  problems: [] as string[],
};
const clients: ApiClient[] = [];
const readiness503: Record<string, number> = {};

/** Runs one fault: counts the requests made meanwhile; `recovered` is set by the body once recovery is proven. */
async function fault(api: ApiClient, name: string, body: (record: FaultFigure) => Promise<void>): Promise<void> {
  const record: FaultFigure = { fault: name, injected: 0, requests: 0, recovered_without_restart: false };
  figures.push(record);
  const before = api.requests;
  try {
    await body(record);
  } finally {
    record.requests = api.requests - before;
  }
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function expectStatus(answer: Answer, status: number): void {
  expect(answer.status, answer.text).toBe(status);
}

afterAll(() => {
  const serverErrors: Record<string, number> = {};
  const byCode: Record<string, number> = {};
  for (const client of clients) {
    for (const [key, count] of Object.entries(client.serverErrors))
      serverErrors[key] = (serverErrors[key] ?? 0) + count;
    for (const [code, count] of Object.entries(client.serverErrorsByCode())) byCode[code] = (byCode[code] ?? 0) + count;
  }
  const results = {
    suite: 'faults',
    mode: full ? 'full' : 'ci',
    generated_at: new Date().toISOString(),
    faults_injected: figures.reduce((sum, f) => sum + f.injected, 0),
    requests: clients.reduce((sum, c) => sum + c.requests, 0),
    server_errors_by_code: byCode,
    server_errors: serverErrors,
    readiness_503_while_degraded: readiness503,
    transactions_checked: consistency.transactions_checked,
    corrupted_states: consistency.corrupted_states,
    duplicates_at_provider: consistency.duplicates_at_provider,
    reconciled_without_sync_call: reconciled,
    provider_contradictions_500011: contradictions,
    faults: figures,
    problems: consistency.problems,
  };
  const dir = path.join(__dirname, 'results');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'faults.json'), `${JSON.stringify(results, null, 2)}\n`);
  const recovered = figures.filter((f) => f.recovered_without_restart).length;
  console.log(
    `faults (${results.mode}): ${figures.length} faults, ${results.faults_injected} injected, ${results.requests} requests, 5xx ${JSON.stringify(byCode)}, ` +
      `${consistency.transactions_checked} transactions checked, corrupted states ${consistency.corrupted_states}, duplicates at provider ${consistency.duplicates_at_provider}, ` +
      `reconciled ${reconciled.authorization_succeeded} succeeded / ${reconciled.authorization_failed} failed, recovered without restart ${recovered}/${figures.length}`,
  );
});

/** Compares every transaction with the simulator; adds to the figures; returns the problems found. */
async function checkAgainstProvider(
  api: ApiClient,
  simulatorUrl: string,
  transactions: readonly { account: string; id: string }[],
): Promise<string[]> {
  const problems: string[] = [];
  for (const { account, id } of transactions) {
    const ours = await api.send('GET', `/transactions/${id}`, { account });
    expectStatus(ours, 200);
    const captures = await api.send('GET', `/transactions/${id}/captures`, { account });
    const refunds = await api.send('GET', `/transactions/${id}/refunds`, { account });
    const provider = await providerView(simulatorUrl, id);
    const found = inconsistencies(ours.body, provider);
    const duplicates =
      Math.max(0, provider.ledger.authorizations - 1) +
      Math.max(0, provider.ledger.captures - (captures.body?.items?.length ?? 0)) +
      Math.max(0, provider.ledger.refunds - (refunds.body?.items?.length ?? 0));
    if (duplicates > 0)
      found.push(`${id}: ${duplicates} provider operation(s) beyond our record (${JSON.stringify(provider.ledger)})`);
    consistency.transactions_checked += 1;
    consistency.duplicates_at_provider += duplicates;
    if (found.length > 0) consistency.corrupted_states += 1;
    problems.push(...found);
  }
  consistency.problems.push(...problems);
  return problems;
}

// ---------------------------------------------------------------------------------------------------------------
// Provider faults: the embedded runtime behind the fault proxy.
// ---------------------------------------------------------------------------------------------------------------

describe('provider faults: the embedded runtime, its card simulator behind a fault proxy', () => {
  let s: EmbeddedBehindProxy;
  let api: ApiClient;
  /** Every transaction made here, for the final comparison with the provider. */
  const made: { account: string; id: string }[] = [];
  let failoverConnections: string[] = [];
  let contradictionConnection = '';
  /** 500011 transactions: left out of the comparison with the provider (see `contradictions`). */
  const contradictory = new Set<string>();
  let giftCardSerial = 0;

  /** An account with `connections` mock-card connections (simulator merchant ids `sim-<account>`, `sim-<account>-1`, …); their ids. */
  async function account(id: string, connections = 1): Promise<string[]> {
    expectStatus(await api.send('POST', '/merchant-accounts', { body: { id, display_name: `Faults ${id}` } }), 201);
    const ids: string[] = [];
    for (let i = 0; i < connections; i += 1) {
      const created = await api.send('POST', '/payment-services', {
        account: id,
        body: {
          display_name: `Card simulator ${i}`,
          payment_service_definition_id: 'mock-card',
          fields: [{ key: 'merchant_id', value: i === 0 ? `sim-${id}` : `sim-${id}-${i}` }],
          accepted_currencies: ['USD'],
          accepted_countries: ['US'],
        },
      });
      expectStatus(created, 201);
      ids.push(created.body.id as string);
    }
    return ids;
  }

  async function authorize(acct: string, amount: number): Promise<Answer> {
    const answer = await api.send('POST', '/transactions', { account: acct, body: cardPayment(amount) });
    expectStatus(answer, 201);
    made.push({ account: acct, id: answer.body.id });
    return answer;
  }

  const get = async (acct: string, id: string) => {
    const answer = await api.send('GET', `/transactions/${id}`, { account: acct });
    expectStatus(answer, 200);
    return answer.body as {
      id: string;
      status: string;
      captured_amount: number;
      refunded_amount: number;
      error_code: string | null;
      payment_service: { id: string };
    };
  };

  /** Polls until the transaction leaves `processing` (nobody calls /sync: the service reconciles it). */
  async function decided(acct: string, id: string): Promise<string> {
    const t = await waitFor(
      `transaction ${id} decided`,
      async () => {
        const current = await get(acct, id);
        return current.status === 'processing' ? undefined : current;
      },
      DECIDED_WITHIN_MS,
    );
    if (t.status === 'authorization_succeeded' || t.status === 'authorization_failed') reconciled[t.status] += 1;
    return t.status;
  }

  /** PER_FAULT payments (with healthy ones alongside), each answered 201 `processing`: its outcome unknown. */
  async function answeredProcessing(acct: string, amount: (i: number) => number): Promise<string[]> {
    const ids: string[] = [];
    await Promise.all([
      ...range(PER_FAULT).map(async (i) => {
        const created = await authorize(acct, amount(i));
        expect(created.body.status, created.text).toBe('processing');
        ids.push(created.body.id);
      }),
      othersKeepWorking(),
    ]);
    return ids;
  }

  /** Each transaction decided by the service itself as `final`, with `authorizations` of it at the provider. */
  async function reconciledAs(
    acct: string,
    ids: readonly string[],
    final: string,
    authorizations: number,
  ): Promise<void> {
    for (const id of ids) {
      expect(await decided(acct, id)).toBe(final);
      const provider = await providerView(s.simulator.url, id);
      expect(provider.ledger.authorizations).toBe(authorizations);
      // The service asked the provider (sync) by itself: nobody called POST /transactions/{id}/sync.
      expect(provider.ledger.syncs).toBeGreaterThanOrEqual(1);
    }
  }

  async function capture(acct: string, id: string): Promise<Answer> {
    const answer = await api.send('POST', `/transactions/${id}/capture`, { account: acct, body: {} });
    expectStatus(answer, 200);
    return answer;
  }

  async function refund(acct: string, id: string, amount: number): Promise<Answer> {
    const answer = await api.send('POST', `/transactions/${id}/refunds`, { account: acct, body: { amount } });
    expectStatus(answer, 201);
    return answer;
  }

  /** A full payment on the healthy account: authorize, capture, refund part; all must succeed. */
  async function healthyPayment(): Promise<void> {
    const created = await authorize('healthy', 4_200);
    expect(created.body.status).toBe('authorization_succeeded');
    expect((await capture('healthy', created.body.id)).body.status).toBe('capture_succeeded');
    expect((await refund('healthy', created.body.id, 1_000)).body.status).toBe('succeeded');
  }

  /** While a fault is on: other merchants' payments still work and the service is alive. */
  async function othersKeepWorking(): Promise<void> {
    await Promise.all(range(HEALTHY).map(() => healthyPayment()));
    expectStatus(await api.send('GET', '/healthz', { anonymous: true }), 200);
  }

  /** After a fault: new payments on the faulted account succeed. */
  async function recovered(acct: string): Promise<void> {
    const after = await authorize(acct, 1_234);
    expect(after.body.status, after.text).toBe('authorization_succeeded');
    expect((await capture(acct, after.body.id)).body.status).toBe('capture_succeeded');
    expectStatus(await api.send('GET', '/healthz', { anonymous: true }), 200);
  }

  const injectedSince = (before: Record<string, number>) =>
    Object.entries(s.proxy.injected).reduce((sum, [kind, count]) => sum + count - (before[kind] ?? 0), 0);

  /** Runs `body` with `fault` on the requests `match` selects; counts what the proxy injected. */
  async function withProxyFault(
    record: FaultFigure,
    match: (request: ProxiedRequest) => boolean,
    injected: Fault | (() => Fault),
    body: () => Promise<void>,
  ): Promise<void> {
    const before = { ...s.proxy.injected };
    const remove = s.proxy.inject(record.fault, (request) =>
      match(request) ? (typeof injected === 'function' ? injected() : injected) : undefined,
    );
    try {
      await body();
    } finally {
      remove();
      record.injected += injectedSince(before);
    }
  }

  beforeAll(async () => {
    s = await startEmbeddedBehindProxy('faults', {
      env: {
        MOCK_CARD_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS),
        RECONCILE_AFTER_MS: String(RECONCILE_AFTER_MS),
        POLL_INTERVAL_MS: '50',
      },
      // 500006 answers after 3 s: past the provider timeout.
      simulator: { unknownOutcomeDelayMs: 3_000 },
    });
    api = s.api;
    clients.push(api);
    await account('healthy');
    for (const name of ['slow', 'timeout', 'lost', 'unseen', 'e500', 'outage', 'refused']) await account(name);
    [contradictionConnection] = (await account('contradiction')) as [string];
    failoverConnections = await account('failover', 2);
    expectStatus(
      await api.send('POST', '/merchant-accounts', { body: { id: 'gc', display_name: 'Faults gift cards' } }),
      201,
    );
    const giftCardService = await api.send('POST', '/payment-services', {
      account: 'gc',
      body: {
        display_name: 'Gift cards',
        payment_service_definition_id: 'mock-gift-card',
        fields: [{ key: 'merchant_id', value: 'sim-gc' }],
        accepted_currencies: ['USD'],
        accepted_countries: ['US'],
      },
    });
    expectStatus(giftCardService, 201);
  });

  afterAll(async () => {
    await s?.stop();
  });

  it('slow answers (a slow network, and the simulator’s slow band) under the timeout: every payment succeeds', {
    timeout: 60_000,
  }, async () => {
    await fault(
      api,
      'provider slow (proxy delay 300 ms + simulator slow band 200 ms, under the timeout)',
      async (record) => {
        await withProxyFault(record, postsOf('sim-slow'), { kind: 'delay', ms: 300 }, async () => {
          await Promise.all([
            ...range(PER_FAULT).map(async () => {
              const created = await authorize('slow', 501_020);
              expect(created.body.status, created.text).toBe('authorization_succeeded');
              expect((await capture('slow', created.body.id)).body.status).toBe('capture_succeeded');
            }),
            othersKeepWorking(),
          ]);
        });
        await recovered('slow');
        record.recovered_without_restart = true;
      },
    );
  });

  it('a timeout with unknown outcome (500006, the slow band past the timeout): 201 processing, then reconciled to authorization_succeeded without /sync', {
    timeout: 60_000,
  }, async () => {
    await fault(
      api,
      'provider timeout, unknown outcome (500006 and slow band 3 s > MOCK_CARD_TIMEOUT_MS)',
      async (record) => {
        const ids = await answeredProcessing('timeout', (i) => (i % 2 === 0 ? 500_006 : 501_300));
        record.injected += ids.length;
        await reconciledAs('timeout', ids, 'authorization_succeeded', 1);
        for (const id of ids) expect((await capture('timeout', id)).body.status).toBe('capture_succeeded');
        await recovered('timeout');
        record.recovered_without_restart = true;
      },
    );
  });

  let unseen = 0;
  const unknownOutcomes = [
    {
      title:
        'the answer lost after the provider authorized (connection reset on the way back): processing, then reconciled to authorization_succeeded',
      fault: 'connection dropped after the provider acted (answer lost)',
      account: 'lost',
      injected: (): Fault => ({ kind: 'lose-answer' }),
      final: 'authorization_succeeded',
      authorizations: 1,
    },
    {
      title:
        'a request reset or left hanging before the provider saw it: processing, then reconciled to authorization_failed',
      fault: 'connection reset / hanging before the provider saw the request',
      account: 'unseen',
      // Alternately: reset at once, or no answer until the provider timeout.
      injected: (): Fault => (unseen++ % 2 === 0 ? { kind: 'reset' } : { kind: 'hang' }),
      final: 'authorization_failed',
      authorizations: 0,
    },
  ];
  for (const c of unknownOutcomes) {
    it(c.title, { timeout: 60_000 }, async () => {
      await fault(api, c.fault, async (record) => {
        let ids: string[] = [];
        await withProxyFault(record, authorizationsOf(`sim-${c.account}`), c.injected, async () => {
          ids = await answeredProcessing(c.account, () => 2_500);
        });
        await reconciledAs(c.account, ids, c.final, c.authorizations);
        await recovered(c.account);
        record.recovered_without_restart = true;
      });
    });
  }

  it('the provider answering 500: authorizations fail (201 authorization_failed), captures and refunds fail and can be retried afterwards', {
    timeout: 60_000,
  }, async () => {
    await fault(api, 'provider answers 500', async (record) => {
      const authorized = await Promise.all(range(PER_FAULT).map(() => authorize('e500', 3_000)));
      for (const a of authorized) expect(a.body.status).toBe('authorization_succeeded');
      const captured = authorized[0]!.body.id as string;
      expect((await capture('e500', captured)).body.status).toBe('capture_succeeded');
      await withProxyFault(record, postsOf('sim-e500'), { kind: 'status', status: 500 }, async () => {
        await Promise.all([
          ...range(PER_FAULT).map(async () => {
            const created = await authorize('e500', 3_100);
            expect(created.body.status, created.text).toBe('authorization_failed');
            expect(created.body.error_code).toBe('service_unavailable');
          }),
          ...authorized.slice(1).map(async (a) => {
            const failed = await capture('e500', a.body.id);
            expect(failed.body.status, failed.text).toBe('authorization_succeeded');
            expect(failed.body.captured_amount).toBe(0);
          }),
          (async () => expect((await refund('e500', captured, 500)).body.status).toBe('failed'))(),
          othersKeepWorking(),
        ]);
      });
      // Retried after the fault: the same operations succeed, once.
      for (const a of authorized.slice(1))
        expect((await capture('e500', a.body.id)).body.status).toBe('capture_succeeded');
      expect((await refund('e500', captured, 500)).body.status).toBe('succeeded');
      expect((await get('e500', captured)).refunded_amount).toBe(500);
      await recovered('e500');
      record.recovered_without_restart = true;
    });
  });

  it('the provider’s outage (503 for the merchant): payments fail cleanly while other merchants are served, and succeed once it is back', {
    timeout: 60_000,
  }, async () => {
    await fault(api, 'provider outage (simulator 503 for one merchant id)', async (record) => {
      const before = await authorize('outage', 3_300);
      expect(before.body.status).toBe('authorization_succeeded');
      expect((await fetch(`${s.simulator.url}/v1/outages/sim-outage`, { method: 'PUT' })).status).toBe(204);
      try {
        await Promise.all([
          ...range(PER_FAULT).map(async () => {
            const created = await authorize('outage', 3_400);
            expect(created.body.status, created.text).toBe('authorization_failed');
            record.injected += 1;
          }),
          (async () => {
            const failed = await capture('outage', before.body.id);
            expect(failed.body.captured_amount).toBe(0);
            record.injected += 1;
          })(),
          othersKeepWorking(),
        ]);
      } finally {
        await fetch(`${s.simulator.url}/v1/outages/sim-outage`, { method: 'DELETE' });
      }
      expect((await capture('outage', before.body.id)).body.status).toBe('capture_succeeded');
      await recovered('outage');
      record.recovered_without_restart = true;
    });
  });

  it('a failing connection is failed over: the next connection of the route authorizes, the provider charged once', {
    timeout: 60_000,
  }, async () => {
    await fault(api, 'provider 500 on the first connection of a route (failover)', async (record) => {
      await withProxyFault(record, postsOf('sim-failover'), { kind: 'status', status: 500 }, async () => {
        await Promise.all(
          range(PER_FAULT).map(async () => {
            const created = await authorize('failover', 3_500);
            expect(created.body.status, created.text).toBe('authorization_succeeded');
            expect(created.body.payment_service?.id).toBe(failoverConnections[1]);
            expect((await providerView(s.simulator.url, created.body.id)).ledger.authorizations).toBe(1);
          }),
        );
      });
      await recovered('failover');
      record.recovered_without_restart = true;
    });
  });

  it('connections refused (the provider unreachable): payments fail at once, reads and health still answer, and it all works once the port is back', {
    timeout: 60_000,
  }, async () => {
    await fault(api, 'provider unreachable (connection refused)', async (record) => {
      const existing = await authorize('refused', 3_600);
      await s.proxy.down();
      try {
        for (const _ of range(PER_FAULT)) {
          const created = await authorize('refused', 3_700);
          expect(created.body.status, created.text).toBe('authorization_failed');
          expect(created.body.error_code).toBe('service_unavailable');
          record.injected += 1;
        }
        expect((await get('refused', existing.body.id)).status).toBe('authorization_succeeded');
        expectStatus(await api.send('GET', '/transactions?limit=5', { account: 'healthy' }), 200);
        expectStatus(await api.send('GET', '/healthz', { anonymous: true }), 200);
        expectStatus(await api.send('GET', '/readyz', { anonymous: true }), 200);
      } finally {
        await s.proxy.up();
      }
      await recovered('refused');
      await healthyPayment();
      record.recovered_without_restart = true;
    });
  });

  it('the provider contradicting itself (500011: a failure notification and an approval): one terminal outcome, the one answered, never flipped', {
    timeout: 60_000,
  }, async () => {
    await fault(api, 'provider contradicts itself (500011)', async (record) => {
      const answered: Answer[] = [];
      await Promise.all([
        ...range(PER_FAULT).map(async () => {
          const created = await authorize('contradiction', 500_011);
          record.injected += 1;
          expect(['authorization_failed', 'authorization_succeeded']).toContain(created.body.status);
          answered.push(created);
        }),
        othersKeepWorking(),
      ]);
      // Every failure notification delivered (each waits up to 20 ms); the record keeps what the response said.
      const notified = () => s.simulator.deliveries.filter((d) => d.url.includes(contradictionConnection)).length;
      await waitFor(
        'the 500011 notifications delivered',
        async () => (notified() >= PER_FAULT ? true : undefined),
        10_000,
      );
      for (const created of answered) {
        const final = await get('contradiction', created.body.id);
        expect(final.status).toBe(created.body.status);
        contradictions[final.status as keyof typeof contradictions] += 1;
        contradictory.add(created.body.id);
      }
      await recovered('contradiction');
      record.recovered_without_restart = true;
    });
  });

  it('the gift card provider failing (500, refused) answers 502 and timing out answers 504, in the spec’s body; balances work again afterwards', {
    timeout: 60_000,
  }, async () => {
    await fault(api, 'gift card provider failing / unreachable / timing out', async (record) => {
      const balance = () =>
        api.send('POST', '/gift-cards/balances', {
          account: 'gc',
          body: { items: [{ number: `60339${String(giftCardSerial++).padStart(10, '0')}4321`, pin: '01000' }] },
        });
      expectStatus(await balance(), 200);
      await withProxyFault(record, postsOf('sim-gc'), { kind: 'status', status: 500 }, async () => {
        const failed = await balance();
        expectStatus(failed, 502);
        expectErrorBody(failed.body, 502, 'bad_gateway');
      });
      await withProxyFault(record, postsOf('sim-gc'), { kind: 'hang' }, async () => {
        const timedOut = await balance();
        expectStatus(timedOut, 504);
        expectErrorBody(timedOut.body, 504, 'gateway_timeout');
      });
      await s.proxy.down();
      try {
        const unreachable = await balance();
        expectStatus(unreachable, 502);
        expectErrorBody(unreachable.body, 502, 'bad_gateway');
        record.injected += 1;
      } finally {
        await s.proxy.up();
      }
      expectStatus(await balance(), 200);
      expectStatus(await api.send('GET', '/healthz', { anonymous: true }), 200);
      record.recovered_without_restart = true;
    });
  });

  it('leaves every transaction decided and agreeing with the provider: no corrupted state, no duplicate charge', {
    timeout: 120_000,
  }, async () => {
    // Give any last reconciliation a moment, then compare.
    await sleep(RECONCILE_AFTER_MS);
    const checked = made.filter((t) => !contradictory.has(t.id));
    // Filled by the fault tests above: run alone, this test would compare nothing and pass.
    expect(checked.length, 'transactions the fault tests above made (run the whole file)').toBeGreaterThan(0);
    const problems = await checkAgainstProvider(api, s.simulator.url, checked);
    expect(problems).toEqual([]);
    // Only the gift card endpoint, which has no business outcome to report, answered a 5xx.
    for (const key of Object.keys(api.serverErrors)) expect(key).toMatch(/^50[24] POST \/gift-cards\/balances$/);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Infrastructure faults: the distributed runtime on a Redis and a Kafka broker of this suite's own.
// ---------------------------------------------------------------------------------------------------------------

const ownInfra = ownInfraAvailability();

interface OwnInfra {
  readonly redis: OwnRedis;
  readonly kafka: OwnKafka;
}

/** Started at once, while the provider faults run: a new broker takes ~10–20 s to format and start. */
const infraStarting: Promise<OwnInfra | { readonly error: unknown }> | null = ownInfra.available
  ? (async () => {
      const kafka = await OwnKafka.create();
      const [redis] = await Promise.all([OwnRedis.start(), kafka.start()]);
      return { redis, kafka };
    })().catch((error: unknown) => ({ error }))
  : null;

afterAll(async () => {
  const infra = await infraStarting;
  if (infra && !('error' in infra)) {
    await infra.redis.stop();
    await infra.kafka.destroy();
  }
}, 60_000);

describeWithInfra(
  'infrastructure faults: the distributed runtime on a Redis and a Kafka broker of its own',
  ownInfra,
  () => {
    let infra: OwnInfra;
    let runtime: DistributedRuntime;
    let key: ApiKey;
    let api: ApiClient;
    const account = 'faults-dist';
    const receiver = new WebhookReceiver();
    const made: { account: string; id: string }[] = [];
    /** The service processes and their pids at the start: a restart would change them. */
    const pids: Record<string, number | undefined> = {};
    const serviceNames = ['identity', 'transactions', 'webhooks', 'gateway', 'second-gateway'] as const;

    const gateways = () => [runtime.baseUrl, runtime.secondUrl];

    async function readiness(url: string): Promise<{ status: number; body: any }> {
      const response = await fetch(`${url}/readyz`);
      return { status: response.status, body: await response.json() };
    }

    /** A payment through the first gateway: authorize, capture, refund part of it; each must succeed. */
    async function payment(amount: number): Promise<string> {
      const created = await api.send('POST', '/transactions', { account, body: cardPayment(amount) });
      expectStatus(created, 201);
      made.push({ account, id: created.body.id });
      expect(created.body.status, created.text).toBe('authorization_succeeded');
      const captured = await api.send('POST', `/transactions/${created.body.id}/capture`, { account, body: {} });
      expectStatus(captured, 200);
      expect(captured.body.status).toBe('capture_succeeded');
      const refunded = await api.send('POST', `/transactions/${created.body.id}/refunds`, {
        account,
        body: { amount: 100 },
      });
      expectStatus(refunded, 201);
      expect(refunded.body.status).toBe('succeeded');
      return created.body.id as string;
    }

    /** Both gateways and every service answer: each process is still the one started first (no restart). */
    async function sameProcessesServing(): Promise<void> {
      for (const name of serviceNames) {
        const child = runtime.processes[name]!.child;
        expect(child.exitCode, `${name} exited`).toBeNull();
        expect(child.pid, `${name} was restarted`).toBe(pids[name]);
      }
      for (const url of gateways()) {
        await waitFor(
          `${url} ready again`,
          async () => ((await readiness(url)).status === 200 ? true : undefined),
          60_000,
          runtime.describe,
        );
        expect((await fetch(`${url}/healthz`)).status).toBe(200);
      }
    }

    /** Webhook names delivered (2xx) about one transaction. */
    const deliveredFor = (id: string) =>
      new Set(receiver.succeeded.filter((r) => (r.event.target as { id?: string }).id === id).map((r) => r.event.name));
    const fullyDelivered = (id: string) =>
      ['transaction.authorized', 'transaction.captured'].every((name) => deliveredFor(id).has(name));

    beforeAll(async () => {
      const started = await infraStarting!;
      if ('error' in started) throw started.error;
      infra = started;
      runtime = await startDistributedRuntime({
        name: 'faults-distributed',
        mockCard: true,
        env: {
          KAFKA_BROKERS: infra.kafka.brokers,
          REDIS_URL: infra.redis.url,
          POLL_INTERVAL_MS: '50',
          WEBHOOK_RETRY_BASE_MS: '100',
          WEBHOOK_RETRY_MAX_MS: '1000',
          WEBHOOK_WORKER_INTERVAL_MS: '50',
        },
      });
      for (const name of serviceNames) pids[name] = runtime.processes[name]!.child.pid;
      key = await runtime.createApiKey('faults', ['administrator']);
      // A fresh token per request: each one misses the token caches and goes to Redis first.
      api = new ApiClient(
        () => runtime.baseUrl,
        () => signToken({ kid: key.kid, privateKeyPem: key.private_key, expiresIn: 300 }),
      );
      clients.push(api);
      await waitFor(
        'the new key accepted',
        async () => ((await api.send('GET', '/roles')).status === 200 ? true : undefined),
        10_000,
        runtime.describe,
      );
      expectStatus(
        await api.send('POST', '/merchant-accounts', { body: { id: account, display_name: 'Faults distributed' } }),
        201,
      );
      expectStatus(
        await api.send('POST', '/payment-services', {
          account,
          body: {
            display_name: 'Card simulator',
            payment_service_definition_id: 'mock-card',
            fields: [{ key: 'merchant_id', value: 'sim-dist' }],
            accepted_currencies: ['USD'],
            accepted_countries: ['US'],
          },
        }),
        201,
      );
      await receiver.up();
      expectStatus(
        await api.send('POST', '/webhook-subscriptions', {
          account,
          body: {
            url: receiver.url,
            event_names: ['transaction.authorized', 'transaction.captured'],
            description: 'faults',
          },
        }),
        201,
      );
    });

    afterAll(async () => {
      await receiver.down();
      await runtime?.stop();
    });

    it('Redis stopped: payments are still verified and served, /readyz says the cache is unavailable; Redis back: ready again, the cache used again, no restart', {
      timeout: 90_000,
    }, async () => {
      await fault(api, 'Redis stopped and started again', async (record) => {
        await payment(1_100);
        expect(
          Number((await redisCommand(infra.redis.port, 'DBSIZE')).slice(1)),
          'the gateways cache verified tokens in Redis',
        ).toBeGreaterThan(0);

        await infra.redis.stop();
        record.injected += 1;
        await Promise.all(range(PER_FAULT).map((i) => payment(1_200 + i)));
        for (const url of gateways()) {
          expect((await fetch(`${url}/healthz`)).status).toBe(200);
          const degraded = await readiness(url);
          expect(degraded.status).toBe(503);
          readiness503.redis = (readiness503.redis ?? 0) + 1;
          expect(degraded.body).toMatchObject({
            status: 'not_ready',
            checks: {
              identity: 'ok',
              transactions: 'ok',
              webhooks: 'ok',
              bus: 'ok',
              cache: expect.stringMatching(/^unavailable/),
            },
          });
        }

        await infra.redis.start();
        await sameProcessesServing();
        await payment(1_300);
        // The same gateway processes write to the new (empty) Redis again.
        await waitFor(
          'verified tokens cached in Redis again',
          async () => (Number((await redisCommand(infra.redis.port, 'DBSIZE')).slice(1)) > 0 ? true : undefined),
          10_000,
        );
        record.recovered_without_restart = true;
      });
    });

    it('Kafka stopped: writes are still acknowledged (the store is the outbox) and nothing is relayed; Kafka back: every event relayed, every webhook delivered, no restart', {
      timeout: 120_000,
    }, async () => {
      await fault(api, 'Kafka stopped and started again', async (record) => {
        const before = await payment(2_100);
        await waitFor(
          'webhooks flowing before the fault',
          async () => (fullyDelivered(before) ? true : undefined),
          30_000,
          runtime.describe,
        );

        await infra.kafka.stop();
        record.injected += 1;
        const during = await Promise.all(range(PER_FAULT).map((i) => payment(2_200 + i)));
        for (const url of gateways()) {
          expect((await fetch(`${url}/healthz`)).status).toBe(200);
          const degraded = await readiness(url);
          expect(degraded.status).toBe(503);
          readiness503.kafka = (readiness503.kafka ?? 0) + 1;
          expect(degraded.body).toMatchObject({
            status: 'not_ready',
            checks: { identity: 'ok', transactions: 'ok', webhooks: 'ok', bus: expect.stringMatching(/^unavailable/) },
          });
        }
        // Nothing about these payments can have reached the receiver: their events wait in the store.
        for (const id of during) expect([...deliveredFor(id)]).toEqual([]);

        await infra.kafka.start();
        await waitFor(
          `every webhook of the ${during.length} payments made while Kafka was down`,
          async () => (during.every(fullyDelivered) ? true : undefined),
          60_000,
          () => `${during.filter((id) => !fullyDelivered(id)).length} not yet delivered\n${runtime.describe()}`,
        );
        await sameProcessesServing();
        const after = await payment(2_300);
        await waitFor(
          'webhooks of a payment after the fault',
          async () => (fullyDelivered(after) ? true : undefined),
          30_000,
          runtime.describe,
        );
        record.recovered_without_restart = true;
      });
    });

    it('leaves every transaction agreeing with the provider: no corrupted state, no duplicate charge', {
      timeout: 60_000,
    }, async () => {
      // Filled by the fault tests above: run alone, this test would compare nothing and pass.
      expect(made.length, 'transactions the fault tests above made (run the whole file)').toBeGreaterThan(0);
      const problems = await checkAgainstProvider(api, runtime.simulatorUrl!, made);
      expect(problems).toEqual([]);
      expect(api.serverErrors).toEqual({});
    });
  },
);
