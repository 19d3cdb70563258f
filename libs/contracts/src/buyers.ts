/**
 * Buyers on the wire — a merchant account's buyers with their billing details, and each buyer's shipping details —
 * and the vault service's RPC patterns behind them (`vault.buyers.*`). Shapes of
 * `../shared/reference/wire-compat.md` (Buyer, BuyerCreate, BuyerUpdate, BillingDetails, Address, TaxId,
 * ShippingDetails, ShippingDetailsCreate, ShippingDetailsUpdate, Buyers, ShippingDetailsList).
 */
import { z } from 'zod';

export const buyerPatterns = {
  list: 'vault.buyers.list',
  create: 'vault.buyers.create',
  get: 'vault.buyers.get',
  update: 'vault.buyers.update',
  delete: 'vault.buyers.delete',
  shippingDetailsList: 'vault.buyers.shipping-details.list',
  shippingDetailsCreate: 'vault.buyers.shipping-details.create',
  shippingDetailsGet: 'vault.buyers.shipping-details.get',
  shippingDetailsUpdate: 'vault.buyers.shipping-details.update',
  shippingDetailsDelete: 'vault.buyers.shipping-details.delete',
} as const;

/** The reference's TaxIdKind list (country prefix, then the kind of number). */
export const taxIdKinds = [
  'ae.trn',
  'au.abn',
  'ar.dni',
  'ar.cuil',
  'ar.cuit',
  'br.cnpj',
  'br.cpf',
  'ca.bn',
  'ca.gst_hst',
  'ca.pst_bc',
  'ca.pst_mb',
  'ca.pst_sk',
  'ca.qst',
  'ch.vat',
  'cl.tin',
  'co.itin',
  'co.nit',
  'co.cc',
  'co.ce',
  'co.de',
  'co.rc',
  'co.ti',
  'co.passport',
  'es.cif',
  'eu.vat',
  'gb.vat',
  'hk.br',
  'id.nik',
  'id.npwp',
  'in.gst',
  'in.pan',
  'jp.cn',
  'jp.rn',
  'kr.brn',
  'li.uid',
  'mx.curp',
  'mx.rfc',
  'my.frp',
  'my.itn',
  'my.nric',
  'my.sst',
  'no.vat',
  'nz.gst',
  'pe.ruc',
  'ph.tin',
  'ru.inn',
  'ru.kpp',
  'sa.vat',
  'sg.gst',
  'sg.uen',
  'th.id',
  'th.vat',
  'tw.vat',
  'us.ein',
  'za.vat',
  'bo.ci',
  'uy.rut',
  'uy.ci',
] as const;
export type TaxIdKind = (typeof taxIdKinds)[number];

export const MAX_BUYER_DISPLAY_NAME_LENGTH = 200;
export const MAX_BUYER_EXTERNAL_IDENTIFIER_LENGTH = 200;

const timestamp = z.iso.datetime({ offset: true });
const text = (max: number) => z.string().min(1).max(max);

// ---- value objects (requests and responses alike) ---------------------------------------------------------------
// Lengths are those of the guest buyer of a transaction (`guestBuyerSchema`): the same person fits both.

export const addressSchema = z
  .object({
    city: text(100).nullish(),
    country: z
      .string()
      .regex(/^[A-Z]{2}$/, 'must be a 2-letter ISO 3166-1 country code in upper case')
      .nullish()
      .meta({ description: 'ISO 3166-1 alpha-2, e.g. `US`.' }),
    postal_code: text(50).nullish(),
    state: text(100).nullish(),
    state_code: text(10).nullish().meta({ description: 'ISO 3166-2 subdivision code, e.g. `US-CA`.' }),
    house_number_or_name: text(100).nullish(),
    line1: text(200).nullish(),
    line2: text(200).nullish(),
    organization: text(200).nullish(),
  })
  .strict()
  .meta({ id: 'Address' });
export type AddressInput = z.infer<typeof addressSchema>;

export const taxIdSchema = z
  .object({
    value: text(50).meta({ description: 'The tax number.' }),
    kind: z
      .enum(taxIdKinds)
      .meta({ description: 'The kind of tax number: country, then kind (`gb.vat`, `us.ein`, …).' }),
  })
  .strict()
  .meta({ id: 'TaxId' });

/** What billing and shipping details share: a person and where they are. */
const contactShape = {
  first_name: text(100).nullish(),
  last_name: text(100).nullish(),
  email_address: z.email().max(320).nullish(),
  phone_number: z
    .string()
    .regex(/^\+[1-9]\d{1,14}$/, 'must be an E.164 phone number, e.g. +14155552671')
    .nullish()
    .meta({ description: 'E.164, e.g. `+14155552671`.' }),
  address: addressSchema.nullish(),
};

export const billingDetailsSchema = z
  .object({ ...contactShape, tax_id: taxIdSchema.nullish() })
  .strict()
  .meta({
    id: 'BillingDetails',
    description: "The buyer's billing details; sent on update, it replaces the buyer's billing details as a whole.",
  });
export type BillingDetailsInput = z.infer<typeof billingDetailsSchema>;

/** Billing details as stored and answered: every field present, null when not given. */
export interface Address {
  readonly city: string | null;
  readonly country: string | null;
  readonly postal_code: string | null;
  readonly state: string | null;
  readonly state_code: string | null;
  readonly house_number_or_name: string | null;
  readonly line1: string | null;
  readonly line2: string | null;
  readonly organization: string | null;
}
export interface Contact {
  readonly first_name: string | null;
  readonly last_name: string | null;
  readonly email_address: string | null;
  readonly phone_number: string | null;
  readonly address: Address | null;
}
export interface BillingDetails extends Contact {
  readonly tax_id: { readonly value: string; readonly kind: TaxIdKind } | null;
}

// ---- request bodies ----------------------------------------------------------------------------------------------

const buyerShape = {
  display_name: text(MAX_BUYER_DISPLAY_NAME_LENGTH)
    .nullish()
    .meta({ description: "The buyer's name as shown in the dashboard." }),
  external_identifier: text(MAX_BUYER_EXTERNAL_IDENTIFIER_LENGTH).nullish().meta({
    description:
      'Your identifier of the buyer: unique among the buyers of the merchant account (409 `duplicate_record` otherwise).',
  }),
  billing_details: billingDetailsSchema.nullish(),
  account_number: text(100)
    .nullish()
    .meta({ description: "The buyer's account number (e.g. for account funding transactions)." }),
};

export const buyerCreateSchema = z
  .object(buyerShape)
  .strict()
  .meta({ id: 'BuyerCreate', description: 'A new buyer of the merchant account.' });
export type BuyerCreateInput = z.infer<typeof buyerCreateSchema>;

export const buyerUpdateSchema = z
  .object(buyerShape)
  .strict()
  .meta({ id: 'BuyerUpdate', description: 'The fields to change: a field left out stays as it is, `null` clears it.' });
export type BuyerUpdateInput = z.infer<typeof buyerUpdateSchema>;

export const shippingDetailsCreateSchema = z
  .object(contactShape)
  .strict()
  .meta({ id: 'ShippingDetailsCreate', description: 'A delivery address of the buyer.' });
export type ShippingDetailsCreateInput = z.infer<typeof shippingDetailsCreateSchema>;

export const shippingDetailsUpdateSchema = z.object(contactShape).strict().meta({
  id: 'ShippingDetailsUpdate',
  description:
    'The fields to change: a field left out stays as it is, `null` clears it; `address` is replaced as a whole.',
});
export type ShippingDetailsUpdateInput = z.infer<typeof shippingDetailsUpdateSchema>;

// ---- queries -----------------------------------------------------------------------------------------------------

export const buyerListQuerySchema = z.object({
  external_identifier: text(MAX_BUYER_EXTERNAL_IDENTIFIER_LENGTH)
    .optional()
    .meta({ description: 'Only the buyer with exactly this external identifier.' }),
  search: text(MAX_BUYER_DISPLAY_NAME_LENGTH).optional().meta({
    description: 'Only buyers whose display name or external identifier contains this text (case-insensitive).',
  }),
});

// ---- responses ---------------------------------------------------------------------------------------------------

const nullableString = z.string().nullable();

const addressOutSchema = z
  .object({
    city: nullableString,
    country: nullableString,
    postal_code: nullableString,
    state: nullableString,
    state_code: nullableString,
    house_number_or_name: nullableString,
    line1: nullableString,
    line2: nullableString,
    organization: nullableString,
  })
  .meta({ id: 'AddressOutput' });

const contactOutShape = {
  first_name: nullableString,
  last_name: nullableString,
  email_address: nullableString,
  phone_number: nullableString,
  address: addressOutSchema.nullable(),
};

const billingDetailsOutSchema = z
  .object({ ...contactOutShape, tax_id: z.object({ value: z.string(), kind: z.string() }).nullable() })
  .meta({ id: 'BillingDetailsOutput' });

export const buyerSchema = z
  .object({
    type: z.literal('buyer'),
    id: z.uuid(),
    merchant_account_id: z.string(),
    display_name: nullableString,
    external_identifier: nullableString,
    billing_details: billingDetailsOutSchema.nullable(),
    account_number: nullableString,
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Buyer' });
export type Buyer = z.infer<typeof buyerSchema>;

export const buyersSchema = z
  .object({
    items: z.array(buyerSchema),
    limit: z.int(),
    next_cursor: z.string().nullable(),
    previous_cursor: z.string().nullable(),
  })
  .meta({ id: 'Buyers', description: 'A page of buyers, newest first.' });

export const shippingDetailsSchema = z
  .object({
    type: z.literal('shipping-details'),
    id: z.uuid(),
    buyer_id: z.uuid(),
    ...contactOutShape,
  })
  .meta({ id: 'ShippingDetails' });
export type ShippingDetails = z.infer<typeof shippingDetailsSchema>;

export const shippingDetailsListSchema = z
  .object({ items: z.array(shippingDetailsSchema) })
  .meta({ id: 'ShippingDetailsList', description: "The buyer's shipping details, oldest first." });

// ---- RPC payloads ------------------------------------------------------------------------------------------------

/**
 * The buyer an embed token is limited to, as the gateway passes it with a request that came in through the `embed`
 * scope: the stored payment methods and stored gift cards the request uses must be this buyer's (403 otherwise).
 * null: the token pins no buyer, so it may use no stored instrument at all (docs/embed-tokens.md).
 */
export type EmbedBuyerPin = { readonly buyer_id: string } | { readonly buyer_external_identifier: string } | null;

/** Every buyer RPC acts in the request's merchant account; another account's buyer does not exist. */
export interface BuyerScope {
  readonly merchant_account_id: string;
}

export interface BuyerRef extends BuyerScope {
  readonly buyer_id: string;
}

export interface BuyerCreateRequest extends BuyerScope {
  readonly body: BuyerCreateInput;
}

export interface BuyerUpdateRequest extends BuyerRef {
  readonly body: BuyerUpdateInput;
}

/** `list`: newest first, paged. */
export interface BuyerListRequest extends BuyerScope {
  readonly limit: number;
  readonly cursor?: string | null;
  readonly external_identifier?: string;
  readonly search?: string;
}

export interface ShippingDetailsRef extends BuyerRef {
  readonly shipping_details_id: string;
}

export interface ShippingDetailsCreateRequest extends BuyerRef {
  readonly body: ShippingDetailsCreateInput;
}

export interface ShippingDetailsUpdateRequest extends ShippingDetailsRef {
  readonly body: ShippingDetailsUpdateInput;
}
