/**
 * A signing key that stands in for Paze's outside production: development and the tests sign Paze payloads with it,
 * and without PAZE_SIGNING_KEYS the service verifies against its public half. It is published here, so anyone can
 * sign with it: with NODE_ENV=production and no PAZE_SIGNING_KEYS nothing is trusted and Paze payments are refused
 * (docs/paze.md).
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { CompactEncrypt, CompactSign } from 'jose';

export const PAZE_DEVELOPMENT_SIGNING_KEY_ID = 'switchyard-paze-development';

/** PKCS#8 PEM, RSA 2048: RS256, as Paze signs. Not a secret. */
export const PAZE_DEVELOPMENT_SIGNING_KEY_PEM = `-----BEGIN PRIVATE KEY-----
MIIEugIBADANBgkqhkiG9w0BAQEFAASCBKQwggSgAgEAAoIBAQDdpDkJsebl34jX
pkg3cR621JIynbSdR7VrGYgWeUHCPZyE2boLjCdqvlpOnu2PVxTkrbfTFwF9uxou
rK/QmgUpoe2/n/7Gq9dzJqWFHptg6VUNWKd2KFVyr2sswkQ6cYQ4iVWV+8thAoOL
r2xf2JxM1gK0GWy5leZeTUWWGfnkAE6MRY94kg5Gm4edl3T1kUzECkdfJHz3/32I
ekqcaLhBxfJMcwsoOO4bhY0ovVRmAzQXGGYs1yFMqJI06QL2glWk/TSR3M0/0MG/
qhn+OeuN93zQqUckoe+y03IM4AhtL70U+bJ8Xkx2bYyeuNgmnNXjgMjSXI/ePZry
6L/m5yo9AgMBAAECgf99iYbE9v7RNMtNWeGNhYTgCYbFJI4oh3U6NDvgfs3ANyVw
GeJGqBurWiXMYjgr+CbdX4e/CEjP7inmRelPPe2upwkCgJzN6ocdscYOoEdhnMeP
x6cSRcYgLzuFHoOGlsVNQHw5d2S6jbH0bGf14bqlypG9cKkkdMMGpr3DRvNDL9t0
kzDRbfgqdQTEIaI21dVVStkDfw6hqEMB0IzdlnxekZdRNUpm81bABGwm+xEc1NB+
5UkGxKxxIthAIvISVDHfbXXziSp/lvf5rd6E3CIr1jTrUSmf350zOvDbMBiQVXfF
XCo+3NyrBwtbsyX0/cb7fXD8YDUokxnZ+muICj0CgYEA8DRU5/k8crb2U/HuJKMB
LpzDMK1OFmXcVl9DyAwa5oi8IsSNU184wV2U4374PCSY6INi422e6RObhK5XmCwC
waiSj1RHAIQD1cU6ejVmw68FLYo2Q3xmRnBV/gx9WHqFlOUDCp2N3IvhdYkNraez
Jw9tQfgQuy9GDMKIrhC2ccMCgYEA7DdlzaUUqKJQIZ8JthzE/9ebg53PNq0fz3pK
tlQIV/pEJHogrB1R2IaUjR2VCfdxfG8lIAP69MMY58Rk7tZfVBJE+xT7/huR1ctj
ij+XveKHthsm897mfsHh1rfFpAcXkCr4iMmUOD98tUzZ8NbxNtHWwEZQySWkHjWI
MntWM/8CgYBSakIvjW5WFbyStNF2tI71RUgbbXr7aFufLvR8sNqR+pxCeZnb3zID
9m3dWHUnfY8RR/MoATai1d1oOsFHLuKLO6F9l/b8kE8Yi6EyyRvHTEfEhkV0Bjy5
MlXu4q4nK3Kl0aWngMNpxnzG7Q1KZd2sKzjbh5eGAgRQ4HYw8v8GLQKBgGs5ll+s
AN2vmDo6zBi7pH0SLQiouOfz3E29EG8FZCgzdX0tZulaAc4NAR+xfvbgOMaoWSzY
QbGbYhHK55o2+1zZUjC7TMwDTcbDpXKa/VF3o+z5FEx9MRn2/oION4wGoB6UMu88
uahywTQ3J3MYzrP4usfa4077ZC1GVYW80NuXAoGAS/StocXiH6QGTYMPjVqQOQN6
yULK52/oy8s4aNPmcvIhFXlpfJJCl/UjTpTje3pYcpvyEv0I5ugc2H38OJGVsKBa
o9qHMcCrngfNnWnvtx2ufctiBcpPn2FF5CfTcoF7RUYTlvTsISqoPIJWFfTUIxRq
/oWEgeJ3zEMXHjhUais=
-----END PRIVATE KEY-----
`;

export interface SealOptions {
  /** The RS256 key both JWS are signed with; default: the development key (what the service trusts without PAZE_SIGNING_KEYS). */
  readonly signingKey?: KeyObject;
  readonly alg?: string;
  readonly enc?: string;
  /** Leave the payload or the JWE unsigned (to show they are refused). */
  readonly unsigned?: 'inner' | 'outer';
}

/**
 * A Complete `securedPayload` as Paze builds it, `JWS(JWE(JWS(payload)))`, encrypted to the merchant's public key:
 * for development (a checkout without Paze) and the tests.
 */
export async function sealPazePayload(
  payload: unknown,
  encryptionKey: KeyObject,
  options: SealOptions = {},
): Promise<string> {
  const signingKey = options.signingKey ?? createPrivateKey(PAZE_DEVELOPMENT_SIGNING_KEY_PEM);
  const header = { alg: 'RS256', kid: options.signingKey ? undefined : PAZE_DEVELOPMENT_SIGNING_KEY_ID };
  const sign = (content: string) =>
    new CompactSign(new TextEncoder().encode(content)).setProtectedHeader(header).sign(signingKey);
  const json = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const inner = options.unsigned === 'inner' ? json : await sign(json);
  const jwe = await new CompactEncrypt(new TextEncoder().encode(inner))
    .setProtectedHeader({ alg: options.alg ?? 'RSA-OAEP-256', enc: options.enc ?? 'A256GCM' })
    .encrypt(encryptionKey);
  return options.unsigned === 'outer' ? jwe : sign(jwe);
}
