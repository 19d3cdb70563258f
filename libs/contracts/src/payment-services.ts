/**
 * Payment services (a merchant account's connections to providers) and payment service definitions (the providers
 * Switchyard can connect to) on the wire, and the transactions RPC patterns behind them.
 */
import { z } from 'zod';
import { definitionFieldsDescription } from './payment-service-definition-fields';

export const paymentServicePatterns = {
  list: 'transactions.payment-services.list',
  get: 'transactions.payment-services.get',
  create: 'transactions.payment-services.create',
  update: 'transactions.payment-services.update',
  delete: 'transactions.payment-services.delete',
} as const;

export const paymentServiceDefinitionPatterns = {
  list: 'transactions.payment-service-definitions.list',
  get: 'transactions.payment-service-definitions.get',
} as const;

/**
 * The capability switches of a connection, the snake_case names of the connector capability flags
 * (`ConnectorCapabilities` in `libs/connectors`).
 */
export const paymentServiceCapabilityNames = [
  'multiple_captures',
  'incremental_authorization',
  'network_tokens',
  'tracking_forwarding',
  'asynchronous_refund_settlement',
  'three_d_secure',
  'delayed_capture',
] as const;
export type PaymentServiceCapabilityName = (typeof paymentServiceCapabilityNames)[number];

const timestamp = z.iso.datetime({ offset: true });
const currency = z
  .string()
  .regex(/^[A-Z]{3}$/)
  .meta({ description: 'ISO 4217 currency code, three upper-case letters.' });
const country = z
  .string()
  .regex(/^[A-Z]{2}$/)
  .meta({ description: 'ISO 3166-1 alpha-2 country code, two upper-case letters.' });

const capabilityDescriptions: Record<PaymentServiceCapabilityName, string> = {
  multiple_captures: 'More than one capture against one authorization.',
  incremental_authorization: 'Raising the authorized amount of an authorization.',
  network_tokens: 'Authorizing with network tokens.',
  tracking_forwarding: 'Forwarding shipment tracking on captures.',
  asynchronous_refund_settlement: 'Refunds that settle later, by notification.',
  three_d_secure: 'Passing 3-D Secure authentication data on authorization.',
  delayed_capture: 'Authorizing now and capturing later.',
};

export const paymentServiceCapabilitiesSchema = z
  .object(
    Object.fromEntries(
      paymentServiceCapabilityNames.map((name) => [
        name,
        z.boolean().meta({ description: capabilityDescriptions[name] }),
      ]),
    ) as Record<PaymentServiceCapabilityName, z.ZodBoolean>,
  )
  .meta({
    id: 'PaymentServiceCapabilities',
    description: "What the connection may do: its definition's capabilities, less those the connection turned off.",
  });

export const paymentServiceCapabilitiesInputSchema = z
  .object(
    Object.fromEntries(
      paymentServiceCapabilityNames.map((name) => [
        name,
        z.boolean().optional().meta({ description: capabilityDescriptions[name] }),
      ]),
    ) as Record<PaymentServiceCapabilityName, z.ZodOptional<z.ZodBoolean>>,
  )
  .strict()
  .meta({
    id: 'PaymentServiceCapabilitiesInput',
    description:
      "Turns capabilities of the connection off (false) or back to the definition's (true). A connection can only turn a capability off: true for a capability its definition lacks is refused (400). Flags not sent keep their value.",
  });

export type PaymentServiceCapabilities = z.infer<typeof paymentServiceCapabilitiesSchema>;
export type PaymentServiceCapabilitiesInput = z.infer<typeof paymentServiceCapabilitiesInputSchema>;

// Write-only: which values are credentials is the definition's to say, so a 422 echoes none of them.
const field = z
  .object({ key: z.string().min(1).max(100), value: z.string().max(10_000).meta({ writeOnly: true }) })
  .strict();

const merchantProfileScheme = z
  .object({
    merchant_acquirer_bin: z.string().max(11),
    merchant_acquirer_id: z.string().max(35),
    merchant_name: z.string().max(40),
    merchant_country_code: z.string().max(3),
    merchant_category_code: z.string().max(4),
    merchant_url: z.string().max(2048),
  })
  .strict();

const merchantProfileSchemeSummary = z.object({
  merchant_acquirer_bin: z.string(),
  merchant_acquirer_id: z.string(),
  merchant_name: z.string(),
  merchant_country_code: z.string(),
  merchant_category_code: z.string(),
  merchant_url: z.string(),
  created_at: timestamp,
});

export const paymentServiceSchema = z
  .object({
    type: z.literal('payment-service'),
    id: z.uuid(),
    merchant_account_id: z.string(),
    payment_service_definition_id: z.string(),
    active: z.boolean(),
    method: z.string(),
    display_name: z.string(),
    position: z.number().int().meta({ description: 'Routing order within the merchant account: lower first.' }),
    status: z.string().meta({ description: '`created` once the connection is usable.' }),
    accepted_currencies: z.array(z.string()),
    accepted_countries: z.array(z.string()),
    payment_method_tokenization_enabled: z.boolean(),
    network_tokens_enabled: z.boolean(),
    open_loop: z.boolean(),
    settlement_reporting_enabled: z.boolean(),
    three_d_secure_enabled: z.boolean(),
    merchant_profile: z.record(z.string(), merchantProfileSchemeSummary.nullable()).nullable(),
    webhook_url: z.string().nullable(),
    fields: z
      .array(z.object({ key: z.string(), value: z.string() }))
      .meta({ description: 'The credentials; fields the definition marks secret are never returned.' }),
    reporting_fields: z.array(z.object({ key: z.string(), value: z.string() })),
    capabilities: paymentServiceCapabilitiesSchema,
    is_deleted: z.boolean(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'PaymentService' });

export type PaymentService = z.infer<typeof paymentServiceSchema>;

export const paymentServicesSchema = z
  .object({
    items: z.array(paymentServiceSchema),
    limit: z.number().int(),
    next_cursor: z.string().nullable(),
    previous_cursor: z.string().nullable(),
  })
  .meta({ id: 'PaymentServices' });

const settingsShape = {
  position: z
    .int()
    .min(0)
    .max(1_000_000)
    .optional()
    .meta({ description: 'Routing order: lower first. Default: after the last one.' }),
  accepted_currencies: z.array(currency).min(1).max(300),
  accepted_countries: z.array(country).min(1).max(300),
  active: z.boolean().optional(),
  three_d_secure_enabled: z.boolean().optional(),
  merchant_profile: z
    .record(z.string().max(50), merchantProfileScheme)
    .optional()
    .meta({ description: 'Per card scheme; replaces the whole profile.' }),
  payment_method_tokenization_enabled: z.boolean().optional(),
  network_tokens_enabled: z.boolean().optional(),
  open_loop: z.boolean().optional(),
  settlement_reporting_enabled: z.boolean().optional(),
  capabilities: paymentServiceCapabilitiesInputSchema.optional(),
};

const displayName = z.string().max(200);

const fieldsDescription = `The credentials and settings the definition takes, by key:
${definitionFieldsDescription()}

A secret field is never answered back; a required one must be sent.`;

export const paymentServiceCreateSchema = z
  .object({
    display_name: displayName,
    payment_service_definition_id: z.string().min(1).max(100),
    fields: z.array(field).max(100).meta({ description: fieldsDescription }),
    reporting_fields: z.array(field).max(100).optional(),
    ...settingsShape,
  })
  .strict()
  .meta({
    id: 'PaymentServiceCreate',
    examples: [
      {
        display_name: 'Adyen cards',
        payment_service_definition_id: 'adyen-card',
        fields: [
          { key: 'api_key', value: 'AQE…' },
          { key: 'merchant_account', value: 'YourCompanyECOM' },
          { key: 'hmac_key', value: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056' },
        ],
        accepted_currencies: ['EUR'],
        accepted_countries: ['NL'],
      },
      {
        display_name: 'Stripe cards',
        payment_service_definition_id: 'stripe-card',
        fields: [
          { key: 'secret_key', value: 'sk_test_…' },
          { key: 'webhook_secret', value: 'whsec_…' },
        ],
        accepted_currencies: ['USD'],
        accepted_countries: ['US'],
      },
    ],
  });

export const paymentServiceUpdateSchema = z
  .object({
    display_name: displayName.optional(),
    fields: z
      .array(field)
      .max(100)
      .optional()
      .meta({
        description: `Sets the fields sent, by key; an empty value removes the field. The keys of each definition:
${definitionFieldsDescription()}`,
      }),
    reporting_fields: z
      .array(field)
      .max(100)
      .optional()
      .meta({ description: 'Sets the reporting fields sent, by key; an empty value removes the field.' }),
    ...settingsShape,
    accepted_currencies: settingsShape.accepted_currencies.optional(),
    accepted_countries: settingsShape.accepted_countries.optional(),
  })
  .strict()
  .meta({ id: 'PaymentServiceUpdate', description: 'Only the fields sent change.' });

export type PaymentServiceCreateInput = z.infer<typeof paymentServiceCreateSchema>;
export type PaymentServiceUpdateInput = z.infer<typeof paymentServiceUpdateSchema>;

export const paymentServiceListQuerySchema = z.object({
  deleted: z
    .enum(['true', 'false'])
    .transform((value) => value === 'true')
    .optional()
    .meta({ description: 'true: include deleted payment services (with `is_deleted: true`).' }),
  method: z.string().max(50).optional(),
});

/** What the gateway asks the transactions service for a page of payment services. */
export interface PaymentServiceListRequest {
  readonly merchant_account_id: string;
  readonly cursor?: string | null;
  readonly limit: number;
  readonly deleted?: boolean;
  readonly method?: string;
}

const definitionField = z.object({
  key: z.string(),
  display_name: z.string(),
  required: z.boolean(),
  format: z.string().meta({ description: 'text, multiline, number, timezone or boolean' }),
  secret: z.boolean(),
});

/**
 * How a checkout shows the provider's approval page and what cart it takes. Every member is present with a value:
 * the reference client (`@gr4vy/sdk`) refuses a definition whose configuration has a null or missing member.
 */
export const paymentServiceConfigurationSchema = z
  .object({
    approval_ui_target: z.string().meta({ description: '`any` (an iframe or a new window) or `new_window`.' }),
    approval_ui_height: z
      .string()
      .meta({ description: 'Height of the approval page when framed, a CSS length such as `600px`.' }),
    approval_ui_width: z
      .string()
      .meta({ description: 'Width of the approval page when framed, a CSS length such as `500px`.' }),
    cart_items_limit: z.int().meta({ description: 'The most cart items a payment through this definition takes.' }),
    cart_items_required: z.boolean(),
    cart_items_should_match_amount: z.boolean(),
  })
  .meta({ id: 'PaymentServiceConfiguration' });

export const paymentServiceDefinitionSchema = z
  .object({
    id: z.string(),
    type: z.literal('payment-service-definition'),
    display_name: z.string(),
    method: z.string(),
    fields: z.array(definitionField),
    reporting_fields: z.array(definitionField),
    supported_currencies: z.array(z.string()),
    supported_countries: z.array(z.string()),
    mode: z.string(),
    icon_url: z.string().nullable(),
    supported_features: z.record(z.string(), z.boolean()),
    capabilities: paymentServiceCapabilitiesSchema,
    required_checkout_fields: z.array(z.unknown()),
    configuration: paymentServiceConfigurationSchema,
    supported_integration_clients: z.array(z.string()).nullable(),
  })
  .meta({ id: 'PaymentServiceDefinition' });

export type PaymentServiceDefinition = z.infer<typeof paymentServiceDefinitionSchema>;

export const paymentServiceDefinitionsSchema = z
  .object({
    items: z.array(paymentServiceDefinitionSchema),
    limit: z.number().int(),
    next_cursor: z.string().nullable(),
    previous_cursor: z.string().nullable(),
  })
  .meta({ id: 'PaymentServiceDefinitions' });
