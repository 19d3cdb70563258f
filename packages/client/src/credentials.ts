/**
 * API key credentials and the ES512 tokens signed with them (docs: `/docs`, Authentication). Signed with node:crypto
 * directly — an ES512 JWS is one `sign` call — so the CommonJS build needs no ESM-only JOSE library.
 */
import { createHash, createPrivateKey, createPublicKey, randomUUID, sign, type KeyObject } from 'node:crypto';
import fs from 'node:fs';

/** What `cli api-keys create` prints (and `--out FILE` writes). */
export interface ApiKeyFile {
  readonly id?: string;
  readonly kid: string;
  readonly private_key: string;
}

/**
 * The key a client signs with: the path of the key file `api-keys create` wrote, its parsed JSON, or a PEM with its
 * `kid` (the RFC 7638 thumbprint of the public key; computed when omitted).
 */
export type Credentials = string | ApiKeyFile | { readonly privateKey: string | KeyObject; readonly kid?: string };

export interface TokenClaims {
  readonly scopes: readonly string[];
  readonly embed?: Readonly<Record<string, unknown>>;
  readonly checkout_session_id?: string;
}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/** RFC 7638 JWK thumbprint (SHA-256) of an EC public key: what the service expects as `kid`. */
export function keyThumbprint(key: KeyObject): string {
  const jwk = createPublicKey(key).export({ format: 'jwk' }) as { crv: string; kty: string; x: string; y: string };
  return createHash('sha256')
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }))
    .digest('base64url');
}

export class TokenSigner {
  private constructor(
    private readonly key: KeyObject,
    readonly kid: string,
  ) {}

  static from(credentials: Credentials): TokenSigner {
    const { privateKey, kid } = readCredentials(credentials);
    const key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey;
    if (
      key.type !== 'private' ||
      key.asymmetricKeyType !== 'ec' ||
      key.asymmetricKeyDetails?.namedCurve !== 'secp521r1'
    ) {
      throw new TypeError('the API key must be a P-521 (secp521r1) private key, as `api-keys create` makes');
    }
    return new TokenSigner(key, kid ?? keyThumbprint(key));
  }

  /** A compact JWS: ES512, `kid`, `iat` = `nbf` = now, `exp` = now + lifetime, a fresh `jti`. */
  sign(claims: TokenClaims, lifetimeSeconds: number, nowSeconds = Math.floor(Date.now() / 1000)): string {
    const header = base64url(JSON.stringify({ alg: 'ES512', typ: 'JWT', kid: this.kid }));
    const payload = base64url(
      JSON.stringify({
        ...claims,
        iat: nowSeconds,
        nbf: nowSeconds,
        exp: nowSeconds + lifetimeSeconds,
        jti: randomUUID(),
      }),
    );
    const signature = sign('sha512', Buffer.from(`${header}.${payload}`), { key: this.key, dsaEncoding: 'ieee-p1363' });
    return `${header}.${payload}.${base64url(signature)}`;
  }
}

function readCredentials(credentials: Credentials): { privateKey: string | KeyObject; kid: string | undefined } {
  if (typeof credentials === 'string')
    return readCredentials(JSON.parse(fs.readFileSync(credentials, 'utf8')) as ApiKeyFile);
  if ('private_key' in credentials) {
    if (typeof credentials.private_key !== 'string' || typeof credentials.kid !== 'string') {
      throw new TypeError('the key file needs `kid` and `private_key` (the JSON `api-keys create` printed)');
    }
    return { privateKey: credentials.private_key, kid: credentials.kid };
  }
  return { privateKey: credentials.privateKey, kid: credentials.kid };
}

/**
 * Tokens per scope set, signed on first use and signed again once less than `renewBeforeSeconds` of their lifetime
 * is left, so a request never leaves with a token about to expire.
 */
export class TokenCache {
  private readonly tokens = new Map<string, { token: string; expiresAt: number }>();

  constructor(
    private readonly signer: TokenSigner,
    private readonly lifetimeSeconds: number,
    private readonly renewBeforeSeconds: number,
    private readonly now: () => number = () => Date.now(),
  ) {
    if (!(lifetimeSeconds > renewBeforeSeconds))
      throw new RangeError('tokenLifetimeSeconds must be longer than the renewal margin');
  }

  token(scopes: readonly string[]): string {
    const cacheKey = [...scopes].sort().join(' ');
    const nowMs = this.now();
    const cached = this.tokens.get(cacheKey);
    if (cached && cached.expiresAt - nowMs > this.renewBeforeSeconds * 1000) return cached.token;
    const nowSeconds = Math.floor(nowMs / 1000);
    const token = this.signer.sign({ scopes }, this.lifetimeSeconds, nowSeconds);
    this.tokens.set(cacheKey, { token, expiresAt: (nowSeconds + this.lifetimeSeconds) * 1000 });
    return token;
  }
}
