/**
 * Issue 22, item 13: a card given for one payment (no `store`) is shredded — its vault row and its own data key —
 * once its create request has completed; while 3-D Secure may still need it (the buyer away at a challenge) it is
 * kept. What follows the payment works from the provider's transaction id, not the card: captures, refunds, voids,
 * sync, reconciliation, time travel and the events list.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { startHarness, THREE_DS_PANS, type Harness } from './transactions.harness';

let h: Harness;
const account = 'one-off';

beforeAll(async () => {
  h = await startHarness('one-off-cards', { settleDelayMs: 20, env: { VAULT_THREAD: 'false' } });
  await h.createAccount(account);
  await h.createThreeDsConfiguration(account);
  await h.createConnection(account, { three_d_secure_enabled: true });
});

afterAll(async () => {
  expect(h.leaks).toEqual([]);
  await h.stop();
});

const vaultCardId = (t: Record<string, unknown>) => (t.payment_method as { id: string }).id;
const inVault = (cardId: string) => h.fixture.service.vault.slices.vault.find(account, cardId) !== null;
/** Rows of the card's own data key, read from the data directory's file like any other reader. */
function ownDataKeys(cardId: string): number {
  const db = new Database(path.join(h.fixture.dataDir, 'vault.db'), { readonly: true });
  try {
    return (
      db.prepare('SELECT COUNT(*) AS n FROM vault_data_keys WHERE owner = ?').get(`card:${cardId}`) as { n: number }
    ).n;
  } finally {
    db.close();
  }
}

/** The card is shredded once the read model has seen the create request complete. */
async function shredded(cardId: string): Promise<boolean> {
  await h.fixture.service.transactions.catchUp();
  return !inVault(cardId) && ownDataKeys(cardId) === 0;
}

it('shreds a one-off card once paid; capture, refund, void, sync, as_of and events still work', async () => {
  const paid = await h.authorize(account, { amount: 5_000 });
  expect(paid.status).toBe('authorization_succeeded');
  expect(await shredded(vaultCardId(paid))).toBe(true);

  const captured = await h
    .http()
    .post(`/transactions/${paid.id}/capture`)
    .set(h.headers(account))
    .send({ amount: 5_000 })
    .expect(200);
  expect(captured.body.status).toBe('capture_succeeded');
  const refund = await h
    .http()
    .post(`/transactions/${paid.id}/refunds`)
    .set(h.headers(account))
    .send({ amount: 1_000 })
    .expect(201);
  expect(refund.body.status).toBe('succeeded');
  expect(
    (await h.http().post(`/transactions/${paid.id}/sync`).set(h.headers(account)).send({}).expect(200)).body.status,
  ).toBe('capture_succeeded');
  // Folded from the stream (not the read model): the card summary the events hold is enough.
  const asOf = await h
    .http()
    .get(`/transactions/${paid.id}`)
    .query({ as_of: new Date().toISOString() })
    .set(h.headers(account))
    .expect(200);
  expect(asOf.body.payment_method).toMatchObject({ id: vaultCardId(paid), label: '1111' });
  const events = await h.http().get(`/transactions/${paid.id}/events`).set(h.headers(account)).expect(200);
  expect(events.body.items.length).toBeGreaterThanOrEqual(4);
  expect((await h.get(account, paid.id)).payment_method).toMatchObject({
    id: vaultCardId(paid),
    label: '1111',
    details: { bin: '411111' },
  });

  const toVoid = await h.authorize(account, { amount: 2_000 });
  expect(await shredded(vaultCardId(toVoid))).toBe(true);
  expect(
    (await h.http().post(`/transactions/${toVoid.id}/void`).set(h.headers(account)).send({}).expect(200)).body.status,
  ).toBe('authorization_voided');
});

it('shreds the card of a declined payment too, and keeps a card the payment stores', async () => {
  const declined = await h.authorize(account, { amount: 200_012 });
  expect(declined.status).toBe('authorization_declined');
  expect(await shredded(vaultCardId(declined))).toBe(true);

  const stored = await h.authorize(account, { amount: 3_000, store: true });
  await h.fixture.service.transactions.catchUp();
  expect(inVault(vaultCardId(stored))).toBe(true);
});

it('keeps the card while the buyer is at a 3-D Secure challenge, and shreds it once they are back', async () => {
  const redirectUrl = 'https://shop.example/return';
  const paused = await h.authorize(account, {
    amount: 4_000,
    payment_method: {
      method: 'card',
      number: THREE_DS_PANS.challengeVisaUS,
      expiration_date: '03/30',
      security_code: '100',
      redirect_url: redirectUrl,
    },
  });
  expect(paused.status).toBe('buyer_approval_pending');
  await h.fixture.service.transactions.catchUp();
  expect(inVault(vaultCardId(paused))).toBe(true);

  const approvalUrl = (paused.payment_method as { approval_url: string }).approval_url;
  const submitted = await fetch(approvalUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'result=Y',
    redirect: 'manual',
  });
  const back = await fetch(submitted.headers.get('location') ?? '', { redirect: 'manual' });
  expect(back.status).toBe(303);
  // The card was still there for the authorization after the challenge.
  expect((await h.get(account, paused.id)).status).toBe('authorization_succeeded');
  expect(await shredded(vaultCardId(paused))).toBe(true);
});

it('shreds the cards of payments completed close together in one call to the vault, without catching up', async () => {
  const port = h.fixture.service.vault.port as unknown as { removeCards: (...args: unknown[]) => Promise<void> };
  const removeCards = vi.spyOn(port, 'removeCards');
  try {
    const paid = await Promise.all([1, 2, 3].map((n) => h.authorize(account, { amount: 1_000 + n })));
    const cards = paid.map(vaultCardId);
    await vi.waitFor(() => expect(cards.filter(inVault)).toEqual([]), { timeout: 5_000 });
    expect(cards.map(ownDataKeys)).toEqual([0, 0, 0]);
    const calls = removeCards.mock.calls.filter(([list]) =>
      (list as { id: string }[]).some((card) => cards.includes(card.id)),
    );
    // One call when they completed within the shredder's wait (250 ms) of each other, as they do here; fewer calls
    // than cards however slow the machine.
    expect(calls.length).toBeLessThan(cards.length);
    expect(calls.flatMap(([list]) => (list as { id: string }[]).map((card) => card.id)).sort()).toEqual(
      [...cards].sort(),
    );
  } finally {
    removeCards.mockRestore();
  }
});
