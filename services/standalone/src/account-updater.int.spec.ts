/**
 * Issue 6, item 5 acceptance (account updater), over HTTP on the embedded runtime with the simulator's account
 * updater (docs/simulator.md "Account updater": the card number's last four digits decide; 0010 → a new expiry,
 * 0028 → a new number). 201 when one or more payment methods were scheduled, 204 with no body when none were
 * (unknown, another merchant account's, the account updater off, a `processing` method, already waiting in an open
 * job); then the answer arrives and shows on the payment method. Validation (422), scope (403), and no card number
 * in any answer or file.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { accountUpdaterExamplePans } from '@switchyard/connectors/src/simulator';
import { signToken } from '@switchyard/testing';
import { card, dataFiles, startHarness, type Harness } from './transactions.harness';

const enabled = 'au-on';
const disabled = 'au-off';
const EXPIRY_PAN = accountUpdaterExamplePans.updated_expiry[0]!;
const NUMBER_PAN = accountUpdaterExamplePans.updated_number[1]!;
/** The simulator's replacement for NUMBER_PAN (same BIN and length, ending 0002). */
const REPLACEMENT = '5555554444480002';
const REPLACEMENT_LAST4 = REPLACEMENT.slice(-4);

let h: Harness;

beforeAll(async () => {
  // An outside simulator: a purchase's vault-token notification waits (its method stays `processing`), and the
  // account updater answers quickly.
  h = await startHarness('account-updater', {
    // The spec runs the vault's account updater itself (`service.vault`): the vault in this thread.
    env: { VAULT_THREAD: 'false' },
    simulator: { settleDelayMs: 60_000, accountUpdaterDelayMs: 50 },
  });
  await h.createAccount(enabled, { account_updater_enabled: true });
  await h.createAccount(disabled);
});

afterAll(() => h?.stop());

/** Every answer's body: none may hold a card number (the harness watches its own test cards only). */
const answers: string[] = [];
const kept = <T extends { text: string }>(response: T): T => {
  answers.push(response.text);
  return response;
};
const post = async (body: unknown, account = enabled) =>
  kept(
    await h
      .http()
      .post('/account-updater/jobs')
      .set(h.headers(account))
      .send(body as object),
  );
const getMethod = async (id: string, account = enabled) =>
  kept(await h.http().get(`/payment-methods/${id}`).set(h.headers(account)).expect(200)).body as Record<
    string,
    unknown
  >;

async function storeCard(number: string, account = enabled, expirationDate = '11/25'): Promise<string> {
  const response = await h
    .http()
    .post('/payment-methods')
    .set(h.headers(account))
    .send({ method: 'card', number, expiration_date: expirationDate });
  if (kept(response).status !== 201) throw new Error(`POST /payment-methods answered ${response.status}`);
  return response.body.id as string;
}

/** Lets the service's timer round run now (the same `poll()` the timer calls) until `done`, at most 5 s. */
async function untilAnswered(
  id: string,
  done: (method: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    await h.fixture.service.vault.slices.accountUpdater.poll().catch(() => undefined);
    const method = await getMethod(id);
    if (done(method)) return method;
    if (Date.now() > deadline) throw new Error(`payment method ${id} was not updated: ${JSON.stringify(method)}`);
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
}

function expectNoContent(response: { status: number; text: string; headers: Record<string, string | undefined> }) {
  expect(response.status).toBe(204);
  expect(response.text).toBe('');
  expect(response.headers['content-type']).toBeUndefined();
}

describe('POST /account-updater/jobs: 204 when nothing was scheduled', () => {
  it('every id unknown → 204 with an empty body', async () => {
    expectNoContent(await post({ payment_method_ids: [randomUUID(), randomUUID()] }));
  });

  it('the account updater off on the merchant account → 204', async () => {
    const id = await storeCard(EXPIRY_PAN, disabled);
    expectNoContent(await post({ payment_method_ids: [id] }, disabled));
  });

  it('another merchant account’s payment method → 204', async () => {
    const id = await storeCard(EXPIRY_PAN, disabled);
    expectNoContent(await post({ payment_method_ids: [id] }, enabled));
  });

  it('a `processing` payment method (stored by a purchase, not yet confirmed by the provider) → 204', async () => {
    await h.createConnection(enabled);
    const transaction = await h.authorize(enabled, { store: true, payment_method: card({ number: EXPIRY_PAN }) });
    const id = (transaction.payment_method as { id: string }).id;
    expect((await getMethod(id)).status).toBe('processing');
    expectNoContent(await post({ payment_method_ids: [id] }));
  });
});

describe('POST /account-updater/jobs: 201, then the answer on the payment method', () => {
  it('one eligible among unknown ones → 201 with one inquiry; again while open → 204; then the new expiry shows', async () => {
    const id = await storeCard(EXPIRY_PAN, enabled, '11/25');
    const response = await post({ payment_method_ids: [randomUUID(), id] });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      type: 'account-updater-job',
      id: expect.stringMatching(/^[0-9a-f-]{36}$/) as string,
      merchant_account_id: enabled,
      inquiries: [
        {
          type: 'account-updater-inquiry',
          id: expect.stringMatching(/^[0-9a-f-]{36}$/) as string,
          payment_method_id: id,
        },
      ],
      created_at: expect.any(String) as string,
      updated_at: expect.any(String) as string,
    });

    expectNoContent(await post({ payment_method_ids: [id] }));

    const updated = await untilAnswered(id, (method) => method.expiration_date === '11/28');
    expect(updated).toMatchObject({
      id,
      expiration_date: '11/28',
      label: EXPIRY_PAN.slice(-4),
      has_replacement: false,
    });

    // Answered: it may be scheduled again.
    expect((await post({ payment_method_ids: [id] })).status).toBe(201);
  });

  it('a reissued card → a new number and expiry: has_replacement and last_replaced_at show it', async () => {
    const id = await storeCard(NUMBER_PAN, enabled, '02/26');
    const before = await getMethod(id);
    expect(before).toMatchObject({ has_replacement: false, last_replaced_at: null, label: NUMBER_PAN.slice(-4) });
    expect((await post({ payment_method_ids: [id] })).status).toBe(201);
    const updated = await untilAnswered(id, (method) => method.has_replacement === true);
    expect(updated).toMatchObject({ expiration_date: '02/29', label: REPLACEMENT_LAST4, has_replacement: true });
    expect(updated.last_replaced_at).toEqual(expect.any(String));
    expect((updated.details as { bin: string }).bin).toBe(NUMBER_PAN.slice(0, 6));
  });

  it('two requests at once for one payment method: exactly one schedules it', async () => {
    const id = await storeCard(accountUpdaterExamplePans.no_change[0]!);
    const answers = await Promise.all(Array.from({ length: 4 }, () => post({ payment_method_ids: [id] })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 204, 204, 204]);
  });
});

describe('POST /account-updater/jobs: refusals', () => {
  it.each([
    ['no body field', {}, ['body', 'payment_method_ids'], 'missing'],
    ['an empty list', { payment_method_ids: [] }, ['body', 'payment_method_ids'], 'too_short'],
    [
      '1,001 ids',
      { payment_method_ids: Array.from({ length: 1001 }, () => randomUUID()) },
      ['body', 'payment_method_ids'],
      'too_long',
    ],
    ['an id that is not a UUID', { payment_method_ids: ['pm-1'] }, ['body', 'payment_method_ids', 0], undefined],
    ['an unknown field', { payment_method_ids: [randomUUID()], extra: true }, ['body', 'extra'], undefined],
  ])('%s → 422', async (_, body, loc, type) => {
    const response = await post(body);
    expect(response.status).toBe(422);
    expect(response.body.detail[0]).toMatchObject({ loc, ...(type ? { type } : {}) });
  });

  it('a key without account-updater.write → 403', async () => {
    const key = await h.fixture.service.identity.apiKeyPairs.create(
      { display_name: 'reader', roles: ['administrator'] },
      { kind: 'operator' },
    );
    const token = await signToken({
      kid: key.kid,
      privateKeyPem: key.private_key!,
      scopes: ['payment-methods.read'],
      expiresIn: 600,
    });
    await h
      .http()
      .post('/account-updater/jobs')
      .set({ authorization: `Bearer ${token}`, 'x-service-merchant-account-id': enabled })
      .send({ payment_method_ids: [randomUUID()] })
      .expect(403);
  });
});

describe('card data', () => {
  it('no answer and no file holds a card number sent or received', () => {
    expect(h.leaks).toEqual([]);
    expect(answers.length).toBeGreaterThan(10);
    expect(answers.filter((text) => [EXPIRY_PAN, NUMBER_PAN, REPLACEMENT].some((pan) => text.includes(pan)))).toEqual(
      [],
    );
    const files = dataFiles(h);
    expect(files.length).toBeGreaterThan(0);
    const pans = [EXPIRY_PAN, NUMBER_PAN, REPLACEMENT];
    const found = files
      .filter((file) => pans.some((pan) => fs.readFileSync(file).includes(pan)))
      .map((file) => path.basename(file));
    expect(found).toEqual([]);
  });
});
