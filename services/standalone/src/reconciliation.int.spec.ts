/**
 * Reconciliation of unknown outcomes (issue 11, fault suite): an authorization whose answer never came stays
 * `processing` when the create request answers; once it is older than RECONCILE_AFTER_MS the service's timer syncs
 * it with the provider — without anyone calling /sync — and it ends in a definite state.
 */
import { startHarness, type Harness } from './transactions.harness';

let h: Harness;
const account = 'reconcile';

beforeAll(async () => {
  // 500006: the simulator authorizes at once but answers after 2 s; the connector gives up after 300 ms (unknown).
  h = await startHarness('reconciliation', {
    simulator: { unknownOutcomeDelayMs: 2_000 },
    env: { MOCK_CARD_TIMEOUT_MS: '300', RECONCILE_AFTER_MS: '400' },
  });
  await h.createAccount(account);
  await h.createConnection(account);
});

afterAll(async () => {
  await h.stop();
});

it('an authorization with an unknown outcome ends authorization_succeeded by itself, as the provider holds it', async () => {
  const created = await h.authorize(account, { amount: 500_006 });
  expect(created.status).toBe('processing');
  const settled = await h.waitFor(account, created.id, (t) => t.status !== 'processing', 10_000);
  expect(settled).toMatchObject({ status: 'authorization_succeeded', authorized_amount: 500_006 });
  const ledger = (await (await fetch(`${h.simulator.url}/v1/ledger?reference=${created.id}`)).json()) as Record<
    string,
    number
  >;
  expect(ledger).toMatchObject({ authorizations: 1 });
});
