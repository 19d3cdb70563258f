/**
 * Live smoke test of a real provider's connector (issue 20): one authorize → capture → refund against the provider's
 * TEST environment with credentials from the environment; prints a SKIP line and exits 0 without them.
 *
 *   ADYEN_API_KEY=… ADYEN_MERCHANT_ACCOUNT=… ADYEN_HMAC_KEY=… npm run smoke:adyen
 *   STRIPE_SECRET_KEY=sk_test_… STRIPE_WEBHOOK_SECRET=whsec_… npm run smoke:stripe
 *
 * The card is the provider's public test card (Adyen 4111 1111 4555 1142, Stripe 4242 4242 4242 4242); Stripe's raw
 * card API must be enabled on the test account. Adyen answers capture and refund `received`: `pending` is a pass.
 */
import { randomUUID } from 'node:crypto';
import { adyenCardDefinition, stripeCardDefinition, type Connector } from '@switchyard/connectors';

type Provider = 'adyen' | 'stripe';

function connectorFor(provider: Provider): Connector | string {
  const env = process.env;
  if (provider === 'adyen') {
    const missing = ['ADYEN_API_KEY', 'ADYEN_MERCHANT_ACCOUNT', 'ADYEN_HMAC_KEY'].filter((name) => !env[name]);
    if (missing.length > 0) return missing.join(', ');
    return adyenCardDefinition.create({
      apiKey: env.ADYEN_API_KEY ?? '',
      merchantAccount: env.ADYEN_MERCHANT_ACCOUNT ?? '',
      hmacKey: env.ADYEN_HMAC_KEY ?? '',
      returnUrl: 'https://example.com/return',
    });
  }
  const missing = ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET'].filter((name) => !env[name]);
  if (missing.length > 0) return missing.join(', ');
  if (!env.STRIPE_SECRET_KEY?.startsWith('sk_test_')) return 'STRIPE_SECRET_KEY must be a test key (sk_test_…)';
  return stripeCardDefinition.create({
    secretKey: env.STRIPE_SECRET_KEY,
    webhookSecret: env.STRIPE_WEBHOOK_SECRET ?? '',
  });
}

async function main(): Promise<void> {
  const provider = process.argv[2] as Provider;
  if (provider !== 'adyen' && provider !== 'stripe') throw new Error('usage: provider-smoke.ts adyen|stripe');
  const connector = connectorFor(provider);
  if (typeof connector === 'string') {
    console.log(`SKIP smoke:${provider}: no credentials in the environment (${connector})`);
    return;
  }
  const reference = randomUUID();
  const number = provider === 'adyen' ? '4111111145551142' : '4242424242424242';
  const authorized = await connector.authorize({
    reference,
    amount: 1_000,
    currency: 'EUR',
    capture: false,
    paymentInstrument: { type: 'card', card: { number, expirationDate: '03/30', securityCode: '737' } },
  });
  console.log(
    'authorize',
    authorized.outcome,
    'providerTransactionId' in authorized ? authorized.providerTransactionId : '',
  );
  if (
    authorized.outcome !== 'succeeded' ||
    !('providerTransactionId' in authorized) ||
    !authorized.providerTransactionId
  )
    throw new Error(`authorize: ${JSON.stringify(authorized)}`);
  const ref = { reference, providerTransactionId: authorized.providerTransactionId };
  const captured = await connector.capture({
    ...ref,
    captureReference: randomUUID(),
    amount: 1_000,
    currency: 'EUR',
    final: true,
  });
  console.log('capture', captured.outcome);
  if (captured.outcome !== 'succeeded' && captured.outcome !== 'pending')
    throw new Error(`capture: ${JSON.stringify(captured)}`);
  // Adyen refunds a capture once it is processed; its test environment takes a moment.
  if (provider === 'adyen') await new Promise((resolve) => setTimeout(resolve, 5_000));
  const refunded = await connector.refund({ ...ref, refundReference: randomUUID(), amount: 1_000, currency: 'EUR' });
  console.log('refund', refunded.outcome);
  if (refunded.outcome !== 'succeeded' && refunded.outcome !== 'pending')
    throw new Error(`refund: ${JSON.stringify(refunded)}`);
  console.log(`smoke:${provider} passed`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
