/**
 * What the merchant's page and the frames say to each other (`window.postMessage`), and what the frames of one set
 * say among themselves (`BroadcastChannel`, same origin: the service's). No message to the merchant's page ever holds
 * card data: only the fields' states and the card details the BIN data gives.
 */

export type FieldName = 'number' | 'expiry' | 'security_code';
export const FIELD_NAMES: readonly FieldName[] = ['number', 'expiry', 'security_code'];

/** Marks our messages among whatever else a page receives. */
export const MESSAGE_SOURCE = 'switchyard-secure-fields';

export interface CardDetails {
  /** The issuer's country (ISO 3166-1 alpha-2) from BIN data; null when it cannot be resolved (treat as unknown). */
  readonly country: string | null;
  readonly scheme: string | null;
  readonly cardType: string | null;
  readonly additionalSchemes: readonly string[];
}

export interface FieldState {
  readonly field: FieldName;
  readonly empty: boolean;
  readonly complete: boolean;
  readonly valid: boolean;
}

interface Envelope {
  readonly source: typeof MESSAGE_SOURCE;
  readonly channel: string;
}

/** Frame → merchant page (targetOrigin: the page's origin, from the frame's `parent` parameter). */
export type FrameMessage = Envelope &
  (
    | { readonly type: 'ready'; readonly field: FieldName }
    | ({ readonly type: 'change' } & FieldState)
    | { readonly type: 'blur'; readonly field: FieldName }
    | { readonly type: 'card-details-changed'; readonly field: 'number'; readonly details: CardDetails }
    | { readonly type: 'submit-result'; readonly requestId: string; readonly ok: boolean; readonly message?: string }
  );

/**
 * Merchant page → the frame that posts (targetOrigin: the service's origin): the card number frame for a typed card,
 * the security code frame for a stored payment method (`paymentMethodId`), whose code alone is typed again.
 */
export type PageMessage = Envelope & {
  readonly type: 'submit';
  readonly requestId: string;
  readonly fields: readonly FieldName[];
  readonly paymentMethodId?: string;
};

/** Between the frames of one set, on `BroadcastChannel(channelName(channel))`. Values never leave the service's origin. */
export type ChannelMessage =
  | { readonly type: 'collect'; readonly requestId: string }
  | { readonly type: 'value'; readonly requestId: string; readonly field: FieldName; readonly value: string }
  | { readonly type: 'scheme'; readonly scheme: string | null };

export const channelName = (channel: string): string => `${MESSAGE_SOURCE}:${channel}`;

/** What the `channel` parameter may be: the page's random id (hex, base64url). */
export const CHANNEL_PATTERN = /^[A-Za-z0-9_-]{16,64}$/;
export const SESSION_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A stored payment method's id: a UUID too. */
export const PAYMENT_METHOD_ID_PATTERN = SESSION_ID_PATTERN;

export const isFieldName = (value: unknown): value is FieldName =>
  typeof value === 'string' && (FIELD_NAMES as readonly string[]).includes(value);
