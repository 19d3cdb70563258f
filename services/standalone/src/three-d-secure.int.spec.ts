/**
 * Issue 5 acceptance, "3-D Secure rules": the spec's issuer-mandated 3-D Secure over HTTP, end to end — flow rules
 * through their API, issuer countries from the shipped sample BIN data, authentication through the simulator's
 * directory server. {EEA/UK issuer, US issuer, unknown issuer} × {no rule, skip rule, force rule} × {connection
 * 3-D Secure on, off}: 18 cases, each asserting whether 3-D Secure ran and what was recorded as matched.
 */
import { startHarness, THREE_DS_PANS, type Harness } from './transactions.harness';

let h: Harness;
const accounts = { none: 'tds-none', skip: 'tds-skip', force: 'tds-force' } as const;
const ruleIds: Partial<Record<keyof typeof accounts, string>> = {};
const connections: Record<string, { on: string; off: string }> = {};

beforeAll(async () => {
  h = await startHarness('three-d-secure');
  for (const [rule, account] of Object.entries(accounts) as [keyof typeof accounts, string][]) {
    await h.createAccount(account);
    await h.createThreeDsConfiguration(account);
    connections[account] = {
      on: await h.createConnection(account, { display_name: '3DS on', three_d_secure_enabled: true }),
      off: await h.createConnection(account, { display_name: '3DS off', three_d_secure_enabled: false }),
    };
    if (rule !== 'none')
      ruleIds[rule] = await h.createFlowRule(account, {
        action: `${rule}-3ds`,
        description: `${rule} 3-D Secure for everything`,
        conditions: [],
      });
  }
});

afterAll(async () => {
  expect(h.leaks).toEqual([]);
  await h.stop();
});

const issuers = {
  'EEA/UK': THREE_DS_PANS.frictionlessMastercardGB,
  US: THREE_DS_PANS.frictionlessVisaUS,
  unknown: THREE_DS_PANS.unknownIssuerVisa,
} as const;

// [issuer, rule, connection 3-D Secure, ran, skip rule overridden]
const table = [
  ['EEA/UK', 'none', 'on', true, false],
  ['EEA/UK', 'skip', 'on', true, true],
  ['EEA/UK', 'force', 'on', true, false],
  ['US', 'none', 'on', true, false],
  ['US', 'skip', 'on', false, false],
  ['US', 'force', 'on', true, false],
  ['unknown', 'none', 'on', true, false],
  ['unknown', 'skip', 'on', false, false],
  ['unknown', 'force', 'on', true, false],
  ['EEA/UK', 'none', 'off', false, false],
  ['EEA/UK', 'skip', 'off', false, false],
  ['EEA/UK', 'force', 'off', false, false],
  ['US', 'none', 'off', false, false],
  ['US', 'skip', 'off', false, false],
  ['US', 'force', 'off', false, false],
  ['unknown', 'none', 'off', false, false],
  ['unknown', 'skip', 'off', false, false],
  ['unknown', 'force', 'off', false, false],
] as const;

it.each(table)(
  '%s issuer, %s rule, connection 3-D Secure %s → ran: %s, skip overridden: %s',
  async (issuer, rule, connection, ran, overridden) => {
    const account = accounts[rule];
    const t = await h.authorize(account, {
      payment_service_id: connections[account]![connection],
      payment_method: {
        method: 'card',
        number: issuers[issuer],
        expiration_date: '03/30',
        security_code: '100',
        redirect_url: 'https://shop.example/return',
      },
    });
    expect(t.status).toBe('authorization_succeeded');
    if (ran)
      expect(t.three_d_secure).toMatchObject({
        status: 'complete',
        method: 'frictionless',
        version: '2.2.0',
        response_data: { authentication_response: 'Y' },
      });
    else expect(t.three_d_secure).toBeNull();

    const actions = (await h.http().get(`/transactions/${t.id}/actions`).set(h.headers(account)).expect(200)).body
      .items;
    if (rule === 'none') expect(actions).toEqual([]);
    else {
      // The matched rule is recorded in every case — also when the connection has 3-D Secure off or the issuer overrode it.
      expect(actions).toEqual([
        expect.objectContaining({
          type: 'action',
          id: `${rule}-3ds`,
          flow: 'card-transaction',
          rule_id: ruleIds[rule],
        }),
      ]);
      if (rule === 'skip') {
        expect(actions[0].outcome).toEqual({
          result: true,
          applied: !ran && connection === 'on',
          ...(overridden ? { overridden_by: 'issuer_mandated_3ds' } : {}),
        });
      }
    }
  },
);

describe('the environment switch and the configurations', () => {
  it('runs 3-D Secure with a challenge-free US card only when a configuration of the merchant account exists (setup_error otherwise)', async () => {
    const account = 'tds-unconfigured';
    await h.createAccount(account);
    const connection = await h.createConnection(account, { three_d_secure_enabled: true });
    const t = await h.authorize(account, {
      payment_service_id: connection,
      payment_method: {
        method: 'card',
        number: THREE_DS_PANS.frictionlessVisaUS,
        expiration_date: '03/30',
        redirect_url: 'https://shop.example/return',
      },
    });
    expect(t).toMatchObject({
      status: 'authorization_succeeded',
      three_d_secure: {
        status: 'setup_error',
        method: null,
        response_data: null,
        error_data: { description: expect.stringMatching(/no 3-D Secure configuration/) },
      },
    });
  });

  it('passes external three_d_secure_data through and records it', async () => {
    const account = accounts.none;
    const t = await h.authorize(account, {
      payment_service_id: connections[account]!.on,
      three_d_secure_data: {
        cavv: 'AAABBEg0VhI0VniQEjRWAAAAAAA=',
        eci: '05',
        version: '2.2.0',
        directory_response: 'Y',
        authentication_response: 'Y',
        directory_transaction_id: 'c4e59ceb-a382-4d6a-bc87-385d591fa09d',
      },
    });
    expect(t).toMatchObject({
      status: 'authorization_succeeded',
      three_d_secure: {
        status: 'complete',
        method: null,
        response_data: { eci: '05', directory_transaction_id: 'c4e59ceb-a382-4d6a-bc87-385d591fa09d' },
      },
    });
  });
});

describe('ISSUER_MANDATED_3DS=false (an environment without the feature)', () => {
  let off: Harness;
  const account = 'tds-feature-off';

  beforeAll(async () => {
    off = await startHarness('three-d-secure-feature-off', { env: { ISSUER_MANDATED_3DS: 'false' } });
    await off.createAccount(account);
    await off.createThreeDsConfiguration(account);
    await off.createConnection(account, { three_d_secure_enabled: true });
    await off.createFlowRule(account, { action: 'skip-3ds', conditions: [] });
  });

  afterAll(() => off.stop());

  it('lets the skip rule skip 3-D Secure for an EEA/UK issuer too, recording it as applied', async () => {
    const t = await off.authorize(account, {
      payment_method: {
        method: 'card',
        number: issuers['EEA/UK'],
        expiration_date: '03/30',
        redirect_url: 'https://shop.example/return',
      },
    });
    expect(t).toMatchObject({ status: 'authorization_succeeded', three_d_secure: null });
    const actions = (await off.http().get(`/transactions/${t.id}/actions`).set(off.headers(account)).expect(200)).body
      .items;
    expect(actions[0]).toMatchObject({ id: 'skip-3ds', outcome: { result: true, applied: true } });
  });
});
