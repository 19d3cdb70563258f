/**
 * The account updater slice over a real store and read model, with in-memory payment methods, merchant account
 * settings and updater service: who is scheduled (201 or 204 at the edge), racing requests for one payment method,
 * submission right after the answer and again after a failure, results applied to the payment method before the
 * inquiry is recorded (a crash in between replays the update), and no card number anywhere in the store.
 */
import {
  ConnectorUnavailableError,
  type AccountUpdaterJobRequest,
  type AccountUpdaterJobResults,
  type AccountUpdaterOutcome,
  type AccountUpdaterResult,
  type AccountUpdaterService,
} from '@switchyard/connectors';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { ServiceHost } from '@switchyard/service';
import { accountUpdaterClaimStream } from './account-updater-claim';
import { accountUpdaterJobStream } from './account-updater-job';
import { AccountUpdater, type AccountUpdaterPaymentMethods } from './account-updater.slice';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';

const SHOP = 'shop-a';
const OTHER_SHOP = 'shop-b';
const PAN = '4111111111150010';
const PAN_NEW_NUMBER = '5555555555570028';
const REPLACEMENT = '5555558888840002';

interface FakePaymentMethod {
  merchantAccountId: string;
  status: 'processing' | 'succeeded' | 'failed';
  card: { number: string; expirationDate: string } | null;
}

type Update = Parameters<AccountUpdaterPaymentMethods['applyAccountUpdate']>[2];

/** Payment methods as the lead's slice exposes them; `applyAccountUpdate` keeps one update per job, as it promises. */
class FakePaymentMethods implements AccountUpdaterPaymentMethods {
  readonly methods = new Map<string, FakePaymentMethod>();
  readonly applied = new Map<string, Update[]>();
  calls = 0;
  /** Throws after the update was kept: a process that died before the job recorded it. */
  failAfterApplying = new Set<string>();
  /** Throws before keeping anything. */
  refuse = new Set<string>();

  add(id: string, overrides: Partial<FakePaymentMethod> = {}): string {
    this.methods.set(id, {
      merchantAccountId: SHOP,
      status: 'succeeded',
      card: { number: PAN, expirationDate: '11/25' },
      ...overrides,
    });
    return id;
  }

  find(merchantAccountId: string, id: string) {
    const method = this.methods.get(id);
    return method && method.merchantAccountId === merchantAccountId && method.card
      ? { status: method.status, method: 'card' }
      : null;
  }

  cardOf(merchantAccountId: string, id: string) {
    return this.find(merchantAccountId, id) ? (this.methods.get(id)?.card ?? null) : null;
  }

  async applyAccountUpdate(_merchantAccountId: string, id: string, update: Update): Promise<void> {
    this.calls += 1;
    if (this.refuse.has(id)) throw new Error(`payment method ${id} could not be updated`);
    const updates = this.applied.get(id) ?? [];
    if (!updates.some((kept) => kept.jobId === update.jobId)) updates.push(update);
    this.applied.set(id, updates);
    if (this.failAfterApplying.delete(id)) throw new Error('process died after the update');
  }
}

/** The updater: answers when `answer()` is called, by the card's last four digits (as the simulator does). */
class FakeUpdater implements AccountUpdaterService {
  down = false;
  readonly submissions: AccountUpdaterJobRequest[] = [];
  private readonly jobs = new Map<string, { request: AccountUpdaterJobRequest; done: boolean; drop: Set<string> }>();

  async submit(job: AccountUpdaterJobRequest) {
    if (this.down) throw new ConnectorUnavailableError('account updater unreachable (ECONNREFUSED)', true);
    this.submissions.push(job);
    const providerJobId = `provider-${job.reference}`;
    if (!this.jobs.has(providerJobId)) this.jobs.set(providerJobId, { request: job, done: false, drop: new Set() });
    return { providerJobId };
  }

  async results(providerJobId: string): Promise<AccountUpdaterJobResults> {
    if (this.down) throw new ConnectorUnavailableError('account updater unreachable (ECONNREFUSED)', true);
    const job = this.jobs.get(providerJobId);
    if (!job) throw new Error(`no job ${providerJobId}`);
    if (!job.done) return { status: 'pending' };
    return {
      status: 'completed',
      results: job.request.inquiries
        .filter((inquiry) => !job.drop.has(inquiry.reference))
        .map(({ reference, card }) => resultFor(reference, card.number)),
    };
  }

  /** Completes every job; `without` inquiries get no result. */
  answer(without: readonly string[] = []) {
    for (const job of this.jobs.values()) {
      job.done = true;
      for (const reference of without) job.drop.add(reference);
    }
  }
}

function resultFor(reference: string, number: string): AccountUpdaterResult {
  const outcome: AccountUpdaterOutcome = number.endsWith('0010')
    ? 'updated_expiry'
    : number.endsWith('0028')
      ? 'updated_number'
      : 'no_change';
  if (outcome === 'updated_expiry') return { reference, outcome, expirationDate: '11/28' };
  if (outcome === 'updated_number') return { reference, outcome, number: REPLACEMENT, expirationDate: '11/28' };
  return { reference, outcome };
}

let dir: string;
let storage: ServiceStorage;
let host: ServiceHost;
let paymentMethods: FakePaymentMethods;
let updater: FakeUpdater;
let settings: Map<string, boolean>;
let slice: AccountUpdater;
let backgroundErrors: unknown[];
let clock: number;
let ids: number;

beforeEach(async () => {
  dir = createTestDataDir('account-updater');
  storage = openServiceStorage('transactions', { dataDir: dir });
  clock = Date.parse('2026-01-01T00:00:00.000Z');
  ids = 0;
  host = new ServiceHost({
    store: storage.store,
    db: storage.db,
    now: () => new Date((clock += 1000)),
    newId: () => `00000000-0000-4000-8000-${String((ids += 1)).padStart(12, '0')}`,
  });
  paymentMethods = new FakePaymentMethods();
  updater = new FakeUpdater();
  settings = new Map([
    [SHOP, true],
    [OTHER_SHOP, false],
  ]);
  backgroundErrors = [];
  slice = new AccountUpdater(host.context, {
    paymentMethods,
    merchantAccounts: { get: async (id) => (settings.has(id) ? { account_updater_enabled: settings.get(id)! } : null) },
    updater,
    claimGraceMs: 60_000,
    onBackgroundError: (error) => backgroundErrors.push(error),
  });
  host.add(slice);
  await host.catchUp();
});

afterEach(async () => {
  await host.stop();
  await storage.close();
  removeTestDataDir(dir);
});

const schedule = (paymentMethodIds: string[], merchantAccountId = SHOP) =>
  slice.createJob({ merchant_account_id: merchantAccountId, body: { payment_method_ids: paymentMethodIds } });

const pm = (n: number) => `11111111-1111-4111-8111-${String(n).padStart(12, '0')}`;

async function eventsOf(stream: string) {
  return (await storage.store.readStream(stream)).map((event) => ({
    type: event.type,
    data: event.data as Record<string, unknown>,
  }));
}

async function allStoredText(): Promise<string> {
  const events = await storage.store.readAll();
  const tables = storage.db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'account_updater%'`)
    .all() as { name: string }[];
  const rows = tables.map(({ name }) => storage.db.prepare(`SELECT * FROM ${name}`).all());
  return JSON.stringify({ events, rows });
}

describe('who is scheduled', () => {
  it('nobody when the merchant account has the account updater off, or is unknown: no event at all', async () => {
    const id = paymentMethods.add(pm(1), { merchantAccountId: OTHER_SHOP });
    expect(await schedule([id], OTHER_SHOP)).toBeNull();
    expect(await schedule([id], 'nowhere')).toBeNull();
    expect(await storage.store.readAll()).toEqual([]);
  });

  it('nobody when every id is unknown, another account’s, or not a succeeded card', async () => {
    const elsewhere = paymentMethods.add(pm(2), { merchantAccountId: OTHER_SHOP });
    const processing = paymentMethods.add(pm(3), { status: 'processing' });
    const failed = paymentMethods.add(pm(4), { status: 'failed' });
    expect(await schedule([pm(1), elsewhere, processing, failed])).toBeNull();
    expect(await storage.store.readAll()).toEqual([]);
    expect(updater.submissions).toEqual([]);
  });

  it('the eligible ones among unknown ones, once each (a repeated id is one inquiry)', async () => {
    const id = paymentMethods.add(pm(5));
    const job = await schedule([pm(1), id, id]);
    expect(job).toEqual({
      type: 'account-updater-job',
      id: expect.any(String) as string,
      merchant_account_id: SHOP,
      inquiries: [{ type: 'account-updater-inquiry', id: expect.any(String) as string, payment_method_id: id }],
      created_at: expect.any(String) as string,
      updated_at: expect.any(String) as string,
    });
    expect(job!.created_at).toBe(job!.updated_at);
    expect(await eventsOf(accountUpdaterJobStream(job!.id))).toEqual([
      {
        type: 'AccountUpdaterJobCreated',
        data: {
          id: job!.id,
          merchantAccountId: SHOP,
          inquiries: [{ id: job!.inquiries[0]!.id, paymentMethodId: id }],
          at: job!.created_at,
        },
      },
    ]);
  });

  it('not a payment method already waiting in an open job', async () => {
    const id = paymentMethods.add(pm(6));
    const other = paymentMethods.add(pm(7));
    await schedule([id]);
    expect(await schedule([id])).toBeNull();
    const next = await schedule([id, other]);
    expect(next!.inquiries.map((inquiry) => inquiry.payment_method_id)).toEqual([other]);
  });
});

describe('two requests at once for the same payment method', () => {
  it('schedule it once: the claim stream lets exactly one of them have it', async () => {
    const id = paymentMethods.add(pm(10));
    const answers = await Promise.all(Array.from({ length: 8 }, () => schedule([id])));
    const jobs = answers.filter((answer) => answer !== null);
    expect(jobs).toHaveLength(1);
    expect(await eventsOf(accountUpdaterClaimStream(id))).toEqual([
      { type: 'AccountUpdaterPaymentMethodClaimed', data: expect.objectContaining({ jobId: jobs[0]!.id }) as object },
    ]);
  });

  it('split overlapping requests so that the shared payment method is in exactly one job', async () => {
    const [a, shared, b] = [pm(11), pm(12), pm(13)].map((id) => paymentMethods.add(id));
    const [first, second] = await Promise.all([schedule([a!, shared!]), schedule([shared!, b!])]);
    const scheduled = [...first!.inquiries, ...second!.inquiries].map((inquiry) => inquiry.payment_method_id);
    expect(scheduled.filter((id) => id === shared)).toHaveLength(1);
    expect(scheduled).toEqual(expect.arrayContaining([a, b, shared]));
  });

  it('as in two processes: a claim taken by a request that died before creating its job holds for the grace period only', async () => {
    const id = paymentMethods.add(pm(14));
    await storage.store.append(
      accountUpdaterClaimStream(id),
      [
        {
          type: 'AccountUpdaterPaymentMethodClaimed',
          data: {
            paymentMethodId: id,
            merchantAccountId: SHOP,
            jobId: 'died-job',
            inquiryId: 'died-inquiry',
            at: new Date(clock).toISOString(),
          },
        },
      ],
      { expectedRevision: 'no_stream' },
    );
    expect(await schedule([id])).toBeNull();
    clock += 61_000;
    const job = await schedule([id]);
    expect(job!.inquiries.map((inquiry) => inquiry.payment_method_id)).toEqual([id]);
  });
});

describe('submission', () => {
  it('follows the answer, with the cards under the job id, and is recorded', async () => {
    const id = paymentMethods.add(pm(20));
    const job = await schedule([id]);
    await slice.poll(); // waits for the submission already running
    expect(updater.submissions).toEqual([
      {
        reference: job!.id,
        inquiries: [{ reference: job!.inquiries[0]!.id, card: { number: PAN, expirationDate: '11/25' } }],
      },
    ]);
    expect((await eventsOf(accountUpdaterJobStream(job!.id))).map((event) => event.type)).toEqual([
      'AccountUpdaterJobCreated',
      'AccountUpdaterJobSubmitted',
    ]);
  });

  it('that failed (updater unreachable) is sent again by the next round once it is back', async () => {
    const id = paymentMethods.add(pm(21));
    updater.down = true;
    const job = await schedule([id]);
    expect(job).not.toBeNull();
    await expect(slice.poll()).rejects.toBeInstanceOf(ConnectorUnavailableError);
    expect(backgroundErrors).toEqual([expect.any(ConnectorUnavailableError)]);
    expect(slice.readModel.openJobs()).toEqual([{ id: job!.id, merchantAccountId: SHOP, status: 'created' }]);

    updater.down = false;
    await slice.poll();
    expect(updater.submissions).toHaveLength(1);
    expect(slice.readModel.openJobs()).toEqual([{ id: job!.id, merchantAccountId: SHOP, status: 'submitted' }]);
  });

  it('skips a payment method deleted since it was scheduled: completed as unavailable, never sent', async () => {
    const kept = paymentMethods.add(pm(22));
    const deleted = paymentMethods.add(pm(23));
    updater.down = true;
    const job = await schedule([kept, deleted]);
    await slice.poll().catch(() => undefined);
    paymentMethods.methods.get(deleted)!.card = null;
    updater.down = false;
    await slice.poll();
    expect(updater.submissions.map((s) => s.inquiries.map((i) => i.reference))).toEqual([[job!.inquiries[0]!.id]]);
    const completed = (await eventsOf(accountUpdaterJobStream(job!.id))).filter(
      (event) => event.type === 'AccountUpdaterInquiryCompleted',
    );
    expect(completed.map((event) => event.data)).toEqual([
      expect.objectContaining({ paymentMethodId: deleted, outcome: 'payment_method_unavailable' }),
    ]);
  });

  it('completes a job whose every payment method is gone, without calling the updater', async () => {
    const id = paymentMethods.add(pm(24));
    updater.down = true;
    const job = await schedule([id]);
    await slice.poll().catch(() => undefined);
    paymentMethods.methods.get(id)!.card = null;
    updater.down = false;
    await slice.poll();
    expect(updater.submissions).toEqual([]);
    expect((await eventsOf(accountUpdaterJobStream(job!.id))).map((event) => event.type)).toEqual([
      'AccountUpdaterJobCreated',
      'AccountUpdaterInquiryCompleted',
      'AccountUpdaterJobCompleted',
    ]);
    expect(slice.readModel.openJobs()).toEqual([]);
  });
});

describe('results', () => {
  it('wait while the updater is pending, then update each payment method and complete the job', async () => {
    const expiry = paymentMethods.add(pm(30));
    const number = paymentMethods.add(pm(31), { card: { number: PAN_NEW_NUMBER, expirationDate: '11/25' } });
    const unchanged = paymentMethods.add(pm(32), { card: { number: '4111111111111111', expirationDate: '01/30' } });
    const job = await schedule([expiry, number, unchanged]);
    await slice.poll();
    await slice.poll();
    expect(paymentMethods.calls).toBe(0);

    updater.answer();
    await slice.poll();
    expect(paymentMethods.applied.get(expiry)).toEqual([
      { jobId: job!.id, outcome: 'updated_expiry', expirationDate: '11/28' },
    ]);
    expect(paymentMethods.applied.get(number)).toEqual([
      { jobId: job!.id, outcome: 'updated_number', number: REPLACEMENT, expirationDate: '11/28' },
    ]);
    expect(paymentMethods.applied.get(unchanged)).toEqual([{ jobId: job!.id, outcome: 'no_change' }]);
    const events = await eventsOf(accountUpdaterJobStream(job!.id));
    expect(events.map((event) => event.type)).toEqual([
      'AccountUpdaterJobCreated',
      'AccountUpdaterJobSubmitted',
      'AccountUpdaterInquiryCompleted',
      'AccountUpdaterInquiryCompleted',
      'AccountUpdaterInquiryCompleted',
      'AccountUpdaterJobCompleted',
    ]);
    expect(
      events.filter((event) => event.type === 'AccountUpdaterInquiryCompleted').map((event) => event.data.outcome),
    ).toEqual(['updated_expiry', 'updated_number', 'no_change']);
    expect(slice.readModel.openJobs()).toEqual([]);

    // Answered: the payment methods can be scheduled again.
    const again = await schedule([expiry]);
    expect(again!.inquiries.map((inquiry) => inquiry.payment_method_id)).toEqual([expiry]);
  });

  it('are replayed after a crash between the update and its record: applied once, recorded once', async () => {
    const first = paymentMethods.add(pm(40));
    const second = paymentMethods.add(pm(41));
    const job = await schedule([first, second]);
    await slice.poll();
    updater.answer();
    paymentMethods.failAfterApplying.add(second);
    await expect(slice.poll()).rejects.toThrow('process died after the update');
    // The first was applied and recorded; the second applied but not recorded.
    const completedAfterCrash = (await eventsOf(accountUpdaterJobStream(job!.id))).filter(
      (event) => event.type === 'AccountUpdaterInquiryCompleted',
    );
    expect(completedAfterCrash.map((event) => event.data.paymentMethodId)).toEqual([first]);

    await slice.poll();
    expect(paymentMethods.calls).toBe(3);
    expect(paymentMethods.applied.get(second)).toHaveLength(1);
    const completed = (await eventsOf(accountUpdaterJobStream(job!.id))).filter(
      (event) => event.type === 'AccountUpdaterInquiryCompleted',
    );
    expect(completed.map((event) => event.data.paymentMethodId)).toEqual([first, second]);
    await slice.poll();
    expect(paymentMethods.calls).toBe(3);
  });

  it('a payment method that cannot be updated is tried again next round; the others are recorded meanwhile', async () => {
    const stuck = paymentMethods.add(pm(42));
    const fine = paymentMethods.add(pm(43));
    const job = await schedule([stuck, fine]);
    await slice.poll();
    updater.answer();
    paymentMethods.refuse.add(stuck);
    await expect(slice.poll()).rejects.toThrow('could not be updated');
    expect(slice.readModel.openJobs()).toHaveLength(1);
    paymentMethods.refuse.delete(stuck);
    await slice.poll();
    expect(paymentMethods.applied.get(stuck)).toEqual([expect.objectContaining({ jobId: job!.id })]);
    expect(slice.readModel.openJobs()).toEqual([]);
  });

  it('an inquiry the updater completed the job without answering is recorded as not answered, with no update', async () => {
    const answered = paymentMethods.add(pm(44));
    const silent = paymentMethods.add(pm(45));
    const job = await schedule([answered, silent]);
    await slice.poll();
    updater.answer([job!.inquiries[1]!.id]);
    await slice.poll();
    expect(paymentMethods.applied.has(silent)).toBe(false);
    const outcomes = (await eventsOf(accountUpdaterJobStream(job!.id)))
      .filter((event) => event.type === 'AccountUpdaterInquiryCompleted')
      .map((event) => event.data.outcome);
    expect(outcomes).toEqual(['updated_expiry', 'not_answered']);
  });

  it('leave no card number in any event or account updater table', async () => {
    const expiry = paymentMethods.add(pm(50));
    const number = paymentMethods.add(pm(51), { card: { number: PAN_NEW_NUMBER, expirationDate: '11/25' } });
    await schedule([expiry, number]);
    await slice.poll();
    updater.answer();
    await slice.poll();
    const text = await allStoredText();
    expect(text).toContain('AccountUpdaterJobCompleted');
    for (const secret of [PAN, PAN_NEW_NUMBER, REPLACEMENT]) expect(text).not.toContain(secret);
  });
});
