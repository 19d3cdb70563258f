/**
 * The fields each payment service definition takes (a connection's `fields`, by key): one declaration read by the
 * transactions service (`GET /payment-service-definitions`, and the checks of `POST /payment-services`) and by the
 * OpenAPI document, which lists them on `PaymentServiceCreate.fields` with an example connection per real provider.
 */

export interface PaymentServiceDefinitionFieldDeclaration {
  readonly key: string;
  readonly display_name: string;
  readonly required: boolean;
  readonly format: 'text' | 'multiline' | 'number' | 'timezone' | 'boolean';
  /** Never answered by the API once set. */
  readonly secret: boolean;
}

const merchantId: PaymentServiceDefinitionFieldDeclaration = {
  key: 'merchant_id',
  display_name: 'Merchant ID',
  required: false,
  format: 'text',
  secret: false,
};
/** For testing: the provider's API at another address (a local fake); empty means the provider's own endpoint. */
const apiBaseUrl: PaymentServiceDefinitionFieldDeclaration = {
  key: 'api_base_url',
  display_name: 'API base URL (for testing; empty: the provider)',
  required: false,
  format: 'text',
  secret: false,
};

export const paymentServiceDefinitionFields: Readonly<
  Record<string, readonly PaymentServiceDefinitionFieldDeclaration[]>
> = {
  'mock-card': [merchantId],
  'mock-paypal': [merchantId],
  'mock-gift-card': [merchantId],
  // Real providers (docs/connectors/): credentials are secret fields, never answered by the API.
  'adyen-card': [
    { key: 'api_key', display_name: 'API key', required: true, format: 'text', secret: true },
    { key: 'merchant_account', display_name: 'Merchant account', required: true, format: 'text', secret: false },
    { key: 'hmac_key', display_name: 'HMAC key of the standard webhook', required: true, format: 'text', secret: true },
    {
      key: 'live_endpoint_url_prefix',
      display_name: 'Live endpoint URL prefix (empty: the test environment)',
      required: false,
      format: 'text',
      secret: false,
    },
    apiBaseUrl,
  ],
  'stripe-card': [
    { key: 'secret_key', display_name: 'Secret key', required: true, format: 'text', secret: true },
    { key: 'webhook_secret', display_name: 'Webhook signing secret', required: true, format: 'text', secret: true },
    apiBaseUrl,
  ],
};

/** The declarations as Markdown, for the OpenAPI document: one line per definition. */
export function definitionFieldsDescription(): string {
  const field = (f: PaymentServiceDefinitionFieldDeclaration) =>
    `\`${f.key}\` (${[f.required ? 'required' : 'optional', ...(f.secret ? ['secret'] : [])].join(', ')}): ` +
    f.display_name;
  return Object.entries(paymentServiceDefinitionFields)
    .map(([id, fields]) => `- \`${id}\`: ${fields.map(field).join('; ')}`)
    .join('\n');
}
