/**
 * Issue 5 acceptance, "failure notification during create": the simulator's 500011 sends a `failed` notification
 * and answers the authorize call `approved`, each after its own random delay (0–20 ms), so the notification lands
 * before the answer, between the answer and the end of the request, or after it. Over 200 runs the client sees
 * exactly one terminal outcome — the create response's status is the transaction's final status — and the events
 * stream never shows a success after a failure (spec, Events rule 2).
 */
import { simulatorValues } from '@switchyard/connectors/src/simulator';
import { startHarness, type Harness } from './transactions.harness';

const RUNS = 200;
let h: Harness;
const account = 'race';

beforeAll(async () => {
  h = await startHarness('failure-notification-race', { simulator: { raceWindowMs: 20 } });
  await h.createAccount(account);
  await h.createConnection(account);
});

afterAll(async () => {
  await h.stop();
});

const terminal = new Set(['authorization_succeeded', 'authorization_failed', 'authorization_declined']);

it(`gives one terminal outcome and never a success after a failure, over ${RUNS} runs with random timing`, async () => {
  const outcomes = { authorization_failed: 0, authorization_succeeded: 0 } as Record<string, number>;
  for (let run = 0; run < RUNS; run += 1) {
    const delivered = h.simulator.deliveries.length;
    const created = await h.authorize(account, { amount: simulatorValues.scenarioAmounts.failureNotifiedThenApproved });
    expect(terminal.has(created.status), `run ${run}: ${created.status}`).toBe(true);
    // Wait for the notification to have reached the gateway (it may still be on its way after the response).
    for (let i = 0; h.simulator.deliveries.length === delivered && i < 200; i += 1)
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(h.simulator.deliveries.length, `run ${run}: the notification was never delivered`).toBeGreaterThan(
      delivered,
    );
    const final = await h.get(account, created.id);
    expect(final.status, `run ${run}: the response said ${created.status}, the record says ${final.status}`).toBe(
      created.status,
    );

    const history = (await h.http().get(`/transactions/${created.id}/events`).set(h.headers(account)).expect(200)).body
      .items as { context: { event: string } }[];
    const events = history.map((item) => item.context.event);
    const decided = events.filter((event) => event === 'AuthorizationSucceeded' || event === 'AuthorizationFailed');
    expect(decided, `run ${run}: ${events.join(', ')}`).toHaveLength(1);
    const failedAt = events.indexOf('AuthorizationFailed');
    if (failedAt >= 0) expect(events.slice(failedAt)).not.toContain('AuthorizationSucceeded');
    outcomes[final.status] = (outcomes[final.status] ?? 0) + 1;
  }
  // Both orders happened: the random timing exercised the hold and the late notification alike.
  console.info(`500011 over ${RUNS} runs: ${JSON.stringify(outcomes)}`);
  expect(outcomes.authorization_failed).toBeGreaterThan(0);
  expect(outcomes.authorization_succeeded).toBeGreaterThan(0);
}, 120_000);
