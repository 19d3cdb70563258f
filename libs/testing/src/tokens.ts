/** Signs test tokens the way clients of this API do (ES512, kid = thumbprint), and the ways attackers do. */
import { createHmac, createPrivateKey, createPublicKey } from 'node:crypto';
import { SignJWT } from 'jose';

export interface TokenOptions {
  readonly privateKeyPem: string;
  readonly kid: string;
  readonly scopes?: readonly string[];
  /** Seconds relative to now. */
  readonly iatOffset?: number;
  readonly expiresIn?: number;
  readonly nbfOffset?: number;
  readonly extraClaims?: Record<string, unknown>;
}

export async function signToken(options: TokenOptions): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const iat = now + (options.iatOffset ?? 0);
  const jwt = new SignJWT({ scopes: options.scopes ?? ['*.read', '*.write'], ...options.extraClaims })
    .setProtectedHeader({ alg: 'ES512', typ: 'JWT', kid: options.kid })
    .setIssuedAt(iat)
    .setNotBefore(now + (options.nbfOffset ?? 0))
    .setExpirationTime(iat + (options.expiresIn ?? 30))
    .setJti(crypto.randomUUID());
  return jwt.sign(createPrivateKey(options.privateKeyPem));
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function claims(scopes: readonly string[]) {
  const now = Math.floor(Date.now() / 1000);
  return { scopes, iat: now, nbf: now, exp: now + 30 };
}

/** `alg: none`, no signature. */
export const unsignedToken = (kid: string, scopes: readonly string[] = ['*.read']): string =>
  `${b64({ alg: 'none', typ: 'JWT', kid })}.${b64(claims(scopes))}.`;

/** The classic key-confusion attack: HS256 with the server's public key (PEM) as the HMAC secret. */
export function hs256WithPublicKey(privateKeyPem: string, kid: string, scopes: readonly string[] = ['*.read']): string {
  const publicPem = createPublicKey(privateKeyPem).export({ format: 'pem', type: 'spki' }).toString();
  const signingInput = `${b64({ alg: 'HS256', typ: 'JWT', kid })}.${b64(claims(scopes))}`;
  return `${signingInput}.${createHmac('sha256', publicPem).update(signingInput).digest('base64url')}`;
}

/** Flips one character of the signature. */
export function tamperSignature(token: string): string {
  const [header, payload, signature = ''] = token.split('.');
  const flipped = signature[10] === 'A' ? 'B' : 'A';
  return `${header}.${payload}.${signature.slice(0, 10)}${flipped}${signature.slice(11)}`;
}

/** Swaps the payload (e.g. widening scopes) and keeps the original signature. */
export function swapPayload(token: string, payload: Record<string, unknown>): string {
  const [header, , signature] = token.split('.');
  return `${header}.${b64(payload)}.${signature}`;
}
