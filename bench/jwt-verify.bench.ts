/**
 * ES512 token verification on this machine: jose (what the gateway uses), bare node:crypto (the floor), and the
 * gateway's TokenVerifier answering a reused token from its cache. Prints verifications per second.
 *   node -r ./scripts/register.cjs bench/jwt-verify.bench.ts [--seconds 2]
 */
import { createPublicKey, verify } from 'node:crypto';
import { generateP521KeyPair, InMemoryVerifiedTokenCache, thumbprint, TokenVerifier } from '@switchyard/auth';
import { signToken } from '@switchyard/testing/src/tokens';
import { jwtVerify } from 'jose';

const secondsArg = process.argv.indexOf('--seconds');
const seconds = secondsArg === -1 ? 2 : Number(process.argv[secondsArg + 1]);

async function rate(name: string, run: () => Promise<unknown> | unknown): Promise<[string, number]> {
  for (let i = 0; i < 50; i += 1) await run();
  let count = 0;
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    await run();
    count += 1;
  }
  return [name, count / seconds];
}

async function main() {
  const pair = generateP521KeyPair();
  const kid = await thumbprint(pair.publicJwk);
  const publicKey = createPublicKey({ key: pair.publicJwk as never, format: 'jwk' });
  const token = await signToken({ privateKeyPem: pair.privateKeyPem, kid, scopes: ['*.read'], expiresIn: 3600 });
  const [header = '', payload = '', signature = ''] = token.split('.');
  const key = {
    id: 'k',
    kid,
    publicJwk: pair.publicJwk,
    active: true,
    permissions: ['*.read'],
    merchantAccountIds: [],
  };
  const verifier = new TokenVerifier({
    directory: { findByKid: async () => key },
    cache: new InMemoryVerifiedTokenCache(),
    clockSkewSeconds: 30,
  });

  const rows = [
    await rate('node:crypto verify (signature only)', () =>
      verify(
        'sha512',
        Buffer.from(`${header}.${payload}`),
        { key: publicKey, dsaEncoding: 'ieee-p1363' },
        Buffer.from(signature, 'base64url'),
      ),
    ),
    await rate('jose jwtVerify (full check)', () => jwtVerify(token, publicKey, { algorithms: ['ES512'] })),
    await rate('TokenVerifier, token reused (cache hit)', () => verifier.verify(token)),
  ];
  console.log('| ES512 verification | per second (1 core) |\n|---|---|');
  for (const [name, perSecond] of rows) console.log(`| ${name} | ${Math.round(perSecond).toLocaleString('en')} |`);
}

void main();
