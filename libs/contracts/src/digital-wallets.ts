/**
 * Digital wallets on the wire — a merchant account's registration with a wallet provider (Apple Pay, Google Pay,
 * Click to Pay, Paze) — and the vault service's RPC patterns behind them (`vault.digital-wallets.*`).
 * Shapes of `../shared/reference/wire-compat.md` (DigitalWallet, DigitalWalletCreate, DigitalWalletUpdate); `paze`
 * and `decryption_key` are ours (docs/paze.md).
 */
import { z } from 'zod';

export const digitalWalletPatterns = {
  list: 'vault.digital-wallets.list',
  create: 'vault.digital-wallets.create',
  get: 'vault.digital-wallets.get',
  update: 'vault.digital-wallets.update',
  delete: 'vault.digital-wallets.delete',
} as const;

/** The reference's providers, and Paze (US only; the merchant decrypts its payloads, so it brings a key). */
export const digitalWalletProviders = ['apple', 'google', 'click-to-pay', 'paze'] as const;
export type DigitalWalletProvider = (typeof digitalWalletProviders)[number];

/** Apple Pay's limit of domains per merchant registration. */
export const MAX_DIGITAL_WALLET_DOMAINS = 99;

const timestamp = z.iso.datetime({ offset: true });

/**
 * A DNS host name: RFC 1123 labels, then a top-level domain of letters (or an IDN's `xn--` form), so no IP address,
 * scheme, port or path. No lookaheads: the pattern also drives the OpenAPI document and its fuzzing.
 */
const hostName = z
  .string()
  .max(253)
  .regex(
    /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})$/,
    'must be a host name such as shop.example.com',
  )
  .meta({ description: 'A host name the wallet is used on (e.g. `shop.example.com`): no scheme, port or path.' });

const domainNames = z
  .array(hostName)
  .max(MAX_DIGITAL_WALLET_DOMAINS)
  .refine(
    (names) => new Set(names.map((name) => name.toLowerCase())).size === names.length,
    'must not repeat a domain name',
  )
  .meta({ description: `Up to ${MAX_DIGITAL_WALLET_DOMAINS} host names, each once (case-insensitive).` });

const merchantName = z
  .string()
  .min(1)
  .max(200)
  .meta({ description: 'The merchant name the wallet provider registers.' });
const merchantDisplayName = z
  .string()
  .min(1)
  .max(200)
  .meta({ description: 'The name shown to the buyer in the wallet sheet.' });
const merchantUrl = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .meta({ description: "The merchant's web site (http or https)." });
const merchantCountryCode = z
  .string()
  .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code (two upper-case letters)')
  .meta({ description: "ISO 3166-1 alpha-2 country of the merchant's business; Paze takes US businesses only." });

/**
 * Validated beyond its shape by the service (a 400 naming the field when it is not a usable key). No length limit
 * here on purpose: a 422 echoes the value it refuses, and this one must never be echoed.
 */
const decryptionKey = z
  .string()
  .min(1)
  .meta({
    description:
      'Paze only (required for it, refused for the others): the PKCS#8 PEM private key (EC P-256, or RSA of 2048 bits or more) whose ' +
      'public key Paze encrypts payloads to. Stored sealed, never shown again: `fields.decryption_key_id` is its public key’s RFC 7638 thumbprint.',
  });

// ---- request bodies ----------------------------------------------------------------------------------------

export const digitalWalletCreateSchema = z
  .object({
    provider: z.enum(digitalWalletProviders),
    merchant_name: merchantName,
    merchant_display_name: merchantDisplayName.nullish(),
    merchant_url: merchantUrl.nullish(),
    merchant_country_code: merchantCountryCode.nullish(),
    domain_names: domainNames.default([]),
    accept_terms_and_conditions: z
      .boolean()
      .meta({ description: "Must be true: the provider's terms are accepted on the merchant's behalf." }),
    decryption_key: decryptionKey.optional(),
  })
  .strict()
  .meta({
    id: 'DigitalWalletCreate',
    description: 'A wallet provider to register the merchant account with; one per provider and merchant account.',
  });
export type DigitalWalletCreateInput = z.infer<typeof digitalWalletCreateSchema>;

export const digitalWalletUpdateSchema = z
  .object({
    merchant_name: merchantName.optional(),
    merchant_display_name: merchantDisplayName.nullish().meta({ description: 'null clears it.' }),
    merchant_url: merchantUrl.nullish().meta({ description: 'null clears it.' }),
    merchant_country_code: merchantCountryCode.nullish().meta({ description: 'null clears it.' }),
    domain_names: domainNames.optional().meta({ description: 'Replaces the list.' }),
    decryption_key: decryptionKey
      .optional()
      .meta({ description: 'Paze only: replaces the decryption key (key rotation).' }),
  })
  .strict()
  .meta({ id: 'DigitalWalletUpdate', description: 'Only the fields sent change; the provider cannot.' });
export type DigitalWalletUpdateInput = z.infer<typeof digitalWalletUpdateSchema>;

// ---- responses -----------------------------------------------------------------------------------------------

export const digitalWalletSchema = z
  .object({
    type: z.literal('digital-wallet'),
    id: z.uuid(),
    merchant_account_id: z.string(),
    provider: z.enum(digitalWalletProviders),
    merchant_name: z.string(),
    merchant_display_name: z.string().nullable(),
    merchant_url: z.string().nullable(),
    merchant_country_code: z.string().nullable(),
    domain_names: z.array(z.string()),
    active_certificate_count: z.int().meta({ description: 'Apple Pay certificates are not managed yet: always 0.' }),
    pending_certificate_count: z.int(),
    expired_certificate_count: z.int(),
    fields: z.record(z.string(), z.unknown()).nullable().meta({
      description:
        'Paze: `{decryption_key_id}`, the RFC 7638 thumbprint of the decryption key’s public key (never the key). Others: null.',
    }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'DigitalWallet' });
export type DigitalWallet = z.infer<typeof digitalWalletSchema>;

export const digitalWalletsSchema = z.object({ items: z.array(digitalWalletSchema) }).meta({ id: 'DigitalWallets' });

// ---- RPC payloads ------------------------------------------------------------------------------------------

/** Every digital wallet RPC acts in the request's merchant account. */
export interface DigitalWalletScope {
  readonly merchant_account_id: string;
}

export interface DigitalWalletRef extends DigitalWalletScope {
  readonly digital_wallet_id: string;
}

export interface DigitalWalletCreateRequest extends DigitalWalletScope {
  readonly body: DigitalWalletCreateInput;
}

export interface DigitalWalletUpdateRequest extends DigitalWalletRef {
  readonly body: DigitalWalletUpdateInput;
}
