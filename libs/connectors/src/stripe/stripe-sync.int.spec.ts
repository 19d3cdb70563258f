/**
 * Stripe's sync of an authorization whose answer was lost, against the local Stripe fake: the intent is found by our
 * reference with Stripe's search, which is not read-after-write ("data is searchable in under 1 minute"). While the
 * authorization is younger than the search lag an intent the search does not show is `unknown`, never `not_found`,
 * so reconciliation does not fail a payment that exists; past the lag, nothing found means never made.
 */
import type { AuthorizeRequest } from '../connector';
import { skipWithoutProviderDocuments, startStripeFake, type RunningStripeFake } from '../testing';
import { StripeConnector } from './stripe-connector';
import { stripeCardDefinition } from './stripe-definition';

const skip = skipWithoutProviderDocuments('Stripe sync and search lag');
// Wide enough that an authorization and a sync in a row fit inside it on a loaded CI machine (400 ms once did not).
const searchLagMs = 1_000;
let fake: RunningStripeFake;
let connector: StripeConnector;

const authorizeRequest = (reference: string): AuthorizeRequest => ({
  reference,
  amount: 2_500,
  currency: 'EUR',
  capture: false,
  paymentInstrument: {
    type: 'card',
    card: { number: '4242424242424242', expirationDate: '11/30', securityCode: '123' },
  },
});
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

describe.skipIf(skip)('Stripe sync by our reference (search)', () => {
  beforeAll(async () => {
    fake = await startStripeFake({ searchLagMs });
    connector = new StripeConnector(
      { secretKey: 'sk_test_sync', webhookSecret: 'whsec_sync', apiBaseUrl: fake.url, searchLagMs },
      stripeCardDefinition,
    );
  });

  afterAll(() => fake?.stop());

  it('an intent made a moment ago that search does not show yet is unknown, then found once searchable', async () => {
    const reference = `tx-${Date.now()}-made`;
    const attemptedAt = new Date().toISOString();
    expect(await connector.authorize(authorizeRequest(reference))).toMatchObject({ outcome: 'succeeded' });
    expect(await connector.sync({ reference, attemptedAt })).toEqual({ outcome: 'unknown' });
    await new Promise((resolve) => setTimeout(resolve, searchLagMs + 50));
    expect(await connector.sync({ reference, attemptedAt })).toMatchObject({
      outcome: 'found',
      transaction: { reference, status: 'authorized', authorizedAmount: 2_500 },
    });
  });

  it('an intent never made is unknown while the authorization is younger than the lag, not found after', async () => {
    const reference = `tx-${Date.now()}-never`;
    expect(await connector.sync({ reference, attemptedAt: ago(50) })).toEqual({ outcome: 'unknown' });
    expect(await connector.sync({ reference, attemptedAt: ago(searchLagMs + 100) })).toEqual({ outcome: 'not_found' });
  });

  it('an intent of unknown age is taken as searchable; one read by its id is never subject to the lag', async () => {
    expect(await connector.sync({ reference: `tx-${Date.now()}-ageless` })).toEqual({ outcome: 'not_found' });
    const reference = `tx-${Date.now()}-by-id`;
    const authorized = await connector.authorize(authorizeRequest(reference));
    const providerTransactionId = (authorized as { providerTransactionId: string }).providerTransactionId;
    expect(
      await connector.sync({ reference, providerTransactionId, attemptedAt: new Date().toISOString() }),
    ).toMatchObject({ outcome: 'found', transaction: { providerTransactionId } });
    expect(fake.violations).toEqual([]);
  });
});
