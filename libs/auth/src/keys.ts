/** API key pair key material: P-521 generation, RFC 7638 thumbprints (the JWT `kid`), PEM/JWK import. */
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';

export interface PublicJwk {
  readonly kty: 'EC';
  readonly crv: 'P-521';
  readonly x: string;
  readonly y: string;
}

export interface GeneratedKeyPair {
  readonly publicJwk: PublicJwk;
  /** PKCS#8 PEM: shown to the caller once, never stored. */
  readonly privateKeyPem: string;
}

export function generateP521KeyPair(): GeneratedKeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-521' });
  return {
    publicJwk: toPublicJwk(publicKey),
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  };
}

export class UnsupportedKeyError extends Error {
  readonly type = 'unsupported_key' as const;
}

/** Reads a caller-supplied public key (PEM or JWK); only P-521 keys sign ES512. */
export function parsePublicKey(input: string | Record<string, unknown>): PublicJwk {
  let key: KeyObject;
  try {
    key = typeof input === 'string' ? createPublicKey(input) : createPublicKey({ key: input as never, format: 'jwk' });
  } catch (error) {
    throw new UnsupportedKeyError(`not a readable public key: ${(error as Error).message}`);
  }
  if (key.type !== 'public') throw new UnsupportedKeyError('a public key is required, not a private key');
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'secp521r1') {
    throw new UnsupportedKeyError('the key must be an EC P-521 key (ES512)');
  }
  return toPublicJwk(key);
}

function toPublicJwk(key: KeyObject): PublicJwk {
  const jwk = key.export({ format: 'jwk' });
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-521' || !jwk.x || !jwk.y)
    throw new UnsupportedKeyError('the key must be an EC P-521 key');
  return { kty: 'EC', crv: 'P-521', x: jwk.x, y: jwk.y };
}

/** RFC 7638 SHA-256 thumbprint, base64url: what clients send as the JWT `kid`. */
export const thumbprint = (jwk: PublicJwk): Promise<string> => calculateJwkThumbprint(jwk as JWK, 'sha256');
