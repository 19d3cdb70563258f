/**
 * The acceptance scenarios of the real providers (issue 20), written once against a running gateway and a provider
 * fake, so the embedded runtime (services/standalone) and the distributed one (tests/providers) play the same:
 * authorize → two partial captures → refund, authorize → void, a decline with its mapped error_code, an incremental
 * authorization, a timeout reconciled, failover from a 5xx, a notification with a bad signature refused and a
 * replayed one changing nothing.
 */
import request from 'supertest';
import { expect, it } from 'vitest';

type Body = Record<string, unknown> & { id: string; status: string };

export interface ProviderGateway {
  readonly baseUrl: string;
  headers(account: string): Record<string, string>;
}

export interface ProviderScenarioSetup {
  readonly gateway: () => ProviderGateway;
  readonly account: () => string;
  /** The connection every scenario but failover routes to. */
  readonly connectionId: () => string;
  /** The connection whose provider answers 500, positioned before `connectionId`'s; failover's route. */
  readonly failingConnectionId: () => string;
  readonly amounts: {
    readonly decline: number;
    readonly declineErrorCode: string;
    readonly declineRawCode: string;
    readonly slowAnswer: number;
  };
  /** Replays one notification the provider delivered about `transactionId`; answers its HTTP status. */
  readonly replayNotification: (transactionId: string) => Promise<number>;
  /** Sends a notification about `transactionId` signed with a wrong key; answers its HTTP status. */
  readonly forgeNotification: (transactionId: string) => Promise<number>;
}

const card = { method: 'card', number: '4111111111111111', expiration_date: '11/30', security_code: '737' };

export function providerScenarios(setup: ProviderScenarioSetup): void {
  const http = () => request(setup.gateway().baseUrl);
  const headers = () => setup.gateway().headers(setup.account());
  const authorize = async (body: Record<string, unknown> = {}): Promise<Body> => {
    const response = await http()
      .post('/transactions')
      .set(headers())
      .send({
        amount: 10_000,
        currency: 'EUR',
        payment_method: card,
        intent: 'authorize',
        payment_service_id: setup.connectionId(),
        ...body,
      });
    if (response.status !== 201) throw new Error(`POST /transactions answered ${response.status}: ${response.text}`);
    return response.body as Body;
  };
  const get = async (id: string): Promise<Body> =>
    (await http().get(`/transactions/${id}`).set(headers()).expect(200)).body as Body;
  const waitFor = async (id: string, predicate: (t: Body) => boolean, timeoutMs = 8_000): Promise<Body> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const t = await get(id);
      if (predicate(t)) return t;
      if (Date.now() > deadline)
        throw new Error(`transaction ${id} did not reach the expected state: ${JSON.stringify(t)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  const history = async (id: string): Promise<unknown[]> =>
    (await http().get(`/transactions/${id}/events`).set(headers()).expect(200)).body.items as unknown[];

  it('authorize → two partial captures → a refund', async () => {
    const t = await authorize();
    expect(t).toMatchObject({ status: 'authorization_succeeded', authorized_amount: 10_000 });
    await http().post(`/transactions/${t.id}/capture`).set(headers()).send({ amount: 4_000, final: false }).expect(200);
    await waitFor(t.id, (x) => x.captured_amount === 4_000 && x.status === 'capture_succeeded');
    await http().post(`/transactions/${t.id}/capture`).set(headers()).send({ amount: 3_000, final: true }).expect(200);
    await waitFor(t.id, (x) => x.captured_amount === 7_000 && x.status === 'capture_succeeded');
    const refund = await http()
      .post(`/transactions/${t.id}/refunds`)
      .set(headers())
      .send({ amount: 2_500 })
      .expect(201);
    await waitFor(t.id, (x) => x.refunded_amount === 2_500);
    expect(
      (await http().get(`/transactions/${t.id}/refunds/${refund.body.id}`).set(headers()).expect(200)).body,
    ).toMatchObject({ status: 'succeeded', amount: 2_500 });
  });

  it('authorize → void', async () => {
    const t = await authorize();
    await http().post(`/transactions/${t.id}/void`).set(headers()).send({}).expect(200);
    await waitFor(t.id, (x) => x.status === 'authorization_voided');
  });

  it('a decline answers its mapped error_code with the raw code kept', async () => {
    const t = await authorize({ amount: setup.amounts.decline });
    expect(t).toMatchObject({
      status: 'authorization_declined',
      error_code: setup.amounts.declineErrorCode,
      raw_response_code: setup.amounts.declineRawCode,
    });
  });

  it('an incremental authorization raises authorized_amount', async () => {
    const t = await authorize();
    const increment = await http()
      .post(`/transactions/${t.id}/authorization/increment`)
      .set(headers())
      .send({ amount: 1_500 })
      .expect(200);
    expect(['succeeded', 'pending']).toContain(increment.body.status);
    await waitFor(t.id, (x) => x.authorized_amount === 11_500);
  });

  it('a timeout leaves the authorization processing; reconciliation settles it', async () => {
    const t = await authorize({ amount: setup.amounts.slowAnswer });
    expect(t.status).toBe('processing');
    await waitFor(t.id, (x) => x.status === 'authorization_succeeded', 15_000);
  });

  it('a 5xx at the first connection fails over to the next', async () => {
    const response = await http()
      .post('/transactions')
      .set(headers())
      .send({ amount: 10_000, currency: 'EUR', payment_method: card, intent: 'authorize' })
      .expect(201);
    expect(response.body).toMatchObject({
      status: 'authorization_succeeded',
      payment_service: { id: setup.connectionId() },
    });
    const failed = await history(response.body.id as string);
    expect(JSON.stringify(failed)).toContain(setup.failingConnectionId());
  });

  it('a notification with a bad signature is refused and changes nothing; a replayed one changes nothing', async () => {
    const t = await authorize();
    await new Promise((resolve) => setTimeout(resolve, 300)); // the provider's own notification has arrived
    const before = await history(t.id);
    expect(await setup.forgeNotification(t.id)).toBe(401);
    expect(await setup.replayNotification(t.id)).toBeLessThan(300);
    expect(await history(t.id)).toEqual(before);
    expect((await get(t.id)).status).toBe('authorization_succeeded');
  });
}
