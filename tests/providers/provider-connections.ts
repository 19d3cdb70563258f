/**
 * What each provider's acceptance run needs besides the scenarios (provider-scenarios.ts), the same in both runtimes:
 * its connections pointed at the local fake (one healthy, one whose provider answers 500, ahead of it for failover),
 * the amounts that play a decline and a lost answer, and how a delivered notification is replayed or forged.
 */
import {
  adyenScenarioAmounts,
  stripeScenarioAmounts,
  type RunningAdyenFake,
  type RunningStripeFake,
} from '@switchyard/connectors/src/testing';
import request from 'supertest';
import { expect } from 'vitest';
import type { ProviderGateway, ProviderScenarioSetup } from './provider-scenarios';

type ProviderParts = Omit<ProviderScenarioSetup, 'gateway' | 'account' | 'connectionId' | 'failingConnectionId'>;

export const adyenCredentials = {
  apiKey: 'AQE_test_api_key_0123456789',
  hmacKey: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
} as const;
export const stripeCredentials = {
  secretKey: 'sk_test_switchyard_shop_0123456789',
  downKey: 'sk_test_switchyard_down_0123456789',
  webhookSecret: 'whsec_test_switchyard_0123456789',
} as const;
/** The Adyen merchant accounts of the two connections: the healthy one and the one answering 500. */
export const adyenMerchantAccounts = { shop: 'SwitchyardShop', down: 'SwitchyardDown' } as const;

async function createConnection(
  gateway: ProviderGateway,
  account: string,
  body: Record<string, unknown>,
): Promise<{ id: string; webhook_url: string }> {
  const response = await request(gateway.baseUrl).post('/payment-services').set(gateway.headers(account)).send(body);
  if (response.status !== 201) throw new Error(`POST /payment-services answered ${response.status}: ${response.text}`);
  return response.body as { id: string; webhook_url: string };
}

/** The account's two adyen-card connections on the fake; notifications go to each one's `webhook_url`. */
export async function createAdyenConnections(
  gateway: ProviderGateway,
  account: string,
  fake: RunningAdyenFake,
): Promise<{ connectionId: string; failingConnectionId: string }> {
  const create = async (merchantAccount: string, position: number) => {
    const connection = await createConnection(gateway, account, {
      display_name: `Adyen ${merchantAccount}`,
      payment_service_definition_id: 'adyen-card',
      position,
      fields: [
        { key: 'api_key', value: adyenCredentials.apiKey },
        { key: 'merchant_account', value: merchantAccount },
        { key: 'hmac_key', value: adyenCredentials.hmacKey },
        { key: 'api_base_url', value: fake.url },
      ],
      accepted_currencies: ['EUR'],
      accepted_countries: ['NL'],
    });
    fake.webhookUrls.set(merchantAccount, connection.webhook_url);
    return connection.id;
  };
  const failingConnectionId = await create(adyenMerchantAccounts.down, 0);
  fake.unavailableAccounts.add(adyenMerchantAccounts.down);
  return { failingConnectionId, connectionId: await create(adyenMerchantAccounts.shop, 1) };
}

/** The account's two stripe-card connections on the fake: the first one's secret key is answered 500. */
export async function createStripeConnections(
  gateway: ProviderGateway,
  account: string,
  fake: RunningStripeFake,
): Promise<{ connectionId: string; failingConnectionId: string }> {
  const create = async (secretKey: string, position: number) => {
    const connection = await createConnection(gateway, account, {
      display_name: `Stripe ${position}`,
      payment_service_definition_id: 'stripe-card',
      position,
      fields: [
        { key: 'secret_key', value: secretKey },
        { key: 'webhook_secret', value: stripeCredentials.webhookSecret },
        { key: 'api_base_url', value: fake.url },
      ],
      accepted_currencies: ['EUR'],
      accepted_countries: ['DE'],
    });
    fake.endpoints.set(secretKey, { url: connection.webhook_url, secret: stripeCredentials.webhookSecret });
    return connection.id;
  };
  const failingConnectionId = await create(stripeCredentials.downKey, 0);
  fake.unavailableKeys.add(stripeCredentials.downKey);
  return { failingConnectionId, connectionId: await create(stripeCredentials.secretKey, 1) };
}

/** Adyen's part of the scenarios: refusal 12 (insufficient funds), AUTHORISATION replayed, forged. */
export function adyenScenarioParts(fake: () => RunningAdyenFake): ProviderParts {
  const delivered = (id: string) => {
    const found = fake().deliveries.find((d) => d.eventCode === 'AUTHORISATION' && d.body.includes(id));
    if (!found) throw new Error('no AUTHORISATION notification was delivered');
    return found;
  };
  return {
    amounts: {
      decline: adyenScenarioAmounts.insufficientFunds,
      declineErrorCode: 'insufficient_funds',
      declineRawCode: '12',
      slowAnswer: adyenScenarioAmounts.slowAnswer,
    },
    replayNotification: async (id) => {
      const answer = await fake().post(adyenMerchantAccounts.shop, delivered(id).body);
      expect(answer.text).toBe('[accepted]');
      return answer.status;
    },
    // The same notification saying the payment was refused: its signature no longer matches.
    forgeNotification: async (id) =>
      (
        await fake().post(
          adyenMerchantAccounts.shop,
          delivered(id).body.replace('"success":"true"', '"success":"false"'),
        )
      ).status,
  };
}

/** Stripe's part of the scenarios: a card_declined / insufficient_funds, and the intent's event replayed or forged. */
export function stripeScenarioParts(fake: () => RunningStripeFake): ProviderParts {
  const delivered = (id: string) => {
    const found = fake().deliveries.find(
      (d) => d.type === 'payment_intent.amount_capturable_updated' && d.body.includes(id),
    );
    if (!found) throw new Error('no payment_intent.amount_capturable_updated event was delivered');
    return found;
  };
  return {
    amounts: {
      decline: stripeScenarioAmounts.insufficientFunds,
      declineErrorCode: 'insufficient_funds',
      declineRawCode: 'insufficient_funds',
      slowAnswer: stripeScenarioAmounts.slowAnswer,
    },
    replayNotification: async (id) => {
      const event = delivered(id);
      return (await fake().post(stripeCredentials.secretKey, event.body, event.signature)).status;
    },
    forgeNotification: async (id) => {
      const event = delivered(id);
      const forged = event.body.replace('payment_intent.amount_capturable_updated', 'payment_intent.payment_failed');
      return (await fake().post(stripeCredentials.secretKey, forged, event.signature)).status;
    },
  };
}
