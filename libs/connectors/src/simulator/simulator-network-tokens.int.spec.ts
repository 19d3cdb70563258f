/**
 * The simulator's token service through `SimulatorTokenServiceProvider`, over real HTTP: provisioning (Luhn-valid
 * token with the card's scheme prefix, the card's expiry or 3 years more, idempotent by reference), the refusals of
 * docs/simulator.md "Network tokens", suspend / resume / delete, cryptograms, infrastructure errors, and card
 * authorizations made with a token the service issued.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { ConnectorRequestRejectedError, ConnectorUnavailableError } from '../connector-errors';
import type { TokenProvisionRequest, TokenProvisionResult } from '../network-tokens';
import { passesLuhn } from './simulator-network-tokens';
import { SimulatorTokenServiceProvider } from './simulator-token-service-provider';
import { newReference, startSimulatorHarness, type SimulatorHarness } from './simulator.harness';

let harness: SimulatorHarness;
let tsp: SimulatorTokenServiceProvider;

beforeAll(async () => {
  harness = await startSimulatorHarness();
  tsp = new SimulatorTokenServiceProvider({ baseUrl: harness.simulator.url, timeoutMs: 2_000 });
});

afterAll(() => harness.stop());

const VISA = '4111111111111111';
const MASTERCARD = '5555555555554444';
const AMEX = '378282246310005';
const DISCOVER = '6011111111111117';

function provisionRequest(number: string, overrides: Partial<TokenProvisionRequest> = {}): TokenProvisionRequest {
  return {
    reference: randomUUID(),
    card: { number, expirationDate: '11/30' },
    scheme: 'visa',
    merchantInitiated: false,
    isSubsequentPayment: false,
    ...overrides,
  };
}

async function provisioned(
  number = VISA,
  overrides: Partial<TokenProvisionRequest> = {},
): Promise<Extract<TokenProvisionResult, { outcome: 'succeeded' }>> {
  const result = await tsp.provision(provisionRequest(number, overrides));
  if (result.outcome !== 'succeeded') throw new Error(`refused: ${result.errorCode}`);
  return result;
}

describe('provision', () => {
  it.each([
    [VISA, 'visa', '4111'],
    [MASTERCARD, 'mastercard', '5555'],
    [AMEX, 'amex', '3782'],
  ])(
    'issues an active Luhn-valid token for %s (%s) with the card scheme prefix and length, never the card',
    async (number, scheme, prefix) => {
      const result = await provisioned(number, { scheme });
      expect(result).toMatchObject({ outcome: 'succeeded', status: 'active', expirationDate: '11/30' });
      expect(result.token).toMatch(new RegExp(`^${prefix}\\d{${number.length - 4}}$`));
      expect(passesLuhn(result.token)).toBe(true);
      expect(result.token).not.toBe(number);
      expect(result.providerTokenId).toMatch(/^sim_ntk_/);
      expect(result.paymentAccountReference).toMatch(/^V001[0-9A-F]{25}$/);
    },
  );

  it('gives every token of one card the same payment account reference, and a different token number', async () => {
    const [a, b] = [await provisioned(), await provisioned()];
    expect(a.paymentAccountReference).toBe(b.paymentAccountReference);
    expect(a.token).not.toBe(b.token);
    expect((await provisioned(MASTERCARD, { scheme: 'mastercard' })).paymentAccountReference).not.toBe(
      a.paymentAccountReference,
    );
  });

  it('gives a card ending in 0003 a token expiring 3 years after it', async () => {
    expect(
      await provisioned('4000000000000003', { card: { number: '4000000000000003', expirationDate: '04/29' } }),
    ).toMatchObject({ expirationDate: '04/32' });
  });

  it('answers a repeated reference with the same token; the reference with another card is a 409', async () => {
    const request = provisionRequest(VISA);
    const first = await tsp.provision(request);
    expect(await tsp.provision(request)).toEqual(first);
    await expect(
      tsp.provision({ ...request, card: { number: MASTERCARD, expirationDate: '11/30' } }),
    ).rejects.toMatchObject({ status: 409 });
  });

  it('refuses a card ending in 0002 (card_not_eligible) and an unsupported scheme', async () => {
    expect(await tsp.provision(provisionRequest('4000000000000002'))).toEqual({
      outcome: 'failed',
      errorCode: 'card_not_eligible',
      message: expect.any(String) as string,
    });
    expect(await tsp.provision(provisionRequest('3530111333300000', { scheme: 'jcb' }))).toMatchObject({
      outcome: 'failed',
      errorCode: 'unsupported_card_scheme',
    });
  });

  it.each([
    ['6011…', DISCOVER],
    ['65…', '6500000000000004'],
    ['644…', '6440000000000008'],
  ])(
    'refuses Discover (%s) without both the requestor id and the app id, and provisions it with them',
    async (_, number) => {
      expect(await tsp.provision(provisionRequest(number, { scheme: 'discover' }))).toMatchObject({
        outcome: 'failed',
        errorCode: 'missing_requestor_id',
      });
      expect(
        await tsp.provision(provisionRequest(number, { scheme: 'discover', requestorId: 'disc-req' })),
      ).toMatchObject({ outcome: 'failed', errorCode: 'missing_requestor_id' });
      const result = await provisioned(number, { scheme: 'discover', requestorId: 'disc-req', appId: 'disc-app' });
      expect(result.token.slice(0, 4)).toBe(number.slice(0, 4));
    },
  );

  it('rejects a malformed request (400) as ConnectorRequestRejectedError', async () => {
    const error = await tsp.provision(provisionRequest('41111')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectorRequestRejectedError);
    expect(error).toMatchObject({ status: 400 });
  });
});

describe('suspend, resume, delete', () => {
  it('moves active → suspended → active → deleted; each again answers the same; a deleted token is final', async () => {
    const { providerTokenId } = await provisioned();
    expect(await tsp.suspend(providerTokenId)).toBe('suspended');
    expect(await tsp.suspend(providerTokenId)).toBe('suspended');
    expect(await tsp.resume(providerTokenId)).toBe('active');
    expect(await tsp.resume(providerTokenId)).toBe('active');
    expect(await tsp.delete(providerTokenId)).toBe('deleted');
    expect(await tsp.delete(providerTokenId)).toBe('deleted');
    await expect(tsp.resume(providerTokenId)).rejects.toMatchObject({
      type: 'connector_request_rejected',
      status: 409,
    });
    await expect(tsp.suspend(providerTokenId)).rejects.toMatchObject({ status: 409 });
  });

  it('rejects an unknown token (404)', async () => {
    await expect(tsp.suspend('sim_ntk_unknown')).rejects.toMatchObject({
      type: 'connector_request_rejected',
      status: 404,
    });
  });
});

describe('cryptogram', () => {
  it('issues 28 base64 characters, fresh each call, with the ECI by initiator and scheme', async () => {
    const visa = await provisioned();
    const first = await tsp.cryptogram(visa.providerTokenId, { merchantInitiated: false });
    const second = await tsp.cryptogram(visa.providerTokenId, { merchantInitiated: false });
    expect(first).toMatchObject({ outcome: 'succeeded', eci: '05' });
    expect(
      second.outcome === 'succeeded' && first.outcome === 'succeeded' && second.cryptogram !== first.cryptogram,
    ).toBe(true);
    if (first.outcome !== 'succeeded') throw new Error('no cryptogram');
    expect(first.cryptogram).toMatch(/^[A-Za-z0-9+/]{27}=$/);
    expect(Buffer.from(first.cryptogram, 'base64')).toHaveLength(20);
    expect(await tsp.cryptogram(visa.providerTokenId, { merchantInitiated: true })).toMatchObject({ eci: '07' });
    const mastercard = await provisioned(MASTERCARD, { scheme: 'mastercard' });
    expect(await tsp.cryptogram(mastercard.providerTokenId, { merchantInitiated: false })).toMatchObject({ eci: '02' });
  });

  it('gives none for a suspended or deleted token (token_not_active)', async () => {
    const { providerTokenId } = await provisioned();
    await tsp.suspend(providerTokenId);
    expect(await tsp.cryptogram(providerTokenId, { merchantInitiated: false })).toMatchObject({
      outcome: 'failed',
      errorCode: 'token_not_active',
    });
    await tsp.delete(providerTokenId);
    expect(await tsp.cryptogram(providerTokenId, { merchantInitiated: false })).toMatchObject({
      outcome: 'failed',
      errorCode: 'token_not_active',
    });
  });
});

describe('infrastructure', () => {
  it('throws a retriable ConnectorUnavailableError when unreachable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await new SimulatorTokenServiceProvider({ baseUrl: `http://127.0.0.1:${port}` })
      .provision(provisionRequest(VISA))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectorUnavailableError);
    expect(error).toMatchObject({ retriable: true, timedOut: false });
  });

  it('throws a retriable, timed-out ConnectorUnavailableError when no answer comes in time', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as AddressInfo).port;
      const error = await new SimulatorTokenServiceProvider({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 100 })
        .cryptogram('sim_ntk_1', { merchantInitiated: false })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectorUnavailableError);
      expect(error).toMatchObject({ retriable: true, timedOut: true });
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe('authorizations with a token the service issued', () => {
  const authorize = async (
    networkToken: { token: string; expirationDate: string; cryptogram?: string },
    amount = 1299,
    reference = newReference(),
  ) =>
    harness.connect().authorize({
      reference,
      amount,
      currency: 'USD',
      paymentInstrument: { type: 'network-token', networkToken },
      capture: false,
    });

  it("answers by the card's rules (amount table) and records the use on the token", async () => {
    const token = await provisioned();
    const cryptogram = await tsp.cryptogram(token.providerTokenId, { merchantInitiated: false });
    if (cryptogram.outcome !== 'succeeded') throw new Error('no cryptogram');
    const reference = newReference();
    expect(
      await authorize(
        { token: token.token, expirationDate: token.expirationDate, cryptogram: cryptogram.cryptogram },
        1299,
        reference,
      ),
    ).toMatchObject({
      outcome: 'succeeded',
      cvvResponseCode: 'not_provided',
    });
    expect(await authorize({ token: token.token, expirationDate: token.expirationDate }, 200011)).toMatchObject({
      outcome: 'declined',
      errorCode: 'insufficient_funds',
    });
    expect(harness.simulator.ledger.networkTokens.get(token.providerTokenId)?.authorizations[0]).toBe(reference);
  });

  it('declines a suspended token, a deleted one, another expiry, and a cryptogram the service never issued', async () => {
    const token = await provisioned();
    const use = { token: token.token, expirationDate: token.expirationDate };
    expect(await authorize({ ...use, expirationDate: '12/31' })).toMatchObject({
      outcome: 'declined',
      errorCode: 'incorrect_expiry_date',
    });
    expect(await authorize({ ...use, cryptogram: Buffer.alloc(20, 1).toString('base64') })).toMatchObject({
      outcome: 'declined',
      errorCode: 'suspected_fraud',
    });
    await tsp.suspend(token.providerTokenId);
    expect(await authorize(use)).toMatchObject({ outcome: 'declined', errorCode: 'unavailable_payment_method' });
    await tsp.delete(token.providerTokenId);
    expect(await authorize(use)).toMatchObject({ outcome: 'declined', errorCode: 'canceled_payment_method' });
  });

  it('keeps the amount table alone for a token it never issued', async () => {
    expect(
      await authorize({
        token: '4895370000000013',
        expirationDate: '01/31',
        cryptogram: 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=',
      }),
    ).toMatchObject({ outcome: 'succeeded' });
    expect(await authorize({ token: '4895370000000013', expirationDate: '01/31' }, 200012)).toMatchObject({
      outcome: 'declined',
      errorCode: 'issuer_decline',
    });
  });
});
