/** The connector contract (testing/connector-contract.ts) against `stripe-card` and the local Stripe fake. */
import { closedPortUrl, describeConnectorContract, startNotificationReceiver } from '../testing/connector-contract';
import { skipWithoutProviderDocuments } from '../testing/provider-documents';
import { stripeCardDefinition } from './stripe-definition';
import { startStripeFake, stripeScenarioAmounts } from './testing/stripe-fake';

const skip = skipWithoutProviderDocuments('connector contract: stripe-card');

describeConnectorContract(
  'stripe-card against the Stripe fake',
  async () => {
    const secretKey = 'sk_test_contract_0123456789';
    const webhookSecret = 'whsec_contract_0123456789';
    const fake = await startStripeFake();
    const receiver = await startNotificationReceiver();
    fake.endpoints.set(secretKey, { url: receiver.url, secret: webhookSecret });
    const unreachable = await closedPortUrl();
    const config = { secretKey, webhookSecret, apiBaseUrl: fake.url, timeoutMs: 5_000 };
    return {
      definition: stripeCardDefinition,
      connect: (capabilities) => stripeCardDefinition.create({ ...config, ...(capabilities ? { capabilities } : {}) }),
      connectUnreachable: () => stripeCardDefinition.create({ ...config, apiBaseUrl: unreachable }),
      connectThrough: (fetch) => stripeCardDefinition.create({ ...config, fetch }),
      card: { number: '4242424242424242', expirationDate: '12/30', securityCode: '123' },
      currency: 'USD',
      // Stripe sends an event for every payment intent it confirms.
      amounts: { approved: 1299, declined: stripeScenarioAmounts.insufficientFunds, notified: 1299 },
      readsTransactions: true,
      notificationAbout: (reference) => receiver.waitFor(reference),
      stop: async () => {
        expect(fake.violations).toEqual([]);
        await fake.stop();
        await receiver.stop();
      },
    };
  },
  { skip },
);
