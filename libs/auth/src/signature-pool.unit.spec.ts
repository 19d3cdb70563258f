/**
 * The signature pool (worker threads checking JWS signatures) and the TokenVerifier on it: the same verdicts as
 * inline and as `jose.jwtVerify` gave before, a worker dying mid-flight costs no request, and shutdown is clean.
 */
import { spawnSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import path from 'node:path';
import { errors as joseErrors, jwtVerify } from 'jose';
import { generateP521KeyPair, thumbprint } from './keys';
import {
  createSignatureVerifier,
  InlineSignatureVerifier,
  SignaturePool,
  SignaturePoolUnavailableError,
  type SignatureCheck,
  type SignatureVerifier,
} from './signature-pool';
import { AuthenticationError, TokenVerifier, type KeyRecord } from './token-verifier';
import { InMemoryVerifiedTokenCache } from './verified-token-cache';

const pair = generateP521KeyPair();
const other = generateP521KeyPair();
const privateKey = createPrivateKey(pair.privateKeyPem);
const publicKey: KeyObject = createPublicKey({ key: pair.publicJwk as never, format: 'jwk' });
const otherPublicKey: KeyObject = createPublicKey({ key: other.publicJwk as never, format: 'jwk' });
let key: KeyRecord;
const pools: SignaturePool[] = [];

const segment = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

/** A compact JWS over exactly these segments, signed ES512 by `pair`. */
function craft(header: unknown, claims: unknown, signWith = privateKey): string {
  const signingInput = `${segment(header)}.${segment(claims)}`;
  return `${signingInput}.${sign('sha512', Buffer.from(signingInput), { key: signWith, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

const claims = (extra: Record<string, unknown> = {}) => ({
  scopes: ['*.read'],
  iat: now(),
  exp: now() + 300,
  jti: `${Math.random()}`,
  ...extra,
});
const token = (extra: Record<string, unknown> = {}) => craft({ alg: 'ES512', kid: key.kid, typ: 'JWT' }, claims(extra));

function checkOf(jwt: string, with_: KeyObject = publicKey): SignatureCheck {
  const [header = '', payload = '', signature = ''] = jwt.split('.');
  return {
    signingInput: new TextEncoder().encode(`${header}.${payload}`),
    signature: new Uint8Array(Buffer.from(signature, 'base64url')),
    publicKey: with_,
    alg: 'ES512',
  };
}

function pool(options: ConstructorParameters<typeof SignaturePool>[0] = {}): SignaturePool {
  const created = new SignaturePool({ workers: 2, ...options });
  pools.push(created);
  return created;
}

const verifierOn = (signatures?: SignatureVerifier) =>
  new TokenVerifier({
    directory: { findByKid: async (kid) => (kid === key.kid ? key : null) },
    cache: new InMemoryVerifiedTokenCache(),
    clockSkewSeconds: 30,
    ...(signatures ? { signatures } : {}),
  });

/** The outcome a verifier gives: the claims, or the refusal's message. */
async function outcome(promise: Promise<{ claims: unknown }>): Promise<unknown> {
  try {
    return { claims: (await promise).claims };
  } catch (error) {
    if (error instanceof AuthenticationError) return { refused: error.message };
    return { threw: (error as Error).constructor.name };
  }
}

beforeAll(async () => {
  key = {
    id: 'key-1',
    kid: await thumbprint(pair.publicJwk),
    publicJwk: pair.publicJwk,
    active: true,
    permissions: ['*.read'],
    merchantAccountIds: [],
  };
});

afterAll(async () => {
  await Promise.all(pools.map((created) => created.close()));
});

describe('SignaturePool', () => {
  it('answers true for a valid signature, false for a changed one and for another key', async () => {
    const signatures = pool();
    const jwt = token();
    expect(await signatures.verifySignature(checkOf(jwt))).toBe(true);
    const flipped = checkOf(jwt);
    flipped.signature[10] = flipped.signature[10]! ^ 1;
    expect(await signatures.verifySignature(flipped)).toBe(false);
    expect(await signatures.verifySignature(checkOf(jwt, otherPublicKey))).toBe(false);
    expect(await signatures.verifySignature({ ...checkOf(jwt), signature: new Uint8Array(12) })).toBe(false);
    expect(signatures.stats()).toMatchObject({ workers: 2, inFlight: 0, queued: 0, replaced: 0, completed: 4 });
  });

  it('gives every one of many concurrent checks its own answer', async () => {
    const signatures = pool({ maxInFlightPerWorker: 1 });
    const jwts = Array.from({ length: 24 }, () => token());
    const answers = await Promise.all(
      jwts.map((jwt, i) => signatures.verifySignature(i % 3 === 0 ? checkOf(jwt, otherPublicKey) : checkOf(jwt))),
    );
    expect(answers).toEqual(jwts.map((_jwt, i) => i % 3 !== 0));
  });

  it('replaces a worker killed mid-flight: its checks fail over with SignaturePoolUnavailableError, later ones pass', async () => {
    const signatures = pool({ maxInFlightPerWorker: 4 });
    const jwt = token();
    const inFlight = Array.from({ length: 16 }, () =>
      signatures.verifySignature(checkOf(jwt)).then(
        (valid) => ({ valid }),
        (error: unknown) => ({ error }),
      ),
    );
    await signatures.killWorker(0);
    const settled = await Promise.all(inFlight);
    const failed = settled.filter((result) => 'error' in result);
    expect(failed.length).toBeGreaterThan(0);
    for (const result of failed)
      expect((result as { error: unknown }).error).toBeInstanceOf(SignaturePoolUnavailableError);
    for (const result of settled.filter((entry) => 'valid' in entry)) expect(result).toEqual({ valid: true });
    expect(signatures.stats()).toMatchObject({ workers: 2, replaced: 1 });
    expect(await Promise.all(Array.from({ length: 6 }, () => signatures.verifySignature(checkOf(jwt))))).toEqual(
      Array(6).fill(true),
    );
  });

  it('a worker dying again and again is replaced after a pause, during which every check fails over at once', async () => {
    const deaths: unknown[] = [];
    const signatures = pool({ workers: 1, onWorkerError: (error) => deaths.push(error) });
    const jwt = token();
    await signatures.killWorker(0);
    expect(signatures.stats()).toMatchObject({ workers: 1, replaced: 1 });
    await signatures.killWorker(0);
    expect(signatures.stats().workers).toBe(0);
    await expect(signatures.verifySignature(checkOf(jwt))).rejects.toBeInstanceOf(SignaturePoolUnavailableError);
    await vi.waitFor(() => expect(signatures.stats().workers).toBe(1), { timeout: 10_000, interval: 50 });
    expect(await signatures.verifySignature(checkOf(jwt))).toBe(true);
    expect(deaths).toEqual([]);
  });

  it('refuses past its queue bound instead of queueing without end', async () => {
    const signatures = pool({ workers: 1, maxInFlightPerWorker: 1, maxQueued: 2 });
    const jwt = token();
    const accepted = [1, 2, 3].map(() => signatures.verifySignature(checkOf(jwt)));
    await expect(signatures.verifySignature(checkOf(jwt))).rejects.toBeInstanceOf(SignaturePoolUnavailableError);
    expect(await Promise.all(accepted)).toEqual([true, true, true]);
  });

  it('on close fails what is waiting or in flight, and every later check, with SignaturePoolUnavailableError', async () => {
    const signatures = pool({ workers: 1, maxInFlightPerWorker: 1 });
    const jwt = token();
    const pending = Array.from({ length: 4 }, () =>
      signatures.verifySignature(checkOf(jwt)).catch((error: unknown) => error),
    );
    await signatures.close();
    for (const result of await Promise.all(pending))
      expect(result === true || result instanceof SignaturePoolUnavailableError).toBe(true);
    await expect(signatures.verifySignature(checkOf(jwt))).rejects.toBeInstanceOf(SignaturePoolUnavailableError);
    expect(signatures.stats().workers).toBe(0);
    await signatures.close();
  });

  it('JWT_VERIFY_WORKERS=0 is the inline verifier; a pool needs at least one worker', async () => {
    expect(createSignatureVerifier(0)).toBeInstanceOf(InlineSignatureVerifier);
    expect(await createSignatureVerifier(0).verifySignature(checkOf(token()))).toBe(true);
    expect(() => new SignaturePool({ workers: 0 })).toThrow(RangeError);
  });

  it('never keeps a process alive: a script that verifies through a pool and never closes it exits by itself', () => {
    const root = path.resolve(__dirname, '../../..');
    const script = `
      const { SignaturePool } = require('./libs/auth/src/signature-pool.ts');
      const { generateKeyPairSync, sign } = require('node:crypto');
      const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-521' });
      const signingInput = Buffer.from('a.b');
      const signature = sign('sha512', signingInput, { key: privateKey, dsaEncoding: 'ieee-p1363' });
      new SignaturePool({ workers: 2 }).verifySignature({ signingInput, signature, publicKey, alg: 'ES512' }).then((valid) => console.log('valid=' + valid));
    `;
    const child = spawnSync(process.execPath, ['-r', './scripts/register.cjs', '-e', script], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('valid=true');
    expect(child.status).toBe(0);
  });
});

describe('TokenVerifier on the pool', () => {
  it('verifies a token, refuses a forged one, and answers a reused one from the cache without the pool', async () => {
    const signatures = pool();
    const verifier = verifierOn(signatures);
    const jwt = token();
    expect((await verifier.verify(jwt)).claims).toMatchObject({ kid: key.kid, scopes: ['*.read'] });
    const completed = signatures.stats().completed;
    await verifier.verify(jwt);
    expect(signatures.stats().completed).toBe(completed);
    const forged = craft({ alg: 'ES512', kid: key.kid }, claims(), createPrivateKey(other.privateKeyPem));
    await expect(verifier.verify(forged)).rejects.toThrow(new AuthenticationError('the token signature is not valid'));
  });

  it('checks inline, once, what the pool cannot answer: a killed worker, a closed pool, a full queue', async () => {
    const signatures = pool({ maxInFlightPerWorker: 4 });
    const verifier = verifierOn(signatures);
    const jwts = Array.from({ length: 12 }, () => token());
    const verifying = jwts.map((jwt) => verifier.verify(jwt));
    await signatures.killWorker(1);
    for (const verified of await Promise.all(verifying)) expect(verified.claims.scopes).toEqual(['*.read']);

    const full = pool({ workers: 1, maxInFlightPerWorker: 1, maxQueued: 0 });
    const onFull = verifierOn(full);
    expect((await Promise.all([token(), token(), token()].map((jwt) => onFull.verify(jwt)))).length).toBe(3);

    await signatures.close();
    expect((await verifier.verify(token())).claims.kid).toBe(key.kid);
    await expect(
      verifier.verify(craft({ alg: 'ES512', kid: key.kid }, claims(), createPrivateKey(other.privateKeyPem))),
    ).rejects.toBeInstanceOf(AuthenticationError);
  });

  /** What the verifier answered when `jose.jwtVerify` checked signature and claims (before the pool). */
  async function joseOutcome(jwt: string): Promise<unknown> {
    const nowSeconds = now();
    try {
      const { payload } = await jwtVerify(jwt, publicKey, {
        algorithms: ['ES512'],
        clockTolerance: 30,
        currentDate: new Date(nowSeconds * 1000),
        requiredClaims: ['exp'],
      });
      return { payloadExp: payload.exp };
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) return { refused: 'the token has expired' };
      if (error instanceof joseErrors.JWTClaimValidationFailed)
        return { refused: `the token claim ${error.claim} is not valid` };
      if (error instanceof joseErrors.JOSEError) return { refused: 'the token signature is not valid' };
      return { threw: (error as Error).constructor.name };
    }
  }

  const header = () => ({ alg: 'ES512', kid: key.kid });
  const cases: [string, string, () => string][] = [
    ['a valid token', 'ok', () => token()],
    ['an expired token', 'the token has expired', () => token({ exp: now() - 31 })],
    ['an exp within the skew', 'ok', () => token({ exp: now() - 10 })],
    ['an exp that is a string', 'the token claim exp is not valid', () => token({ exp: String(now() + 300) })],
    ['no exp', 'the token claim exp is not valid', () => craft(header(), { scopes: ['*.read'] })],
    ['an nbf beyond the skew', 'the token claim nbf is not valid', () => token({ nbf: now() + 60 })],
    ['an nbf within the skew', 'ok', () => token({ nbf: now() + 20 })],
    ['an nbf that is a string', 'the token claim nbf is not valid', () => token({ nbf: 'soon' })],
    ['an iat that is a string', 'the token claim iat is not valid', () => token({ iat: 'now' })],
    ['claims that are an array', 'the token signature is not valid', () => craft(header(), [1, 2])],
    ['claims that are not JSON', 'the token signature is not valid', () => craft(header(), 'not json')],
    [
      'an unknown crit header',
      'the token signature is not valid',
      () => craft({ ...header(), crit: ['exp2'], exp2: 1 }, claims()),
    ],
    [
      'a crit header that is not an array',
      'the token signature is not valid',
      () => craft({ ...header(), crit: 'b64' }, claims()),
    ],
    [
      'an unencoded payload (b64: false)',
      'the token signature is not valid',
      () => craft({ ...header(), crit: ['b64'], b64: false }, claims()),
    ],
    ['a b64: true header', 'ok', () => craft({ ...header(), crit: ['b64'], b64: true }, claims())],
    [
      'a signature of another key',
      'the token signature is not valid',
      () => craft(header(), claims(), createPrivateKey(other.privateKeyPem)),
    ],
    [
      'an expired token with a bad signature',
      'the token signature is not valid',
      () => craft(header(), claims({ exp: now() - 100 }), createPrivateKey(other.privateKeyPem)),
    ],
    [
      'a signature with a character outside base64url',
      'the token signature is not valid',
      () => `${token().slice(0, -3)}*${token().slice(-2)}`,
    ],
    ['a signature with padding', 'the token signature is not valid', () => `${token()}=`],
    ['an empty signature', 'the token signature is not valid', () => `${token().split('.').slice(0, 2).join('.')}.`],
    ['five segments', 'the token signature is not valid', () => `${token()}.a.b`],
    [
      'a payload segment with a non-ASCII character',
      'the token signature is not valid',
      () => token().replace('.', '.é'),
    ],
  ];

  it.each(cases)(
    'gives for %s what jose.jwtVerify gave (%s), inline and on the pool',
    async (_case, expected, make) => {
      const jwt = make();
      const before = await joseOutcome(jwt);
      const inline = await outcome(verifierOn().verify(jwt));
      const onPool = await outcome(verifierOn(pool({ workers: 1 })).verify(jwt));
      expect(onPool).toEqual(inline);
      if ('payloadExp' in (before as object))
        expect(inline).toMatchObject({ claims: { exp: (before as { payloadExp: number }).payloadExp } });
      else expect(inline).toEqual(before);
      expect(inline).toEqual(
        expected === 'ok' ? { claims: expect.objectContaining({ kid: key.kid }) } : { refused: expected },
      );
    },
  );
});
