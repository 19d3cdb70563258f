import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConnectorRequestRejectedError, ConnectorUnavailableError } from '../connector-errors';
import type { ThreeDSecureAuthenticationRequest } from '../three-d-secure';
import { SimulatorDirectoryServer } from './simulator-directory-server';
import { threeDSecureReferenceCards } from './simulator-values';
import { newReference, startSimulatorHarness, submitForm, type SimulatorHarness } from './simulator.harness';

let harness: SimulatorHarness;
let directory: SimulatorDirectoryServer;

beforeAll(async () => {
  harness = await startSimulatorHarness();
  directory = new SimulatorDirectoryServer({ baseUrl: harness.simulator.url, timeoutMs: 2_000 });
});

afterAll(() => harness.stop());

const returnUrl = 'https://switchyard.example/3ds/return?transaction=t-1';

function authentication(
  number: string,
  overrides: Partial<ThreeDSecureAuthenticationRequest> = {},
): ThreeDSecureAuthenticationRequest {
  return {
    reference: newReference(),
    amount: 1299,
    currency: 'USD',
    card: { number, expirationDate: '11/30' },
    merchant: {
      acquirerBin: '411111',
      acquirerMerchantId: 'acq-1',
      name: 'Shop <&> Co',
      countryCode: 'US',
      categoryCode: '5732',
      url: 'https://shop.example',
    },
    returnUrl,
    ...overrides,
  };
}

const cardsWith = (status: 'Y' | 'C') =>
  Object.entries(threeDSecureReferenceCards)
    .filter(([, s]) => s === status)
    .map(([number]) => number);
const isMastercard = (number: string) => /^[25]/.test(number);

describe('frictionless', () => {
  it.each(cardsWith('Y'))('reference card %s → Y with an ECI by scheme and a CAVV', async (number) => {
    const result = await directory.authenticate(authentication(number));
    expect(result).toMatchObject({
      transactionStatus: 'Y',
      method: 'frictionless',
      version: '2.2.0',
      eci: isMastercard(number) ? '02' : '05',
    });
    expect(Buffer.from(result.cavv!, 'base64')).toHaveLength(20);
    expect(result.directoryServerTransactionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result).not.toHaveProperty('challengeUrl');
    expect(result).not.toHaveProperty('statusReason');
  });

  it('authenticates any other card (Y)', async () => {
    expect(await directory.authenticate(authentication('4000000000000002'))).toMatchObject({
      transactionStatus: 'Y',
      eci: '05',
    });
  });

  it.each([
    ['5555555555551004', 'N', '01'],
    ['4000000000001005', 'U', '08'],
    ['4000000000001006', 'R', '11'],
  ])('our card %s → %s, reason %s, no ECI or CAVV', async (number, transactionStatus, statusReason) => {
    const result = await directory.authenticate(authentication(number));
    expect(result).toMatchObject({ transactionStatus, statusReason, method: 'frictionless', version: '2.2.0' });
    expect(result).not.toHaveProperty('eci');
    expect(result).not.toHaveProperty('cavv');
  });

  it('answers a repeated request for the same reference with the same authentication; another card is a conflict', async () => {
    const request = authentication('4111111111101203');
    const first = await directory.authenticate(request);
    expect(await directory.authenticate(request)).toEqual(first);
    await expect(
      directory.authenticate({ ...request, card: { number: '5200000000001203', expirationDate: '11/30' } }),
    ).rejects.toMatchObject({ status: 409 });
  });
});

describe('challenge', () => {
  it.each(cardsWith('C'))(
    'reference card %s → C with the challenge URL; result() stays C while outstanding',
    async (number) => {
      const started = await directory.authenticate(authentication(number));
      expect(started).toMatchObject({
        transactionStatus: 'C',
        method: 'challenge',
        challengeUrl: `${harness.simulator.url}/v1/3ds/challenges/${started.authenticationId}`,
      });
      expect(started).not.toHaveProperty('eci');
      expect(await directory.result(started.authenticationId)).toEqual(started);
    },
  );

  it('walks the page: Authenticate → 303 back to the return URL, then Y with ECI and CAVV', async () => {
    const started = await directory.authenticate(authentication('5240000000001072'));
    const page = await fetch(started.challengeUrl!);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const body = await page.text();
    expect(body).toContain('12.99 USD');
    expect(body).toContain('Shop &#60;&#38;&#62; Co');
    expect(body).toContain(`<form method="post" action="/v1/3ds/challenges/${started.authenticationId}">`);
    expect(body).toMatch(/name="result" value="Y">Authenticate</);
    expect(body).toMatch(/name="result" value="N">Fail authentication</);

    const answer = await submitForm(started.challengeUrl!, { result: 'Y' });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(`${returnUrl}&authentication_id=${started.authenticationId}`);
    const result = await directory.result(started.authenticationId);
    expect(result).toMatchObject({
      transactionStatus: 'Y',
      method: 'challenge',
      eci: '02',
      directoryServerTransactionId: started.directoryServerTransactionId,
    });
    expect(result.cavv).toBeDefined();
    expect(result).not.toHaveProperty('challengeUrl');
  });

  it('Fail authentication → N with reason 01; a second answer is 409 challenge_completed (JSON, or a page to a browser)', async () => {
    const started = await directory.authenticate(authentication('4111111111181072'));
    expect((await submitForm(started.challengeUrl!, { result: 'N' })).status).toBe(303);
    expect(await directory.result(started.authenticationId)).toMatchObject({
      transactionStatus: 'N',
      statusReason: '01',
      method: 'challenge',
    });
    expect(await directory.result(started.authenticationId)).not.toHaveProperty('cavv');

    const again = await fetch(started.challengeUrl!, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result: 'Y' }),
    });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: 'challenge_completed' });
    const page = await fetch(started.challengeUrl!, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(409);
    expect(await page.text()).toContain('challenge_completed');
  });
});

describe('errors', () => {
  it('rejects a request with missing fields (400), naming them', async () => {
    const request = authentication('4111111111111111');
    const error = await directory
      .authenticate({ ...request, merchant: { ...request.merchant, name: '', categoryCode: '' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectorRequestRejectedError);
    expect(error).toMatchObject({
      status: 400,
      message: expect.stringContaining('merchant.name, merchant.category_code required') as string,
    });
  });

  it('rejects an unknown authentication (404); an unknown challenge page is 404 too', async () => {
    await expect(directory.result('sim_3ds_unknown')).rejects.toMatchObject({
      type: 'connector_request_rejected',
      status: 404,
    });
    expect((await fetch(`${harness.simulator.url}/v1/3ds/challenges/sim_3ds_unknown`)).status).toBe(404);
  });

  it('throws a retriable ConnectorUnavailableError when the directory server is unreachable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await new SimulatorDirectoryServer({ baseUrl: `http://127.0.0.1:${port}` })
      .authenticate(authentication('4111111111111111'))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectorUnavailableError);
    expect(error).toMatchObject({ retriable: true });
  });
});
