/**
 * Paze: the payload the buyer's wallet hands the merchant (the Complete call's JWE, encrypted to the merchant's
 * registered key) turned into what a card authorization needs — the network token, its expiry, the cryptogram and
 * the ECI — and the rules that say whether a payment may go through Paze at all. docs/paze.md describes both.
 *
 * The token and the cryptogram are card data: they never go into an error message (nor, by the callers, into an
 * event, a log or a response). Errors say which field is wrong and why, never what it held.
 */
import type { KeyObject } from 'node:crypto';
import { compactDecrypt, compactVerify, errors as joseErrors } from 'jose';
import { z } from 'zod';
import type { PazeSigningKeys } from './paze-signing-keys';

export type PazeErrorCode =
  | 'paze_signature_invalid'
  | 'paze_decryption_failed'
  | 'paze_payload_invalid'
  | 'paze_token_expired';

export class PazeError extends Error {
  constructor(
    readonly code: PazeErrorCode,
    message: string,
    /** The payload field at fault (`token.paymentToken`, `dynamicData`, …); absent for decryption failures. */
    readonly field?: string,
  ) {
    super(message);
    this.name = 'PazeError';
  }
}

export type PazeScheme = 'visa' | 'mastercard' | 'discover';

/** What an authorization with the network token needs. */
export interface PazeCredential {
  /** The network token (a card number issued to Paze): card data. */
  readonly token: string;
  /** The token's expiry, MM/YY. */
  readonly expirationDate: string;
  /** The token cryptogram (TAVV / UCAF / DCVV): card data, valid once. */
  readonly cryptogram: string;
  readonly eci: string | null;
  readonly scheme: PazeScheme;
  readonly paymentAccountReference: string | null;
}

/** Paze uses RSA-OAEP-256 with A256GCM; the ECDH-ES family and A128GCM are accepted for EC keys and older set-ups. */
export const PAZE_KEY_MANAGEMENT_ALGORITHMS = ['ECDH-ES', 'ECDH-ES+A128KW', 'ECDH-ES+A256KW', 'RSA-OAEP-256'] as const;
export const PAZE_CONTENT_ENCRYPTION_ALGORITHMS = ['A128GCM', 'A256GCM'] as const;
/** Paze signs both JWS (the outer one around the JWE, the inner one around the payload) with RS256. */
export const PAZE_SIGNATURE_ALGORITHMS = ['RS256'] as const;

export const CRYPTOGRAM_SHORT_FORM = 'CARD_APPLICATION_CRYPTOGRAM_SHORT_FORM';
export const CRYPTOGRAM_LONG_FORM = 'CARD_APPLICATION_CRYPTOGRAM_LONG_FORM';

const schemes: Record<string, PazeScheme> = { VISA: 'visa', MASTERCARD: 'mastercard', DISCOVER: 'discover' };

const month = z
  .union([z.string().regex(/^\d{1,2}$/), z.int()], { error: 'must be a month, 1 to 12' })
  .transform(Number)
  .pipe(z.int().min(1, 'must be a month, 1 to 12').max(12, 'must be a month, 1 to 12'));
const year = z
  .union([z.string().regex(/^(\d{2}|\d{4})$/), z.int().min(0).max(9999)], { error: 'must be a year of 2 or 4 digits' })
  .transform(Number);
/** Seconds since the epoch (number or digits; 13 digits or more: milliseconds), or an ISO 8601 date-time. */
const instant = z.union([z.number(), z.string().min(1)], { error: 'must be epoch seconds or an ISO 8601 date-time' });

/** The decrypted Complete payload, as far as a payment reads it; Paze may add fields (kept out of our way). */
const pazePayloadSchema = z.looseObject(
  {
    token: z.looseObject(
      {
        paymentToken: z.string({ error: 'is required' }).regex(/^\d{13,19}$/, 'must be 13 to 19 digits'),
        tokenExpirationMonth: month,
        tokenExpirationYear: year,
        paymentAccountReference: z.string().min(1).max(64).nullish(),
      },
      { error: 'is required (an object)' },
    ),
    dynamicData: z
      .array(
        z.looseObject({
          dynamicDataType: z.string({ error: 'is required' }),
          dynamicDataValue: z.string().nullish(),
          dynamicDataExpiration: instant.nullish(),
        }),
        { error: 'must be a list' },
      )
      .min(1, 'must hold the cryptogram'),
    cardNetwork: z
      .string({ error: 'is required' })
      .refine((network) => Object.hasOwn(schemes, network), 'must be VISA, MASTERCARD or DISCOVER'),
    eci: z
      .string()
      .regex(/^\d{1,2}$/, 'must be 1 or 2 digits')
      .nullish(),
    billingAddress: z.unknown().optional(),
    consumer: z.unknown().optional(),
  },
  { error: 'must be an object' },
);

/** What opening a payload needs: the merchant's decryption key and Paze's signing keys. */
export interface PazeKeys {
  readonly decryptionKey: KeyObject;
  readonly signingKeys: PazeSigningKeys;
}

/**
 * Opens a Paze Complete `securedPayload`, `JWS(JWE(JWS(payload)))`: verifies the outer JWS against Paze's signing
 * keys, decrypts the JWE inside with the merchant's private key, verifies the inner JWS, and reads the credential.
 * `now` decides what has expired. Throws {@link PazeError}: `paze_signature_invalid` (unsigned, or a signature that
 * does not verify against Paze's keys), `paze_decryption_failed` (not a JWE, another key, an algorithm outside the
 * allow-list, altered), `paze_payload_invalid` (naming the field), `paze_token_expired`.
 */
export async function decryptPazePayload(
  securedPayload: string,
  keys: PazeKeys,
  now: Date = new Date(),
): Promise<PazeCredential> {
  const compact = typeof securedPayload === 'string' ? securedPayload.trim() : '';
  if (compact.split('.').length === 5) {
    throw new PazeError(
      'paze_signature_invalid',
      "The Paze payload is not signed: send the Complete response's securedPayload as Paze sent it (a JWS around the JWE)",
    );
  }
  if (compact.split('.').length !== 3)
    throw new PazeError(
      'paze_decryption_failed',
      'The Paze payload is not a compact JWS (three base64url parts) around a JWE',
    );
  const outer = text(await verifiedByPaze(compact, keys.signingKeys, 'The Paze payload'));
  const jwe = encryptedPartOf(outer);
  if (jwe.split('.').length !== 5)
    throw new PazeError(
      'paze_decryption_failed',
      'The signed Paze payload does not hold a compact JWE (five base64url parts)',
    );
  let plaintext: Uint8Array;
  try {
    ({ plaintext } = await compactDecrypt(jwe, keys.decryptionKey, {
      keyManagementAlgorithms: [...PAZE_KEY_MANAGEMENT_ALGORITHMS],
      contentEncryptionAlgorithms: [...PAZE_CONTENT_ENCRYPTION_ALGORITHMS],
    }));
  } catch (error) {
    throw new PazeError('paze_decryption_failed', decryptionFailure(error));
  }
  const inner = text(plaintext)?.trim() ?? '';
  if (!COMPACT_JWS.test(inner))
    throw new PazeError('paze_signature_invalid', 'The decrypted Paze payload is not signed (a compact JWS)');
  let payload: unknown;
  try {
    payload = JSON.parse(text(await verifiedByPaze(inner, keys.signingKeys, 'The decrypted Paze payload')) ?? '');
  } catch (error) {
    if (error instanceof PazeError) throw error;
    throw new PazeError('paze_payload_invalid', 'The decrypted Paze payload is not JSON', '');
  }
  return credentialOf(payload, now);
}

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+$/;

/** UTF-8 text, or null when the bytes are not. */
function text(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** The outer JWS carries the JWE itself, or a claim set whose `securedPayload` is the JWE (both are in Paze's guides). */
function encryptedPartOf(outer: string | null): string {
  const trimmed = outer?.trim() ?? '';
  if (!trimmed.startsWith('{')) return trimmed;
  try {
    const claims = JSON.parse(trimmed) as { securedPayload?: unknown };
    return typeof claims.securedPayload === 'string' ? claims.securedPayload.trim() : '';
  } catch {
    return '';
  }
}

/** The JWS's payload when its RS256 signature verifies against one of Paze's keys; else `paze_signature_invalid`. */
async function verifiedByPaze(jws: string, keys: PazeSigningKeys, what: string): Promise<Uint8Array> {
  const options = { algorithms: [...PAZE_SIGNATURE_ALGORITHMS] };
  try {
    return (await compactVerify(jws, keys, options)).payload;
  } catch (error) {
    if (error instanceof joseErrors.JWKSMultipleMatchingKeys) {
      // Keys without a `kid` (PEMs): the signature verifies with one of them or the payload is not Paze's.
      for await (const key of error as unknown as AsyncIterable<Parameters<typeof compactVerify>[1]>) {
        try {
          return (await compactVerify(jws, key, options)).payload;
        } catch {
          // not this key: try the next
        }
      }
    }
    throw new PazeError('paze_signature_invalid', signatureFailure(error, what));
  }
}

function signatureFailure(error: unknown, what: string): string {
  if (error instanceof joseErrors.JOSEAlgNotAllowed)
    return `${what} is not signed with ${PAZE_SIGNATURE_ALGORITHMS.join(', ')}, as Paze signs`;
  if (error instanceof joseErrors.JWSInvalid) return `${what} is not a valid JWS`;
  if (error instanceof joseErrors.JWKSNoMatchingKey)
    return `${what} is signed with a key that is not one of Paze's signing keys (PAZE_SIGNING_KEYS)`;
  return `${what}'s signature does not verify against Paze's signing keys (PAZE_SIGNING_KEYS): not from Paze, or altered`;
}

/** The credential in a decrypted payload; exported for the payload rules' own tests. */
export function credentialOf(payload: unknown, now: Date): PazeCredential {
  const parsed = pazePayloadSchema.safeParse(payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.map(String).join('.');
    // zod's messages name the expectation, never the value.
    throw new PazeError(
      'paze_payload_invalid',
      `The decrypted Paze payload is invalid: ${field || 'the payload'} ${issue.message}`,
      field,
    );
  }
  const { token, dynamicData, cardNetwork, eci } = parsed.data;

  // The short form is the cryptogram an e-commerce authorization carries; the long form only when it is all there is.
  const withValue = dynamicData
    .map((entry, index) => ({ entry, index }))
    .filter(({ entry }) => !!entry.dynamicDataValue);
  const cryptogram =
    withValue.find(({ entry }) => entry.dynamicDataType === CRYPTOGRAM_SHORT_FORM) ??
    withValue.find(({ entry }) => entry.dynamicDataType === CRYPTOGRAM_LONG_FORM);
  if (!cryptogram) {
    throw new PazeError(
      'paze_payload_invalid',
      `The decrypted Paze payload is invalid: dynamicData holds no ${CRYPTOGRAM_SHORT_FORM} or ${CRYPTOGRAM_LONG_FORM} value`,
      'dynamicData',
    );
  }
  const expiration = cryptogram.entry.dynamicDataExpiration;
  if (expiration !== undefined && expiration !== null) {
    const field = `dynamicData.${cryptogram.index}.dynamicDataExpiration`;
    const expiresAt = instantOf(expiration);
    if (expiresAt === null)
      throw new PazeError(
        'paze_payload_invalid',
        `The decrypted Paze payload is invalid: ${field} must be epoch seconds or an ISO 8601 date-time`,
        field,
      );
    if (expiresAt <= now.getTime())
      throw new PazeError(
        'paze_token_expired',
        'The Paze cryptogram has expired: ask the buyer to check out again',
        field,
      );
  }

  const fullYear = token.tokenExpirationYear < 100 ? 2000 + token.tokenExpirationYear : token.tokenExpirationYear;
  // A token is valid through the last day of its expiry month (UTC).
  if (Date.UTC(fullYear, token.tokenExpirationMonth, 1) <= now.getTime()) {
    throw new PazeError('paze_token_expired', 'The Paze network token has expired', 'token.tokenExpirationYear');
  }
  return {
    token: token.paymentToken,
    expirationDate: `${String(token.tokenExpirationMonth).padStart(2, '0')}/${String(fullYear % 100).padStart(2, '0')}`,
    cryptogram: cryptogram.entry.dynamicDataValue!,
    eci: eci ?? null,
    scheme: schemes[cardNetwork]!,
    paymentAccountReference: token.paymentAccountReference ?? null,
  };
}

/** Milliseconds since the epoch, or null when unreadable. */
function instantOf(value: number | string): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? epoch(Math.trunc(value)) : null;
  if (/^\d+$/.test(value)) return epoch(Number(value));
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value)) return null;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? null : parsed;
}

/** Seconds, or milliseconds when it has 13 digits or more (a time after 2001 in milliseconds). */
const epoch = (n: number): number => (n >= 1e12 ? n : n * 1000);

function decryptionFailure(error: unknown): string {
  if (error instanceof joseErrors.JOSEAlgNotAllowed)
    return `The Paze payload uses an algorithm outside ${PAZE_KEY_MANAGEMENT_ALGORITHMS.join(', ')} / ${PAZE_CONTENT_ENCRYPTION_ALGORITHMS.join(', ')}`;
  if (error instanceof joseErrors.JWEInvalid) return 'The Paze payload is not a valid JWE';
  // A wrong key, a key of the other type, or an altered payload: the same answer, so the failure tells nothing more.
  return "The Paze payload could not be decrypted with the merchant's Paze key (another key, or an altered payload)";
}

// ---- eligibility -------------------------------------------------------------------------------------------

export interface PazeConnection {
  readonly id: string;
  /** ISO 3166-1 alpha-2 countries the connection acquires for. */
  readonly acceptedCountries: readonly string[];
  /** The merchant's switch on the connection. */
  readonly networkTokensEnabled: boolean;
  /** Whether the connector can send a network token with its cryptogram. */
  readonly supportsNetworkTokens: boolean;
}

export interface PazeEligibilityInput {
  /** The Paze wallet's `merchant_country_code`. */
  readonly merchantCountry: string | null;
  readonly currency: string;
  /** The merchant account's active connections for the payment, in routing order. */
  readonly connections: readonly PazeConnection[];
}

export type PazeEligibility =
  | { readonly ok: true; readonly connectionIds: string[] }
  | { readonly ok: false; readonly code: string; readonly message: string };

/** Paze is for US businesses, in USD, through a US acquiring connection that sends network tokens. */
export function pazeEligibility(input: PazeEligibilityInput): PazeEligibility {
  if (input.merchantCountry?.toUpperCase() !== 'US') {
    return {
      ok: false,
      code: 'paze_merchant_not_us',
      message: "Paze is available to US businesses only: the Paze wallet's merchant_country_code must be US",
    };
  }
  if (input.currency.toUpperCase() !== 'USD') {
    return { ok: false, code: 'paze_currency_not_supported', message: `Paze takes USD only, not ${input.currency}` };
  }
  const connectionIds = input.connections
    .filter(
      (connection) =>
        connection.acceptedCountries.some((country) => country.toUpperCase() === 'US') &&
        connection.networkTokensEnabled &&
        connection.supportsNetworkTokens,
    )
    .map((connection) => connection.id);
  if (connectionIds.length === 0) {
    return {
      ok: false,
      code: 'paze_no_network_token_connection',
      message:
        'Paze needs a connection that acquires in the US and sends network tokens (supported by its connector and enabled on it)',
    };
  }
  return { ok: true, connectionIds };
}
