/**
 * The client's operations whose endpoints the spec does not define (docs/wire-compat.md, "Outside the spec"): each is
 * answered 404 with the spec's error body, which the client reads as its typed `Error404` — never a 5xx it would
 * retry, never a body its error schema refuses. Payment links, payouts, reports and report executions, audit logs,
 * 3-D Secure scenarios, settlements, payment service tokens, card scheme definitions, payment options, digital
 * wallet sessions and domains, provider sessions; and the credential check, a 405 (its path is a payment service's).
 */
import { randomUUID } from 'node:crypto';
import type { Gr4vy } from '@gr4vy/sdk';
import { Error404 } from '@gr4vy/sdk/models/errors/error404.js';
import { Error405 } from '@gr4vy/sdk/models/errors/error405.js';
import { startWireRuntime, type WireRuntime } from './wire-client';

let w: WireRuntime;
let client: Gr4vy;

beforeAll(async () => {
  w = await startWireRuntime('outside-the-spec');
  client = w.client(await w.merchantAccountWithConnection());
});
afterAll(() => w?.stop());

const id = randomUUID();
const outside: ReadonlyArray<readonly [string, (gr4vy: Gr4vy) => Promise<unknown>]> = [
  ['paymentLinks.create', (c) => c.paymentLinks.create({ amount: 1299, country: 'US', currency: 'USD' })],
  ['paymentLinks.list', (c) => c.paymentLinks.list()],
  ['paymentLinks.get', (c) => c.paymentLinks.get(id)],
  ['paymentLinks.expire', (c) => c.paymentLinks.expire(id)],
  [
    'payouts.create',
    (c) =>
      c.payouts.create({ amount: 1299, currency: 'USD', paymentServiceId: id, paymentMethod: { method: 'id', id } }),
  ],
  ['payouts.list', (c) => c.payouts.list()],
  ['payouts.get', (c) => c.payouts.get(id)],
  ['reports.list', (c) => c.reports.list()],
  [
    'reports.create',
    (c) =>
      c.reports.create({
        name: 'r',
        schedule: 'once',
        scheduleEnabled: false,
        spec: { model: 'transactions', params: {} },
      }),
  ],
  ['reports.get', (c) => c.reports.get(id)],
  ['reports.put', (c) => c.reports.put({ name: 'r2' }, id)],
  ['reports.executions.list', (c) => c.reports.executions.list(id)],
  ['reports.executions.get', (c) => c.reports.executions.get(id)],
  ['reports.executions.url', (c) => c.reports.executions.url(id, id)],
  ['reportExecutions.list', (c) => c.reportExecutions.list()],
  ['auditLogs.list', (c) => c.auditLogs.list()],
  ['threeDsScenarios.list', (c) => c.threeDsScenarios.list()],
  [
    'threeDsScenarios.create',
    (c) =>
      c.threeDsScenarios.create({
        conditions: { amount: 1299 },
        outcome: { version: '2.2.0', authentication: { transactionStatus: 'Y' } },
      }),
  ],
  ['threeDsScenarios.update', (c) => c.threeDsScenarios.update({ conditions: { amount: 1 } }, id)],
  ['threeDsScenarios.delete', (c) => c.threeDsScenarios.delete(id)],
  ['transactions.settlements.list', (c) => c.transactions.settlements.list(id)],
  ['transactions.settlements.get', (c) => c.transactions.settlements.get(id, id)],
  ['paymentMethods.paymentServiceTokens.list', (c) => c.paymentMethods.paymentServiceTokens.list(id)],
  [
    'paymentMethods.paymentServiceTokens.create',
    (c) =>
      c.paymentMethods.paymentServiceTokens.create(
        { paymentServiceId: id, redirectUrl: 'https://shop.example/return' },
        id,
      ),
  ],
  ['paymentMethods.paymentServiceTokens.delete', (c) => c.paymentMethods.paymentServiceTokens.delete(id, id)],
  ['cardSchemeDefinitions.list', (c) => c.cardSchemeDefinitions.list()],
  ['paymentOptions.list', (c) => c.paymentOptions.list({ amount: 1299, currency: 'USD', country: 'US' })],
  [
    'digitalWallets.sessions.applePay',
    (c) =>
      c.digitalWallets.sessions.applePay({
        validationUrl: 'https://apple.example/validate',
        domainName: 'shop.example',
      }),
  ],
  ['digitalWallets.sessions.googlePay', (c) => c.digitalWallets.sessions.googlePay({ originDomain: 'shop.example' })],
  ['digitalWallets.sessions.clickToPay', (c) => c.digitalWallets.sessions.clickToPay({ checkoutSessionId: id })],
  ['digitalWallets.domains.create', (c) => c.digitalWallets.domains.create({ domainName: 'shop.example' }, id)],
  ['digitalWallets.domains.delete', (c) => c.digitalWallets.domains.delete({ domainName: 'shop.example' }, id)],
  ['paymentServices.session', (c) => c.paymentServices.session({}, id)],
  ['paymentServiceDefinitions.session', (c) => c.paymentServiceDefinitions.session({}, 'mock-card')],
];

describe('an operation outside the spec', () => {
  it.each(outside)('%s is a 404 the client reads as Error404', async (_name, call) => {
    const error = await call(client).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(Error404);
    expect(error).toMatchObject({ statusCode: 404, type: 'error', code: 'not_found', status: 404, details: [] });
  });

  it('paymentServices.verify is a 405 (Error405): its path reads as a payment service’s, with no POST', async () => {
    const verify = client.paymentServices.verify({
      paymentServiceDefinitionId: 'mock-card',
      fields: [{ key: 'merchant_id', value: 'x' }],
    });
    await expect(verify).rejects.toBeInstanceOf(Error405);
    await expect(verify).rejects.toMatchObject({
      statusCode: 405,
      type: 'error',
      code: 'method_not_allowed',
      status: 405,
    });
  });
});
