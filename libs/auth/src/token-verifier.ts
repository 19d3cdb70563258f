/**
 * Verifies the bearer JWT of a request: ES512 only, key found by `kid` (the RFC 7638 thumbprint of an API key
 * pair's public key), `exp`/`nbf`/`iat` checked with a small clock skew, `scopes` claim read.
 *
 * ES512 verification costs ~2.5 ms of CPU (P-521 in OpenSSL, the same in every library); clients that reuse a
 * token are answered from a cache of verified tokens keyed by the token's SHA-256, kept until the token expires.
 * The cache holds only what the signature proved (kid, claims); the key's current state (active, roles, merchant
 * accounts) is read from the key directory on every request, so revoking a key takes effect at once.
 *
 * Embed tokens (docs/embed-tokens.md): an `embed` claim must have the shape of {@link embedClaimSchema} and a
 * `checkout_session_id` claim must be a UUID, else the token is refused (401) whatever its scopes. The cache keeps
 * them parsed; an entry cached by an older version (another shape) is verified again, never trusted as it is.
 *
 * Only the signature check leaves the event loop (docs/performance.md, "JWT verification off the event loop"): it
 * goes to a {@link SignatureVerifier} — the worker-thread pool of `signature-pool.ts` in the gateway, inline
 * `node:crypto.verify` when none is given (JWT_VERIFY_WORKERS=0). If the pool cannot answer (closed, a worker died
 * with the request, its queue full) the signature is checked inline, once. Header, kid, alg, exp/nbf/iat and the
 * claims are checked here, by jose's own claim validation, with the outcomes `jose.jwtVerify` gave.
 */
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { base64url, decodeProtectedHeader, UnsecuredJWT, errors as joseErrors } from 'jose';
import { isCheckoutSessionIdClaim, parseEmbedClaim, type EmbedClaim } from './embed-claim';
import type { PublicJwk } from './keys';
import {
  InlineSignatureVerifier,
  SignaturePoolUnavailableError,
  verifySignatureNow,
  type SignatureCheck,
  type SignatureVerifier,
} from './signature-pool';

export * from './embed-claim';

export interface KeyRecord {
  readonly id: string;
  readonly kid: string;
  readonly publicJwk: PublicJwk;
  readonly active: boolean;
  /** Scopes granted by the key's roles (union), wildcards allowed. */
  readonly permissions: readonly string[];
  /** Merchant accounts the key may act on; empty means every account. */
  readonly merchantAccountIds: readonly string[];
}

/** Where the gateway finds a key by `kid`. */
export interface KeyDirectory {
  findByKid(kid: string): Promise<KeyRecord | null>;
}

export interface VerifiedClaims {
  readonly kid: string;
  readonly scopes: readonly string[];
  /** Seconds since the epoch. */
  readonly exp: number;
  /** The values an embed token pins (the `embed` claim), checked against `embedClaimSchema`. */
  readonly embed?: EmbedClaim;
  /** The `checkout_session_id` claim: the one checkout session an embed token may pay with. */
  readonly checkoutSessionId?: string;
  readonly jti?: string;
}

/** A cache of verified tokens; an unreachable cache is a miss, never a failure. */
export interface VerifiedTokenCache {
  get(tokenHash: string): Promise<VerifiedClaims | null>;
  put(tokenHash: string, claims: VerifiedClaims, ttlMs: number): Promise<void>;
}

export class AuthenticationError extends Error {
  readonly type = 'authentication_failed' as const;
}

export interface VerifiedRequestToken {
  readonly claims: VerifiedClaims;
  readonly key: KeyRecord;
}

export interface TokenVerifierOptions {
  readonly directory: KeyDirectory;
  readonly cache: VerifiedTokenCache;
  /** Allowed clock skew, seconds. */
  readonly clockSkewSeconds: number;
  readonly now?: () => number;
  /** Where signatures are checked (the gateway's worker pool); absent: inline on the calling thread. */
  readonly signatures?: SignatureVerifier;
}

type ProtectedHeader = ReturnType<typeof decodeProtectedHeader>;

const inlineSignatures = new InlineSignatureVerifier();
const asciiEncoder = new TextEncoder();
// biome-ignore lint/suspicious/noControlCharactersInRegex: every ASCII character, control characters included.
const NON_ASCII = /[^\x00-\x7f]/;

export class TokenVerifier {
  private readonly publicKeys = new Map<string, KeyObject>();
  private readonly signatures: SignatureVerifier;

  constructor(private readonly options: TokenVerifierOptions) {
    this.signatures = options.signatures ?? inlineSignatures;
  }

  async verify(token: string): Promise<VerifiedRequestToken> {
    const tokenHash = createHash('sha256').update(token).digest('base64url');
    const nowSeconds = Math.floor((this.options.now?.() ?? Date.now()) / 1000);
    const cached = await this.options.cache.get(tokenHash);
    if (cached && cached.exp + this.options.clockSkewSeconds > nowSeconds && isCurrentShape(cached)) {
      const key = await this.activeKey(cached.kid);
      return { claims: cached, key };
    }

    let header: ProtectedHeader;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      throw new AuthenticationError('the bearer token is not a JWT');
    }
    if (header.alg !== 'ES512') throw new AuthenticationError('the token must be signed with ES512');
    if (typeof header.kid !== 'string' || header.kid === '')
      throw new AuthenticationError('the token header has no kid');

    const key = await this.activeKey(header.kid);
    const claims = await this.verifySignatureAndClaims(token, key, nowSeconds, header);
    const ttlMs = (claims.exp - nowSeconds + this.options.clockSkewSeconds) * 1000;
    if (ttlMs > 0) await this.options.cache.put(tokenHash, claims, ttlMs);
    return { claims, key };
  }

  private async activeKey(kid: string): Promise<KeyRecord> {
    const key = await this.options.directory.findByKid(kid);
    if (!key) throw new AuthenticationError('no API key pair matches the token kid');
    if (!key.active) throw new AuthenticationError('the API key pair is not active');
    return key;
  }

  private async verifySignatureAndClaims(
    token: string,
    key: KeyRecord,
    nowSeconds: number,
    header: ProtectedHeader,
  ): Promise<VerifiedClaims> {
    let payload: Record<string, unknown>;
    try {
      payload = await this.verifyJws(token, key, nowSeconds, header);
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw new AuthenticationError('the token has expired');
      if (error instanceof joseErrors.JWTClaimValidationFailed)
        throw new AuthenticationError(`the token claim ${error.claim} is not valid`);
      if (error instanceof joseErrors.JOSEError) throw new AuthenticationError('the token signature is not valid');
      throw error;
    }
    if (typeof payload.iat === 'number' && payload.iat > nowSeconds + this.options.clockSkewSeconds) {
      throw new AuthenticationError('the token was issued in the future');
    }
    const scopes = payload.scopes;
    if (!Array.isArray(scopes) || !scopes.every((scope): scope is string => typeof scope === 'string')) {
      throw new AuthenticationError('the token has no scopes claim');
    }
    let embed: EmbedClaim | undefined;
    if (payload.embed !== undefined) {
      const parsed = parseEmbedClaim(payload.embed);
      if (!parsed.ok) throw new AuthenticationError(parsed.problem);
      embed = parsed.claim;
    }
    const checkoutSessionId = payload.checkout_session_id;
    if (checkoutSessionId !== undefined && !isCheckoutSessionIdClaim(checkoutSessionId)) {
      throw new AuthenticationError('the token claim checkout_session_id must be a checkout session id (a UUID)');
    }
    return {
      kid: key.kid,
      scopes,
      exp: payload.exp as number,
      ...(embed !== undefined ? { embed } : {}),
      ...(checkoutSessionId !== undefined ? { checkoutSessionId } : {}),
      ...(typeof payload.jti === 'string' ? { jti: payload.jti } : {}),
    };
  }

  /**
   * What `jose.jwtVerify(token, key, { algorithms: ['ES512'], clockTolerance, currentDate, requiredClaims: ['exp'] })`
   * did, in its order and with its error classes, but with the signature checked by {@link signatures}: the compact
   * form and the signature segment (JWSInvalid), the signature (JWSSignatureVerificationFailed), then the header's
   * `crit`/`b64` and the claims set (exp required; exp, nbf, iat with the skew) by jose's own validation, run on the
   * same header and payload through `UnsecuredJWT.decode` (the header's alg, ES512, was checked before any key).
   */
  private async verifyJws(
    token: string,
    key: KeyRecord,
    nowSeconds: number,
    header: ProtectedHeader,
  ): Promise<Record<string, unknown>> {
    const { 0: headerSegment = '', 1: payloadSegment = '', 2: signatureSegment = '', length } = token.split('.');
    if (length !== 3) throw new joseErrors.JWSInvalid('Invalid Compact JWS');
    let signature: Uint8Array;
    try {
      signature = base64url.decode(signatureSegment);
    } catch (cause) {
      throw new joseErrors.JWSInvalid('Failed to base64url decode the signature', { cause });
    }
    const publicKey = this.publicKey(key);
    if (publicKey.asymmetricKeyDetails?.namedCurve !== 'secp521r1') {
      // What jose did with a key of another curve (a TypeError, not a refusal): the key directory holds P-521 only.
      throw new TypeError('CryptoKey does not support this operation, its namedCurve must be P-521');
    }
    const signed = `${headerSegment}.${payloadSegment}`;
    if (NON_ASCII.test(signed)) throw new joseErrors.JWSInvalid('The payload is not a valid base64url string');
    // TextEncoder: a buffer of its own, so a worker is sent these bytes and not a shared pool slab.
    const check: SignatureCheck = { signingInput: asciiEncoder.encode(signed), signature, publicKey, alg: 'ES512' };
    let valid: boolean;
    try {
      valid = await this.signatures.verifySignature(check);
    } catch (error) {
      if (!(error instanceof SignaturePoolUnavailableError)) throw error;
      valid = verifySignatureNow(check);
    }
    if (!valid) throw new joseErrors.JWSSignatureVerificationFailed();

    // The header as it was, but for alg, so that jose's unsecured-JWT decoder runs its crit/b64 and claims checks.
    const unsecured = `${base64url.encode(JSON.stringify({ ...header, alg: 'none' }))}.${payloadSegment}.`;
    return UnsecuredJWT.decode(unsecured, {
      clockTolerance: this.options.clockSkewSeconds,
      currentDate: new Date(nowSeconds * 1000),
      requiredClaims: ['exp'],
    }).payload as Record<string, unknown>;
  }

  private publicKey(key: KeyRecord): KeyObject {
    let publicKey = this.publicKeys.get(key.kid);
    if (!publicKey) {
      publicKey = createPublicKey({ key: key.publicJwk as never, format: 'jwk' });
      this.publicKeys.set(key.kid, publicKey);
    }
    return publicKey;
  }
}

/**
 * Whether cached claims have the shape this version writes. The shared cache outlives a deployment: an entry an
 * older gateway wrote (a `checkout_session_id` member, an `embed` claim never checked) would otherwise pass as
 * claims without a binding or with an unchecked pin.
 */
function isCurrentShape(claims: VerifiedClaims): boolean {
  if ('checkout_session_id' in claims) return false;
  if (claims.embed !== undefined && !parseEmbedClaim(claims.embed).ok) return false;
  return claims.checkoutSessionId === undefined || isCheckoutSessionIdClaim(claims.checkoutSessionId);
}
