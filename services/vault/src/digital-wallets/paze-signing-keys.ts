/**
 * Paze's signing keys, which the outer and inner JWS of a Complete payload must verify against (docs/paze.md):
 * PAZE_SIGNING_KEYS names them — a JWKS file, a PEM file (public keys or certificates), or an https URL of a JWKS.
 * Unset, development and tests use the published development key; in production there are none, and every Paze
 * payload is refused (`paze_signing_keys_not_configured`) while the rest of the service runs.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import { createLocalJWKSet, createRemoteJWKSet, type JSONWebKeySet, type JWK } from 'jose';
import { PAZE_DEVELOPMENT_SIGNING_KEY_ID, PAZE_DEVELOPMENT_SIGNING_KEY_PEM } from './paze-development-signing-key';

/** jose's key set: picks the key a JWS header names (`kid`, `alg`); several candidates are tried in turn. */
export type PazeSigningKeys = ReturnType<typeof createLocalJWKSet> | ReturnType<typeof createRemoteJWKSet>;

/** The development key's public half: what payloads are verified against without PAZE_SIGNING_KEYS. */
export const pazeDevelopmentSigningKeys = (): PazeSigningKeys =>
  createLocalJWKSet({
    keys: [
      publicJwk(
        createPublicKey(createPrivateKey(PAZE_DEVELOPMENT_SIGNING_KEY_PEM)).export({ format: 'jwk' }),
        PAZE_DEVELOPMENT_SIGNING_KEY_ID,
      ),
    ],
  });

/**
 * The keys PAZE_SIGNING_KEYS names; unset: the development key, or none (null) in production, where a published key
 * must never be trusted. Throws (stopping the start) when the setting names something unreadable.
 */
export function loadPazeSigningKeys(setting: string | undefined, nodeEnv: string | undefined): PazeSigningKeys | null {
  const source = setting?.trim();
  if (!source) return nodeEnv === 'production' ? null : pazeDevelopmentSigningKeys();
  if (/^https:\/\//i.test(source)) return createRemoteJWKSet(new URL(source));
  const text = fs.readFileSync(source, 'utf8');
  if (text.trimStart().startsWith('{')) return createLocalJWKSet(JSON.parse(text) as JSONWebKeySet);
  const blocks = text.match(/-----BEGIN (PUBLIC KEY|CERTIFICATE)-----[\s\S]+?-----END \1-----/g) ?? [];
  if (blocks.length === 0)
    throw new Error(`PAZE_SIGNING_KEYS: ${source} holds neither a JWKS nor PEM public keys or certificates`);
  return createLocalJWKSet({
    keys: blocks.map((block) => publicJwk(createPublicKey(block).export({ format: 'jwk' }))),
  });
}

/** RS256 only, as Paze signs: a key of another type in the set never verifies a Paze payload. */
const publicJwk = (jwk: object, kid?: string): JWK => ({
  ...(jwk as JWK),
  alg: 'RS256',
  use: 'sig',
  ...(kid ? { kid } : {}),
});
