/** Merchant accounts and their 3-D Secure configurations on the wire, and the identity RPC patterns behind them. */
import { z } from 'zod';

export const merchantAccountPatterns = {
  list: 'identity.merchant-accounts.list',
  get: 'identity.merchant-accounts.get',
  create: 'identity.merchant-accounts.create',
  update: 'identity.merchant-accounts.update',
} as const;

export const threeDsConfigurationPatterns = {
  list: 'identity.three-ds-configurations.list',
  create: 'identity.three-ds-configurations.create',
  update: 'identity.three-ds-configurations.update',
  delete: 'identity.three-ds-configurations.delete',
} as const;

export const cardSchemeValues = [
  'accel',
  'amex',
  'bancontact',
  'carte-bancaire',
  'cirrus',
  'culiance',
  'dankort',
  'diners-club',
  'discover',
  'eftpos-australia',
  'elo',
  'hipercard',
  'jcb',
  'maestro',
  'mastercard',
  'mir',
  'nyce',
  'other',
  'pulse',
  'qcard',
  'rupay',
  'star',
  'uatp',
  'unionpay',
  'visa',
] as const;
/** Closed on requests; responses stay open (`string`) so new schemes never break clients. */
const cardScheme = z.enum(cardSchemeValues);

const timestamp = z.iso.datetime({ offset: true });

export const merchantAccountSchema = z
  .object({
    type: z.literal('merchant-account'),
    id: z.string(),
    display_name: z.string(),
    account_updater_enabled: z.boolean(),
    account_updater_request_encryption_key: z.string().nullable(),
    account_updater_request_encryption_key_id: z.string().nullable(),
    account_updater_response_decryption_key: z.string().nullable(),
    account_updater_response_decryption_key_id: z.string().nullable(),
    over_capture_amount: z.number().int().nullable().meta({
      description: 'How far (minor units) captures may exceed the authorized amount; null: no over-capture by amount.',
    }),
    over_capture_percentage: z.number().int().nullable().meta({
      description:
        'How far (percent of the authorized amount) captures may exceed it; null: no over-capture by percentage.',
    }),
    multiple_captures_enabled: z.boolean().meta({
      description:
        'Whether a transaction may be captured in several parts; a multiple capture also needs a payment service that supports it.',
    }),
    loon_client_key: z.string().nullable(),
    loon_secret_key: z.string().nullable(),
    loon_accepted_schemes: z.array(z.string()).nullable(),
    visa_network_tokens_requestor_id: z.string().nullable(),
    visa_network_tokens_app_id: z.string().nullable(),
    amex_network_tokens_requestor_id: z.string().nullable(),
    amex_network_tokens_app_id: z.string().nullable(),
    mastercard_network_tokens_requestor_id: z.string().nullable(),
    mastercard_network_tokens_app_id: z.string().nullable(),
    discover_network_tokens_requestor_id: z.string().nullable(),
    discover_network_tokens_app_id: z.string().nullable(),
    async_network_tokens_enabled: z.boolean(),
    network_tokens_enabled: z.boolean().meta({
      description:
        "Whether the account's stored cards get network tokens: provisioned automatically when a card is stored and one of its card payment services has network tokens enabled. A Discover card also needs the Discover requestor id and app id.",
    }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'MerchantAccount' });

export type MerchantAccount = z.infer<typeof merchantAccountSchema>;

const settingText = z.string().max(1000).nullish();
/** A key the account is given and never shows again in an error's echoed `input`. */
const secretSetting = (maxLength: number) => z.string().max(maxLength).meta({ writeOnly: true }).nullish();
const settingsShape = {
  account_updater_enabled: z.boolean().optional(),
  account_updater_request_encryption_key: z.string().max(10_000).nullish(),
  account_updater_request_encryption_key_id: settingText,
  account_updater_response_decryption_key: secretSetting(10_000),
  account_updater_response_decryption_key_id: settingText,
  over_capture_amount: z.int().min(0).nullish(),
  over_capture_percentage: z.int().min(0).nullish(),
  multiple_captures_enabled: z.boolean().optional(),
  loon_client_key: settingText,
  loon_secret_key: secretSetting(1000),
  loon_accepted_schemes: z.array(cardScheme).max(cardSchemeValues.length).nullish(),
  visa_network_tokens_requestor_id: settingText,
  visa_network_tokens_app_id: settingText,
  amex_network_tokens_requestor_id: settingText,
  amex_network_tokens_app_id: settingText,
  mastercard_network_tokens_requestor_id: settingText,
  mastercard_network_tokens_app_id: settingText,
  discover_network_tokens_requestor_id: settingText,
  discover_network_tokens_app_id: settingText,
  async_network_tokens_enabled: z.boolean().optional(),
  network_tokens_enabled: z.boolean().optional().meta({ description: 'Default false.' }),
};

const displayName = z.string().max(200);

export const merchantAccountCreateSchema = z
  .object({
    id: z
      .string()
      .min(1)
      .max(64)
      .meta({ description: 'Chosen by you: lower-case letters, digits and hyphens, starting with a letter or digit.' }),
    display_name: displayName,
    ...settingsShape,
  })
  .strict()
  .meta({ id: 'MerchantAccountCreate' });

export const merchantAccountUpdateSchema = z
  .object({
    display_name: displayName.optional(),
    ...settingsShape,
  })
  .strict()
  .meta({ id: 'MerchantAccountUpdate', description: 'Only the fields sent change; null clears a setting.' });

export type MerchantAccountCreateInput = z.infer<typeof merchantAccountCreateSchema>;
export type MerchantAccountUpdateInput = z.infer<typeof merchantAccountUpdateSchema>;

/** What the gateway asks identity for a page of merchant accounts. */
export interface MerchantAccountListRequest {
  readonly cursor?: string | null;
  readonly limit: number;
  readonly search?: string | null;
  /** The caller's key is limited to these accounts; empty or absent: every account. */
  readonly merchant_account_ids?: readonly string[];
}

const currency = z
  .string()
  .regex(/^[A-Z]{3}$/)
  .meta({ description: 'ISO 4217 currency code, three upper-case letters.' });
const metadata = z
  .record(z.string().max(100), z.string().max(1000))
  .refine((value) => Object.keys(value).length <= 50, { message: 'At most 50 keys' });

export const threeDsConfigurationSchema = z
  .object({
    type: z.literal('merchant-account.three-ds-configuration'),
    id: z.uuid(),
    merchant_account_id: z.string(),
    merchant_acquirer_bin: z.string(),
    merchant_acquirer_id: z.string(),
    merchant_name: z.string(),
    merchant_country_code: z.string(),
    merchant_category_code: z.string(),
    merchant_url: z.string(),
    scheme: z.string().nullable().meta({ description: 'The card scheme the configuration applies to; null: any.' }),
    currency: z.string().nullable().meta({ description: 'ISO 4217; null: any currency.' }),
    metadata: z.record(z.string(), z.string()),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'MerchantAccountThreeDSConfiguration' });

export type ThreeDsConfiguration = z.infer<typeof threeDsConfigurationSchema>;

export const threeDsConfigurationsSchema = z
  .object({ items: z.array(threeDsConfigurationSchema) })
  .meta({ id: 'MerchantAccountThreeDSConfigurations' });

const text = (max: number) => z.string().max(max);
const threeDsFields = {
  merchant_acquirer_bin: text(11),
  merchant_acquirer_id: text(35),
  merchant_name: text(40),
  merchant_country_code: text(3),
  merchant_category_code: text(4),
  merchant_url: text(2048),
};

export const threeDsConfigurationCreateSchema = z
  .object({
    ...threeDsFields,
    scheme: cardScheme.nullish(),
    currency: currency.nullish(),
    metadata: metadata.default({}),
  })
  .strict()
  .meta({ id: 'MerchantAccountThreeDSConfigurationCreate' });

export const threeDsConfigurationUpdateSchema = z
  .object({
    merchant_acquirer_bin: threeDsFields.merchant_acquirer_bin.optional(),
    merchant_acquirer_id: threeDsFields.merchant_acquirer_id.optional(),
    merchant_name: threeDsFields.merchant_name.optional(),
    merchant_country_code: threeDsFields.merchant_country_code.optional(),
    merchant_category_code: threeDsFields.merchant_category_code.optional(),
    merchant_url: threeDsFields.merchant_url.optional(),
    scheme: cardScheme.nullish(),
    currency: currency.nullish(),
    metadata: metadata.optional().meta({ description: 'Replaces the metadata.' }),
  })
  .strict()
  .meta({
    id: 'MerchantAccountThreeDSConfigurationUpdate',
    description: 'Only the fields sent change; null clears scheme or currency.',
  });

export const threeDsConfigurationListQuerySchema = z.object({ currency: currency.optional() });

export type ThreeDsConfigurationCreateInput = z.infer<typeof threeDsConfigurationCreateSchema>;
export type ThreeDsConfigurationUpdateInput = z.infer<typeof threeDsConfigurationUpdateSchema>;
