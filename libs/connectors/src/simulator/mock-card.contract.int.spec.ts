/** The connector contract (testing/connector-contract.ts) against the simulator's `mock-card`. */
import { closedPortUrl, describeConnectorContract, startNotificationReceiver } from '../testing/connector-contract';
import { mockCardDefinition } from './mock-card-definition';
import { startSimulator } from './simulator-server';

describeConnectorContract('mock-card against the simulator', async () => {
  const webhookSecret = 'whsec_contract_0123456789';
  const simulator = await startSimulator({ webhookSecret, settleDelayMs: 50 });
  const receiver = await startNotificationReceiver();
  const unreachable = await closedPortUrl();
  const config = {
    baseUrl: simulator.url,
    merchantId: 'contract',
    webhookSecret,
    notificationUrl: receiver.url,
    timeoutMs: 5_000,
  };
  return {
    definition: mockCardDefinition,
    connect: (capabilities) => mockCardDefinition.create({ ...config, ...(capabilities ? { capabilities } : {}) }),
    connectUnreachable: () => mockCardDefinition.create({ ...config, baseUrl: unreachable }),
    connectThrough: (fetch) => mockCardDefinition.create({ ...config, fetch }),
    card: { number: '4111111111111111', expirationDate: '12/30', securityCode: '123' },
    currency: 'USD',
    // 500001: pending, then settled by a notification (docs/simulator.md).
    amounts: { approved: 1299, declined: 200011, notified: 500001 },
    readsTransactions: true,
    notificationAbout: (reference) => receiver.waitFor(reference),
    stop: async () => {
      await simulator.stop();
      await receiver.stop();
    },
  };
});
