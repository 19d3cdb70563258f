/** The connector contract (testing/connector-contract.ts) against `adyen-card` and the local Adyen fake. */
import { closedPortUrl, describeConnectorContract, startNotificationReceiver } from '../testing/connector-contract';
import { skipWithoutProviderDocuments } from '../testing/provider-documents';
import { adyenCardDefinition } from './adyen-definition';
import { adyenScenarioAmounts, startAdyenFake } from './testing/adyen-fake';

const skip = skipWithoutProviderDocuments('connector contract: adyen-card');

describeConnectorContract(
  'adyen-card against the Adyen fake',
  async () => {
    const apiKey = 'AQE_contract_api_key_0123456789';
    const hmacKey = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
    const merchantAccount = 'ContractShopECOM';
    const fake = await startAdyenFake({ apiKey, hmacKey });
    const receiver = await startNotificationReceiver();
    fake.webhookUrls.set(merchantAccount, receiver.url);
    const unreachable = await closedPortUrl();
    const config = {
      apiKey,
      merchantAccount,
      hmacKey,
      apiBaseUrl: fake.url,
      returnUrl: 'https://shop.example/return',
      timeoutMs: 5_000,
    };
    return {
      definition: adyenCardDefinition,
      connect: (capabilities) => adyenCardDefinition.create({ ...config, ...(capabilities ? { capabilities } : {}) }),
      connectUnreachable: () => adyenCardDefinition.create({ ...config, apiBaseUrl: unreachable }),
      connectThrough: (fetch) => adyenCardDefinition.create({ ...config, fetch }),
      card: { number: '4111111111111111', expirationDate: '03/30', securityCode: '737' },
      currency: 'EUR',
      // Adyen notifies every authorisation (AUTHORISATION).
      amounts: { approved: 1299, declined: adyenScenarioAmounts.insufficientFunds, notified: 1299 },
      readsTransactions: false,
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
