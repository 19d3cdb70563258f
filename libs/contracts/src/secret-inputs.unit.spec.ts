import { RequestValidationError, validate } from '@switchyard/api';
import type { z } from 'zod';
import { merchantAccountCreateSchema } from './merchant-accounts';
import { paymentServiceCreateSchema } from './payment-services';
import { webhookSubscriptionCreateSchema, webhookSubscriptionUpdateSchema } from './webhooks';

const echoOf = (schema: z.ZodType, body: unknown): string => {
  try {
    validate(schema, body, 'body');
  } catch (error) {
    return JSON.stringify((error as RequestValidationError).toBody());
  }
  throw new Error('valid');
};

describe('a 422 never echoes a secret the API takes', () => {
  it("a webhook subscription's basic-auth password, whether it or its neighbour is wrong", () => {
    const tooLong = `hunter2-${'x'.repeat(300)}`;
    for (const schema of [webhookSubscriptionCreateSchema, webhookSubscriptionUpdateSchema]) {
      expect(
        echoOf(schema, { url: 'https://example.com/hook', basic_auth: { username: 'ops', password: tooLong } }),
      ).not.toContain('hunter2');
      expect(
        echoOf(schema, { url: 'https://example.com/hook', basic_auth: { username: '', password: 'hunter2' } }),
      ).not.toContain('hunter2');
      expect(
        echoOf(schema, {
          url: 'https://example.com/hook',
          basic_auth: { username: 'ops', password: 'hunter2', realm: 'x' },
        }),
      ).not.toContain('hunter2');
    }
  });

  it("a connection's credential values (the definition, not the schema, knows which are secret: none are echoed)", () => {
    const body = {
      payment_service_definition_id: 'adyen-card',
      display_name: 'Adyen',
      fields: [{ key: 'api_key', value: `AQE_secret_${'x'.repeat(10_000)}` }],
    };
    expect(echoOf(paymentServiceCreateSchema, body)).not.toContain('AQE_secret_');
  });

  it("a merchant account's secret keys", () => {
    const body = {
      id: 'acme',
      display_name: 'Acme',
      loon_secret_key: `loon_sk_${'x'.repeat(1000)}`,
      account_updater_response_decryption_key: `-----BEGIN PRIVATE KEY-----${'x'.repeat(10_000)}`,
    };
    const echoed = echoOf(merchantAccountCreateSchema, body);
    expect(echoed).not.toContain('loon_sk_');
    expect(echoed).not.toContain('BEGIN PRIVATE KEY');
  });
});
