/**
 * Stored payment methods on the wire (`/payment-methods`, `/buyers/payment-methods`): shapes of
 * `../shared/reference/wire-compat.md` (PaymentMethod, PaymentMethodSummary, CardPaymentMethodCreate,
 * CheckoutSessionPaymentMethodCreate), rules of the spec (Events rule 3), and the RPC patterns behind them.
 */
import { z } from 'zod';
import { cardNumber, expirationDate } from './transactions';

export const paymentMethodPatterns = {
  create: 'vault.payment-methods.create',
  get: 'vault.payment-methods.get',
  list: 'vault.payment-methods.list',
  delete: 'vault.payment-methods.delete',
  buyerList: 'vault.payment-methods.buyer-list',
} as const;

const timestamp = z.iso.datetime({ offset: true });
const buyerId = z.uuid();
const buyerExternalIdentifier = z.string().min(1).max(200);
const externalIdentifier = z.string().min(1).max(300);
const securityCode = z.string().regex(/^\d{3,4}$/, 'must be 3 or 4 digits');

export const paymentMethodStatuses = [
  'processing',
  'buyer_approval_required',
  'succeeded',
  'failed',
  'paused',
] as const;
export type PaymentMethodStatus = (typeof paymentMethodStatuses)[number];

const buyerRef = {
  buyer_id: buyerId.nullish(),
  buyer_external_identifier: buyerExternalIdentifier.nullish(),
  external_identifier: externalIdentifier.nullish(),
};
const oneBuyer = <T extends { buyer_id?: string | null; buyer_external_identifier?: string | null }>(body: T) =>
  !(body.buyer_id != null && body.buyer_external_identifier != null);

export const cardPaymentMethodCreateSchema = z
  .object({
    method: z.literal('card'),
    number: cardNumber,
    expiration_date: expirationDate,
    security_code: securityCode
      .nullish()
      .meta({ description: 'Checked by nobody here and never stored: accepted for compatibility, then dropped.' }),
    card_type: z.string().max(20).nullish(),
    ...buyerRef,
  })
  .meta({
    id: 'CardPaymentMethodCreate',
    description: 'A card to store in the vault. `buyer_id` and `buyer_external_identifier` exclude each other.',
  });

export const checkoutSessionPaymentMethodCreateSchema = z
  .object({
    method: z.literal('checkout-session'),
    id: z.uuid().meta({
      description: 'A checkout session whose card fields were filled in: its card is stored, and the session is used.',
    }),
    ...buyerRef,
  })
  .meta({ id: 'CheckoutSessionPaymentMethodCreate' });

export const paymentMethodCreateSchema = z
  .discriminatedUnion('method', [cardPaymentMethodCreateSchema, checkoutSessionPaymentMethodCreateSchema])
  .refine(oneBuyer, {
    message: 'give either buyer_id or buyer_external_identifier, not both',
    path: ['buyer_external_identifier'],
  });
export type PaymentMethodCreateInput = z.infer<typeof paymentMethodCreateSchema>;

const many = <T extends z.ZodType>(item: T) =>
  z.union([item, z.array(item)]).transform((value) => (Array.isArray(value) ? value : [value]));

export const paymentMethodListQuerySchema = z.object({
  buyer_id: buyerId.optional(),
  buyer_external_identifier: buyerExternalIdentifier.optional(),
  external_identifier: externalIdentifier.optional(),
  status: many(z.enum(paymentMethodStatuses)).optional(),
});
export type PaymentMethodListQuery = z.infer<typeof paymentMethodListQuerySchema>;

export const buyerPaymentMethodListQuerySchema = z
  .object({
    buyer_id: buyerId.optional(),
    buyer_external_identifier: buyerExternalIdentifier.optional(),
    country: z
      .string()
      .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code')
      .optional(),
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code')
      .optional(),
    sort_by: z
      .enum(['last_used_at'])
      .default('last_used_at')
      .meta({ description: 'The only sort field: `last_used_at` (never used: last).' }),
    order_by: z.enum(['asc', 'desc']).default('desc'),
  })
  .refine((query) => (query.buyer_id !== undefined) !== (query.buyer_external_identifier !== undefined), {
    message: 'give buyer_id or buyer_external_identifier (one of them)',
    path: ['buyer_id'],
  });
export type BuyerPaymentMethodListQuery = z.infer<typeof buyerPaymentMethodListQuerySchema>;

// ---- responses -----------------------------------------------------------------------------------------------

const summaryShape = {
  type: z.literal('payment-method'),
  id: z.uuid(),
  merchant_account_id: z.string(),
  method: z.string(),
  mode: z.string().nullable(),
  scheme: z.string().nullable(),
  label: z.string().nullable().meta({ description: 'The last four digits of the card.' }),
  expiration_date: z.string().nullable().meta({ description: 'MM/YY' }),
  fingerprint: z
    .string()
    .nullable()
    .meta({ description: 'The same card in the same merchant account: the same value.' }),
  details: z
    .object({ bin: z.string().nullable(), card_type: z.string().nullable(), card_issuer_name: z.string().nullable() })
    .nullable(),
  approval_url: z.string().nullable(),
  country: z.string().nullable(),
  currency: z.string().nullable(),
  additional_schemes: z.array(z.string()).nullable(),
  has_replacement: z.boolean().meta({ description: 'The account updater replaced the card number.' }),
  last_replaced_at: timestamp.nullable(),
  usage_count: z.int(),
  cit_usage_count: z.int(),
  last_used_at: timestamp.nullable(),
  cit_last_used_at: timestamp.nullable(),
};

export const paymentMethodSummarySchema = z.object(summaryShape).meta({ id: 'PaymentMethodSummary' });
export type PaymentMethodSummary = z.infer<typeof paymentMethodSummarySchema>;

export const paymentMethodSchema = z
  .object({
    ...summaryShape,
    status: z.enum(paymentMethodStatuses).meta({
      description:
        'A card stored through the API is `succeeded`; one stored during a purchase stays `processing` until the provider confirms it vaulted the card, and then `failed` if it never does.',
    }),
    buyer: z.record(z.string(), z.unknown()).nullable().meta({ description: 'The buyer the method is stored for.' }),
    external_identifier: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'PaymentMethod' });
export type PaymentMethod = z.infer<typeof paymentMethodSchema>;

export const paymentMethodsSchema = z
  .object({
    items: z.array(paymentMethodSchema),
    limit: z.int(),
    next_cursor: z.string().nullable(),
    previous_cursor: z.string().nullable(),
  })
  .meta({ id: 'PaymentMethods' });
export const paymentMethodSummariesSchema = z
  .object({ items: z.array(paymentMethodSummarySchema) })
  .meta({ id: 'PaymentMethodSummaries' });

// ---- RPC payloads --------------------------------------------------------------------------------------------

export interface PaymentMethodScope {
  readonly merchant_account_id: string;
}
export interface PaymentMethodRef extends PaymentMethodScope {
  readonly payment_method_id: string;
}
export interface PaymentMethodCreateRequest extends PaymentMethodScope {
  readonly body: PaymentMethodCreateInput;
}
export interface PaymentMethodListRequest extends PaymentMethodScope, PaymentMethodListQuery {
  readonly limit: number;
  readonly cursor?: string | null;
}
export interface BuyerPaymentMethodListRequest extends PaymentMethodScope, BuyerPaymentMethodListQuery {}
