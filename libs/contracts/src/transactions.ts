/**
 * Transactions, captures, voids, cancels and refunds on the wire (shapes of `../shared/reference/wire-compat.md`,
 * rules of the spec), and the transactions service's RPC patterns behind them.
 */
import { z } from 'zod';
import type { ThreeDsConfiguration } from './merchant-accounts';
import type { CardHandOver } from './vault';
import type { EmbedBuyerPin } from './buyers';
import type { GiftCardHandOver } from './gift-cards';

/** The transactions service: its topic and the RPC patterns the gateway calls. */
export const transactionsTopic = 'transactions.events';

export const transactionsPatterns = {
  ping: 'transactions.ping',
  create: 'transactions.create',
  get: 'transactions.get',
  list: 'transactions.list',
  update: 'transactions.update',
  events: 'transactions.events.list',
  capture: 'transactions.capture',
  captures: 'transactions.captures.list',
  captureGet: 'transactions.captures.get',
  void: 'transactions.void',
  cancel: 'transactions.cancel',
  sync: 'transactions.sync',
  increment: 'transactions.authorization.increment',
  refund: 'transactions.refunds.create',
  refundAll: 'transactions.refunds.all',
  refunds: 'transactions.refunds.list',
  refundGet: 'transactions.refunds.get',
  refundById: 'transactions.refunds.by-id',
  notification: 'transactions.provider-notification',
  buyerReturn: 'transactions.buyer-return',
  actions: 'transactions.actions.list',
  settlementFile: 'transactions.settlement-files.ingest',
} as const;

const timestamp = z.iso.datetime({ offset: true });
const currency = z
  .string()
  .regex(/^[A-Z]{3}$/)
  .meta({ description: 'ISO 4217 currency code, three upper-case letters.' });
const country = z
  .string()
  .regex(/^[A-Z]{2}$/)
  .meta({ description: 'ISO 3166-1 alpha-2 country code, two upper-case letters.' });
/** Amounts in minor units, as the reference allows them. */
const amount = z.int().min(1).max(99_999_999);
const metadata = z
  .record(z.string().max(50), z.string().max(200))
  .refine((value) => Object.keys(value).length <= 20, 'at most 20 keys');
const externalIdentifier = z.string().min(1).max(300);

/** The Luhn check every real card number passes (ISO/IEC 7812-1). */
export function passesLuhn(digits: string): boolean {
  let total = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    total += digit;
  }
  return total % 10 === 0;
}

export const expirationDate = z
  .string()
  .regex(/^(0[1-9]|1[0-2])\/\d{2}$/, 'must be MM/YY')
  .meta({ description: 'MM/YY' });

export const cardNumber = z
  .string()
  .regex(/^\d{12,19}$/, 'must be 12 to 19 digits')
  .refine(passesLuhn, 'is not a valid card number (Luhn check)');

const securityCode = z.string().regex(/^\d{3,4}$/, 'must be 3 or 4 digits');

// ---- request bodies ----------------------------------------------------------------------------------------

export const cardPaymentMethodSchema = z
  .object({
    method: z.literal('card'),
    number: cardNumber,
    expiration_date: expirationDate,
    security_code: securityCode.optional(),
    external_identifier: externalIdentifier.nullish(),
    buyer_id: z.uuid().nullish(),
    buyer_external_identifier: z.string().max(200).nullish(),
    card_type: z.string().nullish(),
    redirect_url: z.url().max(2048).nullish(),
  })
  .meta({ id: 'CardPaymentMethodCreate' });

export const storedPaymentMethodSchema = z
  .object({
    method: z.literal('id'),
    id: z.uuid(),
    security_code: securityCode.optional(),
    redirect_url: z.url().max(2048).nullish(),
  })
  .meta({ id: 'TokenPaymentMethodCreate', description: 'A payment method stored in the vault, by id.' });

/**
 * The reference's redirect payment methods (RedirectPaymentMethodCreateMethod); a method without a connection that
 * serves it is refused at routing.
 */
export const redirectMethodValues = [
  'abitab',
  'affirm',
  'afterpay',
  'alipay',
  'alipayhk',
  'arcuspaynetwork',
  'bacs',
  'bancontact',
  'banked',
  'bcp',
  'becs',
  'bitpay',
  'blik',
  'boleto',
  'boost',
  'breb',
  'capitec',
  'cashapp',
  'clearpay',
  'dana',
  'dcb',
  'dlocal',
  'ebanx',
  'efecty',
  'eps',
  'everydaypay',
  'gcash',
  'gem',
  'gemds',
  'giropay',
  'givingblock',
  'gocardless',
  'gopay',
  'grabpay',
  'ideal',
  'kakaopay',
  'kcp',
  'khipu',
  'klarna',
  'latitude',
  'latitudeds',
  'laybuy',
  'linepay',
  'linkaja',
  'maybankqrpay',
  'mercadopago',
  'multibanco',
  'multipago',
  'netbanking',
  'nupay',
  'nequi',
  'oney_10x',
  'oney_12x',
  'oney_3x',
  'oney_4x',
  'oney_6x',
  'onlinebankingcz',
  'ovo',
  'oxxo',
  'p24',
  'pagoefectivo',
  'payid',
  'paymaya',
  'paypal',
  'paypalpaylater',
  'payto',
  'payvalida',
  'picpay',
  'pix',
  'pse',
  'rabbitlinepay',
  'rapipago',
  'razorpay',
  'redpagos',
  'scalapay',
  'sepa',
  'servipag',
  'shopeepay',
  'singteldash',
  'smartpay',
  'sofort',
  'spei',
  'stitch',
  'stripedd',
  'stripetoken',
  'tapi',
  'tapifintechs',
  'thaiqr',
  'touchngo',
  'truemoney',
  'trustly',
  'trustlyeurope',
  'upi',
  'venmo',
  'vipps',
  'waave',
  'webpay',
  'wechat',
  'wero',
  'yape',
  'zippay',
] as const;

export const redirectPaymentMethodSchema = z
  .object({
    method: z.enum(redirectMethodValues),
    country,
    currency,
    redirect_url: z
      .url()
      .max(2048)
      .meta({ description: 'Where the buyer returns after approving (or cancelling) at the provider.' }),
    external_identifier: externalIdentifier.nullish(),
    buyer_id: z.uuid().nullish(),
    buyer_external_identifier: z.string().max(200).nullish(),
  })
  .meta({
    id: 'RedirectPaymentMethodCreate',
    description: 'A redirect payment method (a wallet such as PayPal): the buyer approves it at the provider.',
  });

export const checkoutSessionTransactionPaymentMethodSchema = z
  .object({
    method: z.literal('checkout-session'),
    id: z.uuid().meta({ description: 'A checkout session whose card fields were filled in; a session pays once.' }),
    external_identifier: externalIdentifier.nullish(),
    buyer_id: z.uuid().nullish(),
    buyer_external_identifier: z.string().max(200).nullish(),
    redirect_url: z.url().max(2048).nullish(),
  })
  .meta({ id: 'CheckoutSessionWithUrlPaymentMethodCreate' });

export const pazePaymentMethodSchema = z
  .object({
    method: z.literal('paze'),
    token: z
      .string()
      .min(20)
      .max(40_000)
      // A bare JWE (five parts) passes here to be refused as unsigned with the reason (400 paze_signature_invalid).
      .regex(
        /^[A-Za-z0-9_-]+(?:(?:\.[A-Za-z0-9_-]*){2}|(?:\.[A-Za-z0-9_-]*){4})$/,
        'must be a JWS in compact serialization',
      )
      .meta({
        writeOnly: true,
        description:
          "The Complete response's securedPayload as Paze gave it to the merchant, JWS(JWE(JWS(payload))): both signatures are verified against Paze's signing keys (PAZE_SIGNING_KEYS), the JWE is decrypted with the merchant's Paze wallet key.",
      }),
    redirect_url: z.url().max(2048).nullish(),
  })
  .meta({
    id: 'PazePaymentMethodCreate',
    description: 'Paze: US businesses only, in USD, through a US acquiring connection that takes network tokens.',
  });

export const transactionPaymentMethodInputSchema = z.discriminatedUnion('method', [
  cardPaymentMethodSchema,
  storedPaymentMethodSchema,
  checkoutSessionTransactionPaymentMethodSchema,
  pazePaymentMethodSchema,
  redirectPaymentMethodSchema,
]);

const threeDSecureDataCommon = {
  cavv: z.string().min(1).max(100),
  eci: z.string().regex(/^\d{1,2}$/, 'must be 1 or 2 digits'),
  version: z.string().regex(/^[12]\.\d+(\.\d+)?$/, 'must be a 3-D Secure version such as 2.2.0'),
  directory_response: z.string().min(1).max(1),
  scheme: z.string().nullish(),
};

/** 3-D Secure done elsewhere (an external MPI): passed through to the payment service. */
export const threeDSecureDataSchema = z
  .union([
    z
      .object({
        ...threeDSecureDataCommon,
        authentication_response: z.string().min(1).max(1).nullish(),
        directory_transaction_id: z.string().min(1).max(100),
      })
      .strict()
      .meta({ id: 'ThreeDSecureDataV2' }),
    z
      .object({
        ...threeDSecureDataCommon,
        authentication_response: z.string().min(1).max(1),
        cavv_algorithm: z.string().min(1).max(1),
        xid: z.string().min(1).max(100),
      })
      .strict()
      .meta({ id: 'ThreeDSecureDataV1' }),
  ])
  .meta({
    description:
      'Version 2 needs directory_transaction_id; version 1 needs authentication_response, cavv_algorithm and xid.',
  });

export type ThreeDSecureDataInput = z.infer<typeof threeDSecureDataSchema>;

/** The most cart items a payment, a capture or a checkout session takes (payment service definitions announce it). */
export const MAX_CART_ITEMS = 249;

export const cartItemSchema = z
  .object({
    name: z.string().min(1).max(255),
    quantity: z.int().min(1).max(99_999_999),
    unit_amount: z.int().min(0).max(99_999_999),
    discount_amount: z.int().min(0).max(99_999_999).nullish(),
    tax_amount: z.int().min(0).max(99_999_999).nullish(),
    external_identifier: z.string().max(200).nullish(),
    sku: z.string().max(200).nullish(),
    upc: z.string().max(200).nullish(),
    product_url: z.string().max(2048).nullish(),
    image_url: z.string().max(2048).nullish(),
    categories: z.array(z.string().max(50)).max(100).nullish(),
    product_type: z.string().max(50).nullish(),
    seller_country: country.nullish(),
    tax_exempt: z.boolean().nullish(),
    unit_of_measure: z.string().max(50).nullish(),
    commodity_code: z.string().max(50).nullish(),
    description: z.string().max(1000).nullish(),
    duty_amount: z.int().min(0).max(99_999_999).nullish(),
    shipping_amount: z.int().min(0).max(99_999_999).nullish(),
    brand: z.string().max(255).nullish().meta({ description: 'At most 255 characters.' }),
    subcategories: z
      .array(z.string().max(50))
      .max(100)
      .nullish()
      .meta({ description: 'Each at most 50 characters; one level below `categories`.' }),
  })
  .meta({ id: 'CartItem' });

export type CartItem = z.infer<typeof cartItemSchema>;

const address = z.object({
  city: z.string().max(100).nullish(),
  country: z.string().max(2).nullish(),
  postal_code: z.string().max(50).nullish(),
  state: z.string().max(100).nullish(),
  state_code: z.string().max(10).nullish(),
  house_number_or_name: z.string().max(100).nullish(),
  line1: z.string().max(200).nullish(),
  line2: z.string().max(200).nullish(),
  organization: z.string().max(200).nullish(),
});

const billingDetails = z.object({
  first_name: z.string().max(100).nullish(),
  last_name: z.string().max(100).nullish(),
  email_address: z.string().max(320).nullish(),
  phone_number: z.string().max(50).nullish(),
  address: address.nullish(),
});

export const guestBuyerSchema = z
  .object({
    display_name: z.string().max(200).nullish(),
    external_identifier: z.string().max(200).nullish(),
    billing_details: billingDetails.nullish(),
    account_number: z.string().max(100).nullish(),
  })
  .meta({ id: 'GuestBuyer' });

/** Reference: at most 10 gift cards in one transaction by default. */
export const MAX_GIFT_CARDS_PER_TRANSACTION = 10;

export const giftCardTransactionCreateSchema = z
  .object({
    number: z.string().regex(/^\d{16,19}$/, 'must be 16 to 19 digits'),
    pin: z.string().min(1).max(20),
    amount,
  })
  .strict()
  .meta({
    id: 'GiftCardTransactionCreate',
    description: 'A gift card given by number and PIN, and the amount to charge to it.',
  });

export const giftCardTokenTransactionCreateSchema = z.object({ id: z.uuid(), amount }).strict().meta({
  id: 'GiftCardTokenTransactionCreate',
  description: 'A stored gift card (`POST /gift-cards`), and the amount to charge to it.',
});

export const transactionGiftCardInputSchema = z.union([
  giftCardTransactionCreateSchema,
  giftCardTokenTransactionCreateSchema,
]);
export type TransactionGiftCardInput = z.infer<typeof transactionGiftCardInputSchema>;

export const paymentSourceValues = ['ecommerce', 'moto', 'recurring', 'installment', 'card_on_file'] as const;
export const integrationClientValues = ['redirect', 'web', 'ios', 'android'] as const;

export const transactionCreateSchema = z
  .object({
    amount,
    currency,
    country: country.nullish(),
    payment_method: transactionPaymentMethodInputSchema
      .nullish()
      .meta({ description: 'Required unless `gift_cards` pay the whole amount.' }),
    gift_cards: z
      .array(transactionGiftCardInputSchema)
      .min(1)
      .max(MAX_GIFT_CARDS_PER_TRANSACTION)
      .nullish()
      .meta({
        description: `Up to ${MAX_GIFT_CARDS_PER_TRANSACTION} gift cards, redeemed after the payment method is authorized; \`amount\` is the total, the payment method pays what the gift cards do not.`,
      }),
    intent: z.enum(['authorize', 'capture']).default('authorize'),
    store: z.boolean().default(false),
    merchant_initiated: z.boolean().default(false),
    is_subsequent_payment: z.boolean().default(false),
    payment_source: z.enum(paymentSourceValues).nullish(),
    is_amount_estimated: z.boolean().default(false),
    integration_client: z.enum(integrationClientValues).nullish(),
    payment_service_id: z.uuid().nullish(),
    three_d_secure_data: threeDSecureDataSchema.nullish(),
    external_identifier: externalIdentifier.nullish(),
    metadata: metadata.nullish(),
    cart_items: z.array(cartItemSchema).max(MAX_CART_ITEMS).nullish(),
    buyer: guestBuyerSchema.nullish(),
    buyer_id: z.uuid().nullish(),
    buyer_external_identifier: z.string().max(200).nullish(),
    // Sent by the SDK with their defaults; accepted, not acted on yet.
    async_capture: z.boolean().optional(),
    account_funding_transaction: z.boolean().optional(),
    allow_partial_authorization: z.boolean().optional(),
  })
  .refine((body) => !(body.buyer && body.buyer_id), {
    message: 'give either buyer or buyer_id, not both',
    path: ['buyer_id'],
  })
  .refine((body) => body.payment_method != null || (body.gift_cards?.length ?? 0) > 0, {
    message: 'give a payment_method, gift_cards, or both',
    path: ['payment_method'],
  })
  .refine(
    (body) => body.payment_method == null || !body.gift_cards?.length || giftCardTotal(body.gift_cards) < body.amount,
    {
      message: 'the gift cards must leave part of the amount to the payment method',
      path: ['gift_cards'],
    },
  )
  .refine(
    (body) => body.payment_method != null || !body.gift_cards?.length || giftCardTotal(body.gift_cards) === body.amount,
    {
      message: 'without a payment_method the gift card amounts must add up to the amount',
      path: ['gift_cards'],
    },
  )
  .meta({ id: 'TransactionCreate' });

/** What the gift cards of a create request pay together. */
export function giftCardTotal(giftCards: readonly { readonly amount: number }[] | null | undefined): number {
  return (giftCards ?? []).reduce((total, card) => total + card.amount, 0);
}

export type TransactionCreateInput = z.infer<typeof transactionCreateSchema>;

export const transactionUpdateSchema = z
  .object({
    external_identifier: externalIdentifier.nullish(),
    metadata: metadata.nullish(),
  })
  .meta({ id: 'TransactionUpdate', description: 'Only the fields sent change; null clears.' });

export type TransactionUpdateInput = z.infer<typeof transactionUpdateSchema>;

export const MAX_TRACKING_ENTRIES = 5;

export const trackingEntrySchema = z
  .object({
    number: z.string().min(1).max(100),
    carrier: z.string().min(1).max(100),
    url: z.url().max(2048).nullish(),
  })
  .meta({ id: 'CaptureTrackingEntry' });

export const transactionCaptureCreateSchema = z
  .object({
    amount: amount.nullish().meta({ description: 'Omitted: everything of the authorization not yet claimed.' }),
    final: z.boolean().nullish().meta({
      description: 'true closes the authorization and releases the rest. Omitted keeps it open (multiple captures).',
    }),
    tracking: z.array(trackingEntrySchema).max(MAX_TRACKING_ENTRIES).nullish(),
    cart_items: z.array(cartItemSchema).max(MAX_CART_ITEMS).nullish(),
    external_identifier: externalIdentifier.nullish(),
  })
  .meta({ id: 'TransactionCaptureCreate' });

export type TransactionCaptureInput = z.infer<typeof transactionCaptureCreateSchema>;

export const refundCreateSchema = z
  .object({
    amount: amount.nullish().meta({ description: 'Omitted: everything captured and not yet refunded.' }),
    target_type: z
      .enum(['payment-method', 'gift-card-redemption'])
      .nullish()
      .meta({ description: 'Default `payment-method`; `gift-card-redemption` needs `target_id`.' }),
    target_id: z.string().nullish(),
    reason: z.string().max(100).nullish(),
    external_identifier: externalIdentifier.nullish(),
  })
  .refine((body) => body.target_type !== 'gift-card-redemption' || Boolean(body.target_id), {
    message: 'a gift-card-redemption refund needs target_id',
    path: ['target_id'],
  })
  .meta({ id: 'TransactionRefundCreate' });

export type RefundCreateInput = z.infer<typeof refundCreateSchema>;

export const refundAllCreateSchema = z
  .object({
    reason: z.string().max(100).nullish(),
    external_identifier: externalIdentifier.nullish(),
  })
  .meta({ id: 'TransactionRefundAllCreate' });

export type RefundAllCreateInput = z.infer<typeof refundAllCreateSchema>;

export const authorizationIncrementCreateSchema = z
  .object({
    amount: amount.meta({ description: 'The amount to add to the authorization (minor units), not the new total.' }),
  })
  .meta({ id: 'TransactionAuthorizationIncrementCreate' });
export type AuthorizationIncrementInput = z.infer<typeof authorizationIncrementCreateSchema>;

// ---- list queries ------------------------------------------------------------------------------------------

/** `status=a&status=b` and `status=a` both arrive as a list. */
const many = <T extends z.ZodType>(item: T) =>
  z.union([item, z.array(item)]).transform((value) => (Array.isArray(value) ? value : [value]) as z.output<T>[]);
const intParam = z
  .string()
  .regex(/^-?\d{1,12}$/, 'must be an integer')
  .transform(Number);

export const transactionStatusValues = [
  'processing',
  'buyer_approval_pending',
  'authorization_succeeded',
  'authorization_declined',
  'authorization_failed',
  'authorization_voided',
  'authorization_void_pending',
  'capture_succeeded',
  'capture_pending',
  'refunded',
] as const;
export type TransactionStatusValue = (typeof transactionStatusValues)[number];

export const transactionListQuerySchema = z.object({
  status: many(z.enum(transactionStatusValues)).optional(),
  buyer_id: z.uuid().optional(),
  buyer_external_identifier: z.string().max(200).optional(),
  created_at_gte: timestamp.optional(),
  created_at_lte: timestamp.optional(),
  updated_at_gte: timestamp.optional(),
  updated_at_lte: timestamp.optional(),
  amount_eq: intParam.optional(),
  amount_gte: intParam.optional(),
  amount_lte: intParam.optional(),
  currency: many(currency).optional(),
  payment_service_id: many(z.uuid()).optional(),
  external_identifier: z.string().max(300).optional(),
  id: z.uuid().optional(),
});

export type TransactionListFilters = z.infer<typeof transactionListQuerySchema>;

/**
 * `GET /transactions/{id}?as_of=`. Declared as a string so that a malformed value is the service's 400 naming
 * `as_of` (as the RPC callers that are not the gateway get it too), not the edge's 422; {@link asOfInstant} checks it.
 */
export const transactionGetQuerySchema = z.object({
  as_of: z.string().optional().meta({
    description:
      'An RFC 3339 date-time with offset: the transaction as it stood at that moment, folded from its events recorded then or earlier. Before the transaction existed: 404; in the future: the current state.',
    format: 'date-time',
    example: '2025-06-01T12:00:00Z',
  }),
});

export type TransactionGetQuery = z.infer<typeof transactionGetQuerySchema>;

/** The instant (ms since the epoch) of an `as_of` value; null unless it is an RFC 3339 date-time with offset. */
export function asOfInstant(value: string): number | null {
  if (!timestamp.safeParse(value).success) return null;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : at;
}

// ---- responses ---------------------------------------------------------------------------------------------

const transactionPaymentMethodSchema = z
  .object({
    type: z.literal('payment-method'),
    id: z.string().nullable(),
    method: z.string(),
    mode: z.string().nullable(),
    scheme: z.string().nullable(),
    label: z.string().nullable().meta({ description: 'The last four digits of the card.' }),
    expiration_date: z.string().nullable(),
    fingerprint: z.string().nullable(),
    approval_url: z.string().nullable(),
    country: z.string().nullable(),
    currency: z.string().nullable(),
    details: z
      .object({ bin: z.string().nullable(), card_type: z.string().nullable(), card_issuer_name: z.string().nullable() })
      .nullable(),
    external_identifier: z.string().nullable(),
  })
  .meta({ id: 'TransactionPaymentMethod' });

const transactionPaymentServiceSchema = z
  .object({
    type: z.literal('payment-service'),
    id: z.string(),
    payment_service_definition_id: z.string(),
    method: z.string(),
    display_name: z.string(),
  })
  .meta({ id: 'TransactionPaymentService' });

const transactionBuyerSchema = z
  .object({
    type: z.literal('buyer'),
    id: z.string().nullable(),
    display_name: z.string().nullable(),
    external_identifier: z.string().nullable(),
    billing_details: z.unknown().nullable(),
    account_number: z.string().nullable(),
  })
  .meta({ id: 'TransactionBuyer' });

export const giftCardRedemptionStatusValues = ['created', 'succeeded', 'failed', 'skipped', 'reversed'] as const;

export const giftCardRedemptionSchema = z
  .object({
    type: z.literal('gift-card-redemption'),
    id: z.uuid(),
    status: z.enum(giftCardRedemptionStatusValues).meta({
      description:
        'created → succeeded | failed | skipped; a succeeded redemption is `reversed` when another instrument of the payment failed (ours: the reference lists the first four).',
    }),
    amount: z.int(),
    refunded_amount: z.int(),
    gift_card_service_redemption_id: z.string().nullable(),
    error_code: z.string().nullable(),
    raw_error_code: z.string().nullable(),
    raw_error_message: z.string().nullable(),
    gift_card: z
      .object({
        type: z.literal('gift-card'),
        id: z.uuid().nullable(),
        bin: z.string(),
        sub_bin: z.string(),
        last4: z.string(),
      })
      .meta({ id: 'TransactionGiftCard' }),
  })
  .meta({ id: 'GiftCardRedemption' });
export type GiftCardRedemption = z.infer<typeof giftCardRedemptionSchema>;

export const giftCardServiceSchema = z
  .object({
    type: z.literal('gift-card-service'),
    id: z.uuid(),
    gift_card_service_definition_id: z.string(),
    display_name: z.string(),
  })
  .meta({ id: 'GiftCardService' });

const transactionSummaryShape = {
  type: z.literal('transaction'),
  id: z.uuid(),
  reconciliation_id: z.string(),
  merchant_account_id: z.string(),
  currency: z.string(),
  amount: z.int(),
  status: z.string().meta({ description: 'One of the transaction statuses (open set).' }),
  authorized_amount: z.int(),
  captured_amount: z.int(),
  refunded_amount: z.int(),
  settled_currency: z.string().nullable(),
  settled_amount: z.int(),
  settled: z.boolean(),
  country: z.string().nullable(),
  external_identifier: z.string().nullable(),
  intent: z.string(),
  payment_method: transactionPaymentMethodSchema.nullable(),
  method: z.string().nullable(),
  instrument_type: z.string().nullable(),
  error_code: z.string().nullable(),
  payment_service: transactionPaymentServiceSchema.nullable(),
  pending_review: z.boolean(),
  buyer: transactionBuyerSchema.nullable(),
  raw_response_code: z.string().nullable(),
  raw_response_description: z.string().nullable(),
  shipping_details: z.unknown().nullable(),
  checkout_session_id: z.string().nullable(),
  gift_card_redemptions: z.array(giftCardRedemptionSchema),
  gift_card_service: giftCardServiceSchema.nullable(),
  created_at: timestamp,
  updated_at: timestamp,
  disputed: z.boolean(),
};

export const transactionSummarySchema = z.object(transactionSummaryShape).meta({ id: 'TransactionSummary' });

export const transactionSchema = z
  .object({
    ...transactionSummaryShape,
    airline: z.unknown().nullable(),
    auth_response_code: z.string().nullable(),
    avs_response_code: z.string().nullable(),
    cvv_response_code: z.string().nullable(),
    anti_fraud_decision: z.string().nullable(),
    payment_source: z.string(),
    merchant_initiated: z.boolean(),
    is_subsequent_payment: z.boolean(),
    is_amount_estimated: z.boolean(),
    integration_client: z.string().nullable(),
    store: z.boolean(),
    cart_items: z.array(cartItemSchema).nullable(),
    statement_descriptor: z.unknown().nullable(),
    scheme_transaction_id: z.string().nullable(),
    three_d_secure: z
      .object({
        version: z.string().nullable(),
        status: z.string().meta({ description: 'complete, declined, error or setup_error.' }),
        method: z.string().nullable().meta({ description: 'frictionless or challenge; null for external data.' }),
        response_data: z
          .object({
            cavv: z.string().nullable(),
            eci: z.string().nullable(),
            version: z.string().nullable(),
            directory_response: z.string().nullable(),
            authentication_response: z.string().nullable(),
            directory_transaction_id: z.string().nullable(),
          })
          .nullable(),
        error_data: z.object({ description: z.string().nullable(), code: z.string().nullable() }).nullable(),
        amount: z.int().nullable(),
      })
      .nullable()
      .meta({ id: 'TransactionThreeDSecureSummary' }),
    redirect_url: z
      .string()
      .nullable()
      .meta({ description: 'Where the buyer returns after a 3-D Secure challenge or a redirect payment method.' }),
    payment_service_transaction_id: z.string().nullable(),
    metadata: z.record(z.string(), z.string()).nullable(),
    authorized_at: timestamp.nullable(),
    captured_at: timestamp.nullable(),
    voided_at: timestamp.nullable(),
    canceled_at: timestamp.nullable(),
    approval_expires_at: timestamp.nullable(),
    buyer_approval_timedout_at: timestamp.nullable(),
    intent_outcome: z.enum(['pending', 'succeeded', 'failed']),
    multi_tender: z.boolean(),
    account_funding_transaction: z.boolean(),
    recipient: z.unknown().nullable(),
    merchant_advice_code: z.string().nullable(),
    installment_count: z.int().nullable(),
  })
  .meta({ id: 'Transaction' });

export type Transaction = z.infer<typeof transactionSchema>;
export type TransactionSummary = z.infer<typeof transactionSummarySchema>;

export const transactionSummariesSchema = z
  .object({
    items: z.array(transactionSummarySchema),
    limit: z.int(),
    next_cursor: z.string().nullable(),
    previous_cursor: z.string().nullable(),
  })
  .meta({ id: 'TransactionSummaries' });

/** One capture of a transaction, with its own tracking (`Prefer: resource=transaction-capture`, captures list/get). */
export const transactionCaptureSchema = z
  .object({
    type: z.literal('transaction-capture'),
    id: z.string(),
    transaction_id: z.uuid(),
    status: z.enum(['pending', 'succeeded', 'declined', 'failed']),
    amount: z.int(),
    currency: z.string(),
    final: z.boolean(),
    tracking: z.array(z.object({ number: z.string(), carrier: z.string(), url: z.string().nullable() })),
    cart_items: z.array(cartItemSchema).nullable(),
    external_identifier: z.string().nullable(),
    code: z.string().nullable(),
    raw_response_code: z.string().nullable(),
    raw_response_description: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
    transaction: transactionSchema,
  })
  .meta({ id: 'TransactionCapture' });

export type TransactionCapture = z.infer<typeof transactionCaptureSchema>;

export const transactionCapturesSchema = z
  .object({
    items: z.array(transactionCaptureSchema.omit({ transaction: true })),
    limit: z.int(),
    next_cursor: z.string().nullable(),
    previous_cursor: z.string().nullable(),
  })
  .meta({ id: 'TransactionCaptures' });

export type TransactionCaptureSummary = Omit<TransactionCapture, 'transaction'>;

const operationResultShape = {
  code: z.string().nullable(),
  raw_response_code: z.string().nullable(),
  raw_response_description: z.string().nullable(),
  transaction: transactionSchema,
};

export const transactionVoidSchema = z
  .object({
    type: z.literal('transaction-void'),
    status: z.enum(['succeeded', 'pending', 'declined', 'failed']),
    ...operationResultShape,
  })
  .meta({ id: 'TransactionVoid' });
export type TransactionVoid = z.infer<typeof transactionVoidSchema>;

export const transactionCancelSchema = z
  .object({
    type: z.literal('transaction-cancel'),
    status: z.enum(['succeeded', 'pending', 'failed']),
    ...operationResultShape,
  })
  .meta({ id: 'TransactionCancel' });
export type TransactionCancel = z.infer<typeof transactionCancelSchema>;

/** The answer to `POST /transactions/{id}/authorization/increment`. */
export const authorizationIncrementSchema = z
  .object({
    type: z.literal('transaction-authorization-increment'),
    status: z.enum(['succeeded', 'failed', 'pending']).meta({
      description:
        '`succeeded`: `authorized_amount` was raised. `failed` or `pending`: the authorization is as it was, capturable up to the previous amount.',
    }),
    amount: z.int().meta({ description: 'The amount asked for.' }),
    response_code: z.string().nullable().meta({ description: "The payment service's response code, verbatim." }),
    response_description: z
      .string()
      .nullable()
      .meta({ description: "The payment service's response description, verbatim." }),
    error_code: z
      .string()
      .nullable()
      .meta({ description: 'The standardized error code when the increase was not approved.' }),
    transaction: transactionSchema,
  })
  .meta({ id: 'TransactionAuthorizationIncrement' });
export type AuthorizationIncrement = z.infer<typeof authorizationIncrementSchema>;

export const refundSchema = z
  .object({
    type: z.literal('refund'),
    id: z.uuid(),
    transaction_id: z.uuid(),
    payment_service_refund_id: z.string().nullable(),
    status: z.enum(['processing', 'succeeded', 'declined', 'failed', 'voided']),
    currency: z.string(),
    amount: z.int(),
    reason: z.string().nullable(),
    target_type: z.enum(['payment-method', 'gift-card-redemption']),
    target_id: z.string().nullable(),
    reconciliation_id: z.string(),
    external_identifier: z.string().nullable(),
    transaction_reconciliation_id: z.string(),
    transaction_external_identifier: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
    creator: z.unknown().nullable(),
    error_code: z.string().nullable(),
    raw_response_code: z.string().nullable(),
    raw_response_description: z.string().nullable(),
  })
  .meta({ id: 'Refund' });

export type Refund = z.infer<typeof refundSchema>;

export const refundsSchema = z
  .object({
    items: z.array(refundSchema),
    limit: z.int(),
    next_cursor: z.string().nullable(),
    previous_cursor: z.string().nullable(),
  })
  .meta({ id: 'Refunds' });

export const transactionEventSchema = z
  .object({
    type: z.literal('transaction-event'),
    id: z.string(),
    name: z.string(),
    created_at: timestamp,
    context: z.record(z.string(), z.unknown()).meta({
      description:
        "What the event recorded (`event`, the `status` after it, its data) and `explanation`: who caused it (`actor`), the connection (`payment_service_id`), the flow rule that decided (`flow_rule_id`) and the provider's codes (`provider_response`). See docs/events.md.",
    }),
  })
  .meta({ id: 'TransactionEvent' });

export type TransactionEventItem = z.infer<typeof transactionEventSchema>;

/** `context.explanation` of a transaction event: why the step happened and what the provider said. */
export interface TransactionEventExplanation {
  /** Null for events recorded before actors were (or by a caller that did not say who it was). */
  readonly actor: TransactionActor | null;
  /** The connection the step concerns (the one that failed, for a failover attempt). */
  readonly payment_service_id: string | null;
  /** The flow rule that decided: the route-transaction rule on creation, the decline-early rule on its decline. */
  readonly flow_rule_id: string | null;
  /** The provider's codes the event holds; null when it holds none. */
  readonly provider_response: TransactionProviderResponse | null;
}

export interface TransactionProviderResponse {
  readonly error_code?: string;
  readonly raw_response_code?: string;
  readonly raw_response_description?: string;
  readonly avs_response_code?: string;
  readonly cvv_response_code?: string;
  readonly payment_service_transaction_id?: string;
  readonly scheme_transaction_id?: string;
  readonly provider_operation_id?: string;
  readonly provider_redemption_id?: string;
  readonly raw_error_code?: string;
  readonly raw_error_message?: string;
}

export const transactionEventsSchema = z
  .object({
    items: z.array(transactionEventSchema),
    limit: z.int(),
    next_cursor: z.string().nullable(),
    previous_cursor: z.string().nullable(),
  })
  .meta({ id: 'TransactionEvents' });

// ---- RPC payloads (gateway → transactions service) -----------------------------------------------------------

/**
 * Who caused a change to a transaction: recorded in the metadata of the events it appended and shown by
 * `GET /transactions/{id}/events` (`context.explanation.actor`). `system` is work nobody asked for at that moment;
 * its `id` names it: `reconciliation`, `hold-expiry`, `gift-card-recovery`, `provider-notification`, `buyer-return`.
 */
export type TransactionActor =
  | { readonly type: 'api-key-pair'; readonly id: string }
  | { readonly type: 'dashboard-user'; readonly id: string }
  | { readonly type: 'system'; readonly id: string };

/** The caller of a request, as the gateway (an API key pair) or the dashboard (a dashboard user) passes it over RPC. */
export type TransactionCaller = Extract<TransactionActor, { readonly type: 'api-key-pair' | 'dashboard-user' }>;

/** `transactions.get`: the transaction now, or with `as_of` (RFC 3339 date-time with offset) as it stood then. */
export interface TransactionGetRequest {
  readonly merchant_account_id: string;
  readonly transaction_id: string;
  readonly as_of?: string;
}

/** The merchant account's capture settings, read by the gateway from identity. */
export interface CaptureAccountSettings {
  readonly multiple_captures_enabled: boolean;
  readonly over_capture_amount: number | null;
  readonly over_capture_percentage: number | null;
}

export interface TransactionRequest<Body = undefined> {
  readonly merchant_account_id: string;
  readonly transaction_id: string;
  readonly body: Body;
  /** The caller's `Idempotency-Key` header (POST create, capture, void, refunds). */
  readonly idempotency_key?: string;
}

export interface TransactionCreateRequest {
  readonly merchant_account_id: string;
  readonly body: TransactionCreateInput;
  readonly idempotency_key?: string;
  /** The merchant account's 3-D Secure configurations (read by the gateway from identity); absent: none. */
  readonly three_ds_configurations?: readonly ThreeDsConfiguration[];
  /** Present when the request came in through an embed token: stored methods and gift cards must be this buyer's. */
  readonly embed_buyer?: EmbedBuyerPin;
  /**
   * Internal (set by the gateway, never from the public body): the card data of the body was handed to the vault
   * (`vaultPatterns.handOverCard`), and `body.payment_method` comes without its number and security code.
   */
  readonly card_hand_over?: CardHandOver;
  /**
   * Internal (set by the gateway): the gift cards of the body given by number and PIN were handed to the gift cards
   * service (`giftCardPatterns.handOver`); aligned with `body.gift_cards`, null for a stored card. Each handed-over
   * item of `body.gift_cards` comes as `{ id: <the one-off card's id>, amount }`.
   */
  readonly gift_card_hand_over?: readonly (GiftCardHandOver | null)[];
}

/** The buyer's browser coming back from a 3-D Secure challenge or a redirect payment method (public, token-checked). */
export interface BuyerReturnRequest {
  readonly transaction_id: string;
  readonly token: string;
}

/** Where the gateway sends the browser (303), or, without a redirect_url, the status to show. */
export interface BuyerReturnResult {
  readonly location: string | null;
  readonly transaction_id: string;
  readonly transaction_status: string;
}

/** A flow rule that matched when the transaction was created (the reference's TransactionAction). */
export const transactionActionSchema = z
  .object({
    type: z.literal('action'),
    id: z.string().meta({ description: 'The flow action: route-transaction, decline-early, skip-3ds or force-3ds.' }),
    flow: z.string(),
    rule_id: z.string(),
    created_at: timestamp,
    outcome: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'TransactionAction' });

export const transactionActionsSchema = z
  .object({ items: z.array(transactionActionSchema) })
  .meta({ id: 'TransactionActions' });
export type TransactionAction = z.infer<typeof transactionActionSchema>;

export interface TransactionCaptureRequest extends TransactionRequest<TransactionCaptureInput> {
  readonly settings: CaptureAccountSettings;
  /** `Prefer: resource=transaction-capture` */
  readonly prefer_capture: boolean;
}

export interface TransactionVoidRequest extends TransactionRequest<undefined> {
  /** `Prefer: resource=transaction-void` */
  readonly prefer_void: boolean;
}

export interface TransactionListRequest extends TransactionListFilters {
  readonly merchant_account_id: string;
  readonly cursor?: string | null;
  readonly limit: number;
}

export interface TransactionPageRequest {
  readonly merchant_account_id: string;
  readonly transaction_id: string;
  readonly cursor?: string | null;
  readonly limit: number;
}

export interface ProviderNotificationRequest {
  readonly payment_service_id: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The body exactly as received: signatures are computed over the bytes. */
  readonly raw_body: string;
}

/** What the notification endpoint answers the provider; null (the RPC's answer): 204 without a body. */
export interface ProviderNotificationAnswer {
  readonly status: number;
  readonly content_type: string;
  readonly body: string;
}

export interface SettlementFileRequest {
  readonly merchant_account_id: string;
  readonly payment_service_id: string;
  readonly file_name: string;
  readonly content: string;
}

export interface SettlementFileResult {
  readonly type: 'settlement-file-ingestion';
  readonly file_name: string;
  readonly records: number;
  readonly refunds_settled: number;
  readonly already_settled: number;
  readonly unmatched: number;
}

/** {@link SettlementFileResult} on the wire: the answer of `POST /payment-services/{id}/settlement-files`. */
export const settlementFileResultSchema = z
  .object({
    type: z.literal('settlement-file-ingestion'),
    file_name: z.string(),
    records: z.int(),
    refunds_settled: z.int(),
    already_settled: z.int(),
    unmatched: z.int(),
  })
  .meta({ id: 'SettlementFileIngestion' });
