import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AccountUpdaterJobResults, AccountUpdaterService } from '../account-updater';
import { ConnectorRequestRejectedError, ConnectorUnavailableError } from '../connector-errors';
import { SimulatorAccountUpdaterService } from './simulator-account-updater-service';
import { accountUpdaterExamplePans, replacementNumber } from './simulator-account-updater-values';
import { newReference, startSimulatorHarness, type SimulatorHarness } from './simulator.harness';

/** Long enough to see `pending` first; the specs wait for completion with a bounded poll. */
const DELAY_MS = 150;

let harness: SimulatorHarness;
let updater: AccountUpdaterService;

beforeAll(async () => {
  harness = await startSimulatorHarness({ accountUpdaterDelayMs: DELAY_MS });
  updater = new SimulatorAccountUpdaterService({
    baseUrl: harness.simulator.url,
    merchantId: 'updater-1',
    timeoutMs: 2_000,
  });
});

afterAll(() => harness.stop());

const [expiryPan, numberPan, closedPan, contactPan] = [
  accountUpdaterExamplePans.updated_expiry[0]!,
  accountUpdaterExamplePans.updated_number[1]!,
  accountUpdaterExamplePans.closed[2]!,
  accountUpdaterExamplePans.contact_cardholder[3]!,
];
const unchangedPan = accountUpdaterExamplePans.no_change[0]!;

async function completed(providerJobId: string): Promise<Extract<AccountUpdaterJobResults, { status: 'completed' }>> {
  const deadline = Date.now() + 3_000;
  for (;;) {
    const results = await updater.results(providerJobId);
    if (results.status === 'completed') return results;
    if (Date.now() > deadline) throw new Error(`job ${providerJobId} still pending`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a job', () => {
  it('is pending at first, then answers every card by its last four digits', async () => {
    const { providerJobId } = await updater.submit({
      reference: newReference(),
      inquiries: [
        { reference: 'i-expiry', card: { number: expiryPan, expirationDate: '11/25' } },
        { reference: 'i-number', card: { number: numberPan, expirationDate: '02/26' } },
        { reference: 'i-closed', card: { number: closedPan, expirationDate: '03/27' } },
        { reference: 'i-contact', card: { number: contactPan, expirationDate: '04/28' } },
        { reference: 'i-none', card: { number: unchangedPan, expirationDate: '05/29' } },
      ],
    });
    expect(await updater.results(providerJobId)).toEqual({ status: 'pending' });

    const { results } = await completed(providerJobId);
    expect(results).toEqual([
      { reference: 'i-expiry', outcome: 'updated_expiry', expirationDate: '11/28' },
      {
        reference: 'i-number',
        outcome: 'updated_number',
        number: replacementNumber(numberPan),
        expirationDate: '02/29',
      },
      { reference: 'i-closed', outcome: 'closed' },
      { reference: 'i-contact', outcome: 'contact_cardholder' },
      { reference: 'i-none', outcome: 'no_change' },
    ]);
    expect(results[1]!.number!.slice(0, 6)).toBe(numberPan.slice(0, 6));
  });

  it('is the same job when its reference is submitted again: nothing is scheduled twice', async () => {
    const reference = newReference();
    const first = await updater.submit({
      reference,
      inquiries: [{ reference: 'a', card: { number: expiryPan, expirationDate: '11/25' } }],
    });
    const again = await updater.submit({
      reference,
      inquiries: [{ reference: 'a', card: { number: expiryPan, expirationDate: '11/25' } }],
    });
    expect(again.providerJobId).toBe(first.providerJobId);
    const other = await updater.submit({
      reference: newReference(),
      inquiries: [{ reference: 'a', card: { number: expiryPan, expirationDate: '11/25' } }],
    });
    expect(other.providerJobId).not.toBe(first.providerJobId);
  });
});

describe('refusals', () => {
  it.each([
    ['no inquiries', { reference: 'r', inquiries: [] }, /inquiries must hold 1 to 1000/],
    [
      '1,001 inquiries',
      {
        reference: 'r',
        inquiries: Array.from({ length: 1001 }, (_, i) => ({
          reference: `i${i}`,
          card: { number: unchangedPan, expiration_date: '01/30' },
        })),
      },
      /1 to 1000/,
    ],
    [
      'a short number',
      { reference: 'r', inquiries: [{ reference: 'i', card: { number: '41111111', expiration_date: '01/30' } }] },
      /inquiries\[0\]\.card\.number/,
    ],
    [
      'a bad expiry',
      { reference: 'r', inquiries: [{ reference: 'i', card: { number: unchangedPan, expiration_date: '13/30' } }] },
      /expiration_date must be MM\/YY/,
    ],
    [
      'a repeated inquiry reference',
      {
        reference: 'r',
        inquiries: [1, 2].map(() => ({ reference: 'i', card: { number: unchangedPan, expiration_date: '01/30' } })),
      },
      /repeats/,
    ],
  ])('%s → 400 naming the field, never the card number', async (_, body, message) => {
    const response = await fetch(`${harness.simulator.url}/v1/account-updater/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({
      error: 'invalid_request',
      message: expect.stringMatching(message) as string,
    });
    expect(text).not.toContain(unchangedPan);
  });

  it('an unknown job → ConnectorRequestRejectedError (404)', async () => {
    await expect(updater.results('sim_au_job_nope')).rejects.toMatchObject({
      name: 'ConnectorRequestRejectedError',
      status: 404,
    });
  });

  it('an outage of its merchant id → a retriable ConnectorUnavailableError, and nothing recorded', async () => {
    harness.simulator.setOutage('updater-1', true);
    const reference = newReference();
    try {
      const failure = await updater
        .submit({ reference, inquiries: [{ reference: 'a', card: { number: closedPan, expirationDate: '01/30' } }] })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ConnectorUnavailableError);
      expect(failure).toMatchObject({ retriable: true, status: 503 });
    } finally {
      harness.simulator.setOutage('updater-1', false);
    }
    // Back up: the same reference makes a new job (the refused one was never recorded), answered as usual.
    const { providerJobId } = await updater.submit({
      reference,
      inquiries: [{ reference: 'a', card: { number: closedPan, expirationDate: '01/30' } }],
    });
    expect((await completed(providerJobId)).results).toEqual([{ reference: 'a', outcome: 'closed' }]);
  });

  it('an unreachable updater → a retriable ConnectorUnavailableError', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const nowhere = new SimulatorAccountUpdaterService({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 500 });
    await expect(
      nowhere.submit({
        reference: 'r',
        inquiries: [{ reference: 'a', card: { number: unchangedPan, expirationDate: '01/30' } }],
      }),
    ).rejects.toMatchObject({
      name: 'ConnectorUnavailableError',
      retriable: true,
    });
    await expect(nowhere.results('x')).rejects.toBeInstanceOf(ConnectorUnavailableError);
  });

  it('an answer without a job → ConnectorRequestRejectedError', async () => {
    const liar = createServer((_, response) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
    );
    await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', resolve));
    try {
      const broken = new SimulatorAccountUpdaterService({
        baseUrl: `http://127.0.0.1:${(liar.address() as AddressInfo).port}`,
        timeoutMs: 1_000,
      });
      await expect(broken.results('x')).rejects.toBeInstanceOf(ConnectorRequestRejectedError);
    } finally {
      liar.closeAllConnections();
      await new Promise<void>((resolve) => liar.close(() => resolve()));
    }
  });
});
