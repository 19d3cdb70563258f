/**
 * Checkout sessions on the wire — a short-lived session a merchant opens for one checkout, to which the buyer's
 * browser attaches card data (the secure fields library, `POST /checkout/sessions/{id}/fields`, no token: the session
 * id is the credential) and with which a transaction then pays once — and the vault service's RPC patterns
 * behind them (`vault.checkout-sessions.*`). Shapes of `../shared/reference/wire-compat.md` (CheckoutSession,
 * CheckoutSessionCreate, CheckoutSessionPaymentMethod); the fields body is ours (the reference does not publish it).
 */
import { z } from 'zod';
import { cartItemSchema, expirationDate, guestBuyerSchema, MAX_CART_ITEMS } from './transactions';

export const checkoutSessionPatterns = {
  create: 'vault.checkout-sessions.create',
  get: 'vault.checkout-sessions.get',
  update: 'vault.checkout-sessions.update',
  delete: 'vault.checkout-sessions.delete',
  attachFields: 'vault.checkout-sessions.fields',
  cardDetails: 'vault.checkout-sessions.card-details',
} as const;

/** Reference: `expires_in` defaults to 3600 seconds. Ours: from one minute to one day. */
export const CHECKOUT_SESSION_DEFAULT_EXPIRES_IN = 3600;
export const CHECKOUT_SESSION_MIN_EXPIRES_IN = 60;
export const CHECKOUT_SESSION_MAX_EXPIRES_IN = 86_400;

const timestamp = z.iso.datetime({ offset: true });
const currency = z
  .string()
  .regex(/^[A-Z]{3}$/)
  .meta({ description: 'ISO 4217 currency code, three upper-case letters.' });
const metadata = z
  .record(z.string().max(50), z.string().max(200))
  .refine((value) => Object.keys(value).length <= 20, 'at most 20 keys')
  .meta({ description: 'Up to 20 keys of at most 50 characters, values of at most 200.' });
const expiresIn = z
  .number()
  .min(CHECKOUT_SESSION_MIN_EXPIRES_IN)
  .max(CHECKOUT_SESSION_MAX_EXPIRES_IN)
  .meta({
    description: `Seconds from now until the session expires, ${CHECKOUT_SESSION_MIN_EXPIRES_IN} to ${CHECKOUT_SESSION_MAX_EXPIRES_IN}.`,
  });

/**
 * A flight leg or a passenger: the reference names the types without detailing them, so they are kept as given —
 * flat objects of at most 50 scalar fields.
 */
const airlineRecord = z
  .record(z.string().max(50), z.union([z.string().max(500), z.number(), z.boolean(), z.null()]))
  .refine((value) => Object.keys(value).length <= 50, 'at most 50 fields');

export const airlineSchema = z
  .object({
    booking_code: z.string().max(100).nullish(),
    is_cardholder_traveling: z.boolean().nullish(),
    issued_address: z.string().max(200).nullish(),
    issued_at: timestamp.nullish(),
    issuing_carrier_code: z.string().max(10).nullish(),
    issuing_carrier_name: z.string().max(100).nullish(),
    issuing_iata_designator: z.string().max(10).nullish(),
    issuing_icao_code: z.string().max(10).nullish(),
    legs: z
      .array(airlineRecord.meta({ id: 'AirlineLeg' }))
      .max(100)
      .nullish(),
    passenger_name_record: z.string().max(100).nullish(),
    passengers: z
      .array(airlineRecord.meta({ id: 'AirlinePassenger' }))
      .max(100)
      .nullish(),
    reservation_system: z.string().max(100).nullish(),
    restricted_ticket: z.boolean().nullish(),
    ticket_delivery_method: z.enum(['electronic', 'other']).nullish(),
    ticket_number: z.string().max(100).nullish(),
    travel_agency_code: z.string().max(100).nullish(),
    travel_agency_invoice_number: z.string().max(100).nullish(),
    travel_agency_name: z.string().max(200).nullish(),
    travel_agency_plan_name: z.string().max(200).nullish(),
  })
  .meta({ id: 'Airline', description: 'Airline data (Level 3) for the payment.' });
export type Airline = z.infer<typeof airlineSchema>;
/** A guest buyer as a checkout session holds it (GuestBuyer). */
export type CheckoutSessionBuyer = z.infer<typeof guestBuyerSchema>;

// ---- request bodies ----------------------------------------------------------------------------------------

const sessionDetailsShape = {
  cart_items: z.array(cartItemSchema).max(MAX_CART_ITEMS).nullish(),
  metadata: metadata.nullish(),
  buyer: guestBuyerSchema.nullish(),
  airline: airlineSchema.nullish(),
  amount: z.int().min(0).max(99_999_999).nullish().meta({ description: 'Minor units.' }),
  currency: currency.nullish(),
  payment_service_id: z.uuid().nullish(),
};

export const checkoutSessionCreateSchema = z
  .object({ ...sessionDetailsShape, expires_in: expiresIn.default(CHECKOUT_SESSION_DEFAULT_EXPIRES_IN) })
  .meta({
    id: 'CheckoutSessionCreate',
    description: 'Every field is optional; an empty body opens a session for an hour.',
  });
export type CheckoutSessionCreateInput = z.infer<typeof checkoutSessionCreateSchema>;

export const checkoutSessionUpdateSchema = z.object({ ...sessionDetailsShape, expires_in: expiresIn.optional() }).meta({
  id: 'CheckoutSessionUpdate',
  description:
    'The fields given replace the session’s (null clears one); `expires_in` counts again from now. Absent fields stay as they are.',
});
export type CheckoutSessionUpdateInput = z.infer<typeof checkoutSessionUpdateSchema>;

export const checkoutSessionCardSchema = z
  .object({
    method: z.literal('card'),
    number: z
      .string()
      .regex(/^\d{12,19}$/, 'must be 12 to 19 digits')
      .meta({ description: 'The card number; one failing the Luhn check is a 400.' }),
    expiration_date: expirationDate,
    security_code: z
      .string()
      .regex(/^\d{3,4}$/, 'must be 3 or 4 digits')
      .optional(),
  })
  .meta({ id: 'CheckoutSessionCardFields' });

/** A payment method the merchant stored, chosen in the browser, with its security code typed again for this payment. */
export const checkoutSessionStoredMethodSchema = z
  .object({
    method: z.literal('id'),
    id: z.uuid().meta({ description: 'A stored payment method of the session’s merchant account, `succeeded`.' }),
    security_code: z
      .string()
      .regex(/^\d{3,4}$/, 'must be 3 or 4 digits')
      .optional(),
  })
  .meta({ id: 'CheckoutSessionStoredMethodFields' });

export const checkoutSessionFieldsSchema = z
  .object({
    payment_method: z.discriminatedUnion('method', [checkoutSessionCardSchema, checkoutSessionStoredMethodSchema]),
  })
  .meta({
    id: 'CheckoutSessionFieldsUpdate',
    description:
      'Card data for the session, or a stored payment method with its security code, sent by the secure fields ' +
      'library from the buyer’s browser.',
  });
export type CheckoutSessionFieldsInput = z.infer<typeof checkoutSessionFieldsSchema>;

/**
 * `GET /checkout/sessions/{id}/card-details?bin=`: the first 6 to 8 digits the buyer typed into the card number frame.
 */
export const checkoutSessionCardDetailsQuerySchema = z.object({
  bin: z
    .string()
    .regex(/^\d{6,8}$/, 'must be 6 to 8 digits')
    .meta({ description: 'The first 6 to 8 digits of the card number typed so far.' }),
});
export type CheckoutSessionCardDetailsQuery = z.infer<typeof checkoutSessionCardDetailsQuerySchema>;

// ---- responses -----------------------------------------------------------------------------------------------

/** What BIN data says about a prefix, for the secure fields' `card-details-changed` event (spec, Events rule 5). */
export const checkoutSessionCardDetailsSchema = z
  .object({
    country: z
      .string()
      .nullable()
      .meta({ description: "The issuer's country (ISO 3166-1 alpha-2); null when the BIN data cannot resolve it." }),
    scheme: z.string().nullable(),
    card_type: z.string().nullable().meta({ description: '`credit`, `debit` or `prepaid`; null when unknown.' }),
    additional_schemes: z
      .array(z.string())
      .meta({ description: 'Other schemes the card is co-badged with (none known from the BIN data yet).' }),
  })
  .meta({ id: 'CheckoutSessionCardDetails' });
export type CheckoutSessionCardDetails = z.infer<typeof checkoutSessionCardDetailsSchema>;

export const checkoutSessionPaymentMethodDetailsSchema = z
  .object({
    bin: z.string().nullable(),
    card_type: z
      .string()
      .nullable()
      .meta({ description: '`credit`, `debit` or `prepaid`, from BIN data; null when unknown.' }),
    card_country: z
      .string()
      .nullable()
      .meta({ description: "The issuer's country (ISO 3166-1 alpha-2), from BIN data." }),
    card_issuer_name: z.string().nullable(),
  })
  .meta({ id: 'CheckoutSessionPaymentMethodDetails' });

export const checkoutSessionPaymentMethodSchema = z
  .object({
    type: z.literal('payment-method'),
    id: z.string().nullable().meta({ description: 'The card in the vault.' }),
    method: z.literal('card'),
    scheme: z.string().nullable(),
    label: z.string().nullable().meta({ description: 'The last four digits of the card.' }),
    fingerprint: z.string().nullable(),
    details: checkoutSessionPaymentMethodDetailsSchema.nullable(),
  })
  .meta({ id: 'CheckoutSessionPaymentMethod' });

export const checkoutSessionSchema = z
  .object({
    type: z.literal('checkout-session'),
    id: z.uuid(),
    expires_at: timestamp,
    cart_items: z.array(cartItemSchema).nullable(),
    metadata: z.record(z.string(), z.string()).nullable(),
    buyer: guestBuyerSchema.nullable(),
    airline: airlineSchema.nullable(),
    amount: z.int().nullable(),
    currency: z.string().nullable(),
    payment_service_id: z.string().nullable(),
    payment_method: checkoutSessionPaymentMethodSchema
      .nullable()
      .meta({ description: 'The card attached by the secure fields; null until then.' }),
  })
  .meta({ id: 'CheckoutSession' });
export type CheckoutSession = z.infer<typeof checkoutSessionSchema>;

// ---- RPC payloads ------------------------------------------------------------------------------------------

/** The merchant's operations act in the request's merchant account; another account's session does not exist. */
export interface CheckoutSessionScope {
  readonly merchant_account_id: string;
}

export interface CheckoutSessionRef extends CheckoutSessionScope {
  readonly checkout_session_id: string;
}

export interface CheckoutSessionCreateRequest extends CheckoutSessionScope {
  readonly body: CheckoutSessionCreateInput;
}

export interface CheckoutSessionUpdateRequest extends CheckoutSessionRef {
  readonly body: CheckoutSessionUpdateInput;
}

/** From the buyer's browser, without a token: the session id is the credential, the account the session's own. */
export interface CheckoutSessionFieldsRequest {
  readonly checkout_session_id: string;
  readonly body: CheckoutSessionFieldsInput;
}

/** From the card number frame, without a token: the session id is the credential. */
export interface CheckoutSessionCardDetailsRequest {
  readonly checkout_session_id: string;
  readonly bin: string;
}
