import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConnectorRequestRejectedError, ConnectorUnavailableError } from '../connector-errors';
import type { GiftCardConnector } from '../gift-card';
import { giftCardServiceRegistry } from '../index';
import { mockGiftCardDefinition } from './mock-gift-card-definition';
import type { RunningSimulator } from './simulator-server';
import { giftCardErrorSuffixes } from './simulator-values';
import type { WireGiftCardLedgerCard } from './simulator-wire';
import { newReference, startSimulatorHarness, type SimulatorHarness } from './simulator.harness';

let harness: SimulatorHarness;
let simulator: RunningSimulator;
let giftCards: GiftCardConnector;

beforeAll(async () => {
  harness = await startSimulatorHarness();
  simulator = harness.simulator;
  giftCards = mockGiftCardDefinition.create({ baseUrl: simulator.url, merchantId: 'merchant-1', timeoutMs: 2_000 });
});

afterAll(() => harness.stop());

let nextNumber = 1;
/** A card number no other test uses: 16 digits, never ending in 0000. */
const newNumber = (): string => `6${String(nextNumber++).padStart(11, '0')}1234`;

async function ledgerOf(number: string): Promise<WireGiftCardLedgerCard> {
  const response = await fetch(`${simulator.url}/v1/gift-cards/cards/${number}`);
  expect(response.status).toBe(200);
  return (await response.json()) as WireGiftCardLedgerCard;
}

function redeem(number: string, pin: string | undefined, amount: number, reference = newReference(), currency = 'USD') {
  return giftCards.redeem({ reference, card: { number, ...(pin !== undefined && { pin }) }, amount, currency });
}

describe('balance: the PIN decides a card first seen', () => {
  it('holds the PIN read as an integer, in US dollars, without expiry', async () => {
    expect(await giftCards.balance({ number: newNumber(), pin: '01000' })).toEqual({
      outcome: 'succeeded',
      balance: 1000,
      currency: 'USD',
      expiresAt: null,
    });
  });

  it.each(Object.entries(giftCardErrorSuffixes))('validation error PIN 1%s → %s', async (suffix, errorCode) => {
    const result = await giftCards.balance({ number: newNumber(), pin: `1${suffix}` });
    expect(result).toEqual({
      outcome: 'failed',
      errorCode,
      rawErrorCode: `1${suffix}`,
      rawErrorMessage: expect.stringMatching(/^Validation error: /) as string,
    });
  });

  it.each([
    ['20009', 'service_error', 'Server error'],
    ['20010', 'service_network_error', 'Server error'],
    ['30003', 'invalid_service_credentials', 'Client error'],
    ['30007', 'invalid_service_configuration', 'Client error'],
    ['19999', 'unknown_error', 'Validation error'],
  ])('PIN %s → %s (%s)', async (pin, errorCode, category) => {
    const result = await giftCards.balance({ number: newNumber(), pin });
    expect(result).toMatchObject({
      outcome: 'failed',
      errorCode,
      rawErrorCode: pin,
      rawErrorMessage: expect.stringContaining(`${category}: `) as string,
    });
  });

  it('answers expired_card for a number ending in 0000, whatever its PIN, and records no card', async () => {
    const number = '6000000000010000';
    expect(await giftCards.balance({ number, pin: '01000' })).toMatchObject({
      outcome: 'failed',
      errorCode: 'expired_card',
      rawErrorCode: '10001',
    });
    expect((await fetch(`${simulator.url}/v1/gift-cards/cards/${number}`)).status).toBe(404);
  });

  it('keeps a known card: its ledger balance, and invalid_gift_card for another PIN', async () => {
    const number = newNumber();
    await redeem(number, '01000', 400);
    expect(await giftCards.balance({ number, pin: '01000' })).toMatchObject({ outcome: 'succeeded', balance: 600 });
    expect(await giftCards.balance({ number, pin: '02000' })).toMatchObject({
      outcome: 'failed',
      errorCode: 'invalid_gift_card',
    });
    expect(await giftCards.balance({ number })).toMatchObject({ outcome: 'failed', errorCode: 'invalid_gift_card' });
  });

  it('answers invalid_gift_card for a number that is not 16 to 19 digits', async () => {
    expect(await giftCards.balance({ number: '12345', pin: '01000' })).toMatchObject({
      outcome: 'failed',
      errorCode: 'invalid_gift_card',
    });
  });
});

describe('issue and activate', () => {
  it('issues a virtual card worth the amount (not its PIN), once per reference', async () => {
    const request = { reference: newReference(), theme: 'birthday', amount: 2500, currency: 'EUR' };
    const issued = await giftCards.issue(request);
    if (issued.outcome !== 'succeeded') throw new Error('not issued');
    expect(issued).toMatchObject({ balance: 2500, currency: 'EUR', expiresAt: null });
    expect(issued.number).toMatch(/^\d{16,19}$/);
    expect(issued.number).not.toMatch(/0000$/);
    expect(issued.pin).toMatch(/^0\d+$/);
    expect(await giftCards.balance({ number: issued.number, pin: issued.pin })).toEqual({
      outcome: 'succeeded',
      balance: 2500,
      currency: 'EUR',
      expiresAt: null,
    });
    expect(await giftCards.issue(request)).toEqual(issued);
  });

  it('activates a card by adding the amount, once per reference; another currency is incorrect_currency', async () => {
    const card = { number: newNumber(), pin: '00500' };
    const request = { reference: newReference(), card, amount: 1000, currency: 'USD' };
    expect(await giftCards.activate(request)).toEqual({
      outcome: 'succeeded',
      balance: 1500,
      currency: 'USD',
      expiresAt: null,
    });
    expect(await giftCards.activate(request)).toMatchObject({ outcome: 'succeeded', balance: 1500 });
    expect(await giftCards.balance(card)).toMatchObject({ balance: 1500 });
    expect(await giftCards.activate({ reference: newReference(), card, amount: 100, currency: 'EUR' })).toMatchObject({
      outcome: 'failed',
      errorCode: 'incorrect_currency',
    });
  });

  it('activates a card first seen without a PIN at 0 in the request currency, and without an amount leaves it', async () => {
    const card = { number: newNumber() };
    expect(await giftCards.activate({ reference: newReference(), card, amount: 700, currency: 'GBP' })).toMatchObject({
      balance: 700,
      currency: 'GBP',
    });
    expect(await giftCards.activate({ reference: newReference(), card, currency: 'GBP' })).toMatchObject({
      balance: 700,
    });
  });
});

describe('redemptions', () => {
  it('debits once per reference and answers the same again; other values under that reference are refused', async () => {
    const number = newNumber();
    const reference = newReference();
    const first = await redeem(number, '05000', 1200, reference);
    expect(first).toEqual({
      outcome: 'succeeded',
      providerRedemptionId: expect.stringMatching(/^sim_gcr_/) as string,
      balance: 3800,
    });
    expect(await redeem(number, '05000', 1200, reference)).toEqual(first);
    const ledger = await ledgerOf(number);
    expect(ledger).toMatchObject({ number, balance: 3800, currency: 'USD' });
    expect(ledger.redemptions).toHaveLength(1);
    const conflict = await redeem(number, '05000', 1300, reference).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ConnectorRequestRejectedError);
    expect(conflict).toMatchObject({ status: 409 });
  });

  it('answers insufficient_funds and records the failed redemption; incorrect_currency likewise', async () => {
    const number = newNumber();
    const reference = newReference();
    expect(await redeem(number, '00100', 200, reference)).toMatchObject({
      outcome: 'failed',
      errorCode: 'insufficient_funds',
      rawErrorCode: '10006',
    });
    expect(await redeem(number, '00100', 50, newReference(), 'EUR')).toMatchObject({
      outcome: 'failed',
      errorCode: 'incorrect_currency',
    });
    const ledger = await ledgerOf(number);
    expect(ledger.balance).toBe(100);
    expect(ledger.redemptions[0]).toEqual({
      reference,
      redemption_id: null,
      amount: 200,
      currency: 'USD',
      status: 'failed',
      refunded_amount: 0,
      refunds: [],
    });
    expect(ledger.redemptions[1]).toMatchObject({ status: 'failed', currency: 'EUR' });
  });

  it('answers the PIN rules, and invalid_gift_card for a known card with another PIN', async () => {
    expect(await redeem(newNumber(), '20009', 100)).toMatchObject({ outcome: 'failed', errorCode: 'service_error' });
    const number = newNumber();
    await giftCards.balance({ number, pin: '01000' });
    expect(await redeem(number, '01001', 100)).toMatchObject({ outcome: 'failed', errorCode: 'invalid_gift_card' });
    expect((await ledgerOf(number)).balance).toBe(1000);
  });

  it('rejects a malformed request (400)', async () => {
    await expect(redeem(newNumber(), '01000', 0)).rejects.toMatchObject({
      type: 'connector_request_rejected',
      status: 400,
    });
  });
});

describe('reversals', () => {
  it('puts the whole redemption back, and answers the same again without moving money', async () => {
    const number = newNumber();
    const reference = newReference();
    expect(await redeem(number, '01000', 700, reference)).toMatchObject({ balance: 300 });
    expect(await giftCards.reverse({ reference })).toEqual({ outcome: 'succeeded', reversed: true });
    expect(await giftCards.reverse({ reference })).toEqual({ outcome: 'succeeded', reversed: true });
    const ledger = await ledgerOf(number);
    expect(ledger.balance).toBe(1000);
    expect(ledger.redemptions).toEqual([expect.objectContaining({ reference, status: 'reversed', amount: 700 })]);
  });

  it('reverses nothing for a reference never redeemed, and refuses a redemption arriving later with it', async () => {
    const number = newNumber();
    const reference = newReference();
    await giftCards.balance({ number, pin: '01000' });
    expect(await giftCards.reverse({ reference })).toEqual({ outcome: 'succeeded', reversed: false });
    expect(await redeem(number, '01000', 300, reference)).toMatchObject({
      outcome: 'failed',
      errorCode: 'operation_canceled',
      rawErrorCode: '10008',
    });
    expect(await giftCards.reverse({ reference })).toEqual({ outcome: 'succeeded', reversed: false });
    const ledger = await ledgerOf(number);
    expect(ledger.balance).toBe(1000);
    expect(ledger.redemptions).toEqual([expect.objectContaining({ reference, status: 'failed', redemption_id: null })]);
  });

  it('reverses nothing for a failed redemption', async () => {
    const reference = newReference();
    await redeem(newNumber(), '00100', 500, reference);
    expect(await giftCards.reverse({ reference })).toEqual({ outcome: 'succeeded', reversed: false });
  });
});

describe('refunds', () => {
  it('refunds part, then refuses more than the rest (invalid_amount), once per refund reference; the balance ends where it started', async () => {
    const number = newNumber();
    const redemptionReference = newReference();
    await redeem(number, '02000', 1000, redemptionReference);
    const partial = { reference: newReference(), redemptionReference, amount: 400, currency: 'USD' };
    const refunded = await giftCards.refund(partial);
    expect(refunded).toEqual({ outcome: 'succeeded', providerRefundId: expect.stringMatching(/^sim_gcf_/) as string });
    expect(await giftCards.refund(partial)).toEqual(refunded);
    expect((await ledgerOf(number)).balance).toBe(1400);

    expect(await giftCards.refund({ ...partial, reference: newReference(), amount: 700 })).toMatchObject({
      outcome: 'failed',
      errorCode: 'invalid_amount',
    });
    expect(
      await giftCards.refund({ ...partial, reference: newReference(), amount: 600, currency: 'EUR' }),
    ).toMatchObject({ outcome: 'failed', errorCode: 'incorrect_currency' });
    expect(await giftCards.refund({ ...partial, reference: newReference(), amount: 600 })).toMatchObject({
      outcome: 'succeeded',
    });

    const ledger = await ledgerOf(number);
    expect(ledger.balance).toBe(2000);
    expect(ledger.redemptions[0]).toMatchObject({ status: 'succeeded', amount: 1000, refunded_amount: 1000 });
    expect(ledger.redemptions[0]?.refunds.map((r) => r.amount)).toEqual([400, 600]);
    expect(simulator.giftCard(number)).toEqual(ledger);
  });

  it('reverses only what a partly refunded redemption still holds', async () => {
    const number = newNumber();
    const redemptionReference = newReference();
    await redeem(number, '01000', 800, redemptionReference);
    await giftCards.refund({ reference: newReference(), redemptionReference, amount: 300, currency: 'USD' });
    expect(await giftCards.reverse({ reference: redemptionReference })).toMatchObject({ reversed: true });
    expect((await ledgerOf(number)).balance).toBe(1000);
    expect(
      await giftCards.refund({ reference: newReference(), redemptionReference, amount: 1, currency: 'USD' }),
    ).toMatchObject({ errorCode: 'invalid_amount' });
  });

  it('rejects a refund of a redemption the provider does not know (404)', async () => {
    await expect(
      giftCards.refund({
        reference: newReference(),
        redemptionReference: newReference(),
        amount: 100,
        currency: 'USD',
      }),
    ).rejects.toMatchObject({
      type: 'connector_request_rejected',
      status: 404,
    });
  });
});

describe('the provider ledger, outages and errors', () => {
  it('answers 404 for a card never seen', async () => {
    expect((await fetch(`${simulator.url}/v1/gift-cards/cards/${newNumber()}`)).status).toBe(404);
    expect(simulator.giftCard(newNumber())).toBeUndefined();
  });

  it('answers 503 during an outage of the merchant id and records nothing; the ledger still answers', async () => {
    const down = mockGiftCardDefinition.create({
      baseUrl: simulator.url,
      merchantId: 'gift-merchant-down',
      timeoutMs: 2_000,
    });
    const number = newNumber();
    await giftCards.balance({ number, pin: '01000' });
    simulator.setOutage('gift-merchant-down', true);
    try {
      const error = await down
        .redeem({ reference: newReference(), card: { number, pin: '01000' }, amount: 100, currency: 'USD' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectorUnavailableError);
      expect(error).toMatchObject({ retriable: true, status: 503 });
      expect(
        await giftCards.redeem({
          reference: newReference(),
          card: { number, pin: '01000' },
          amount: 100,
          currency: 'USD',
        }),
      ).toMatchObject({ balance: 900 });
      expect(await ledgerOf(number)).toMatchObject({ balance: 900, redemptions: [expect.anything()] });
    } finally {
      simulator.setOutage('gift-merchant-down', false);
    }
  });

  it('throws a retriable ConnectorUnavailableError when the simulator is unreachable', async () => {
    const url = await withServer(undefined);
    const error = await mockGiftCardDefinition
      .create({ baseUrl: url, merchantId: 'merchant-1' })
      .balance({ number: newNumber(), pin: '01000' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectorUnavailableError);
    expect(error).toMatchObject({ retriable: true });
  });

  it('throws ConnectorRequestRejectedError for an answer that breaks the protocol', async () => {
    const url = await withServer((_request, response) =>
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: 'succeeded', balance: '12' })),
    );
    const error = await mockGiftCardDefinition
      .create({ baseUrl: url, merchantId: 'merchant-1' })
      .balance({ number: newNumber(), pin: '01000' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectorRequestRejectedError);
    expect(error).toMatchObject({ message: expect.stringContaining('balance (number)') as string });
  });

  it('is registered as mock-gift-card', () => {
    expect(giftCardServiceRegistry.get('mock-gift-card')).toMatchObject({
      id: 'mock-gift-card',
      displayName: 'Gift card simulator',
    });
    expect(giftCardServiceRegistry.list().map((d) => d.id)).toEqual(['mock-gift-card']);
    expect(giftCards.definitionId).toBe('mock-gift-card');
  });
});

/** A server answering with `listener` (closed after the test file), or, without one, a port nobody listens on. */
async function withServer(listener: RequestListener | undefined): Promise<string> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  if (listener === undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  else afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return url;
}
