/** The embed token claims as the verifier reads them (docs/embed-tokens.md), through the verified-token cache too. */
import { createHash } from 'node:crypto';
import { signToken } from '@switchyard/testing';
import { generateP521KeyPair, thumbprint } from './keys';
import {
  AuthenticationError,
  TokenVerifier,
  type KeyRecord,
  type VerifiedClaims,
  type VerifiedTokenCache,
} from './token-verifier';
import { InMemoryVerifiedTokenCache, LayeredVerifiedTokenCache, type CacheStore } from './verified-token-cache';

const pair = generateP521KeyPair();
let key: KeyRecord;

beforeAll(async () => {
  key = {
    id: 'key-1',
    kid: await thumbprint(pair.publicJwk),
    publicJwk: pair.publicJwk,
    active: true,
    permissions: ['embed'],
    merchantAccountIds: [],
  };
});

/** A shared store as Redis would be: strings only, so what it holds went through JSON. */
class MapStore implements CacheStore {
  readonly values = new Map<string, string>();
  async get(name: string) {
    return this.values.get(name) ?? null;
  }
  async set(name: string, value: string) {
    this.values.set(name, value);
    return true;
  }
}

const verifierWith = (cache: VerifiedTokenCache = new InMemoryVerifiedTokenCache()) =>
  new TokenVerifier({
    directory: { findByKid: async (kid) => (kid === key.kid ? key : null) },
    cache,
    clockSkewSeconds: 30,
  });

const embedToken = (extraClaims: Record<string, unknown>) =>
  signToken({ kid: key.kid, privateKeyPem: pair.privateKeyPem, scopes: ['embed'], expiresIn: 300, extraClaims });

const SESSION = '7d0cf9bc-58f5-4b1c-9a0c-2a4b8f3f6e01';
const BUYER = 'b6a0a8a4-0c3e-4d43-8f43-93d3f2a7c111';

async function refusal(promise: Promise<unknown>): Promise<AuthenticationError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AuthenticationError);
  return error as AuthenticationError;
}

describe('the embed and checkout_session_id claims', () => {
  it('are read into the verified claims, pinned values as the token has them', async () => {
    const embed = { amount: 1299, currency: 'USD', buyer_id: BUYER, metadata: { order: 'A-1' } };
    const { claims } = await verifierWith().verify(await embedToken({ embed, checkout_session_id: SESSION }));
    expect(claims).toMatchObject({ scopes: ['embed'], embed, checkoutSessionId: SESSION });
    expect(claims).not.toHaveProperty('checkout_session_id');
  });

  it('are absent when the token has neither; an empty embed claim pins nothing', async () => {
    const { claims } = await verifierWith().verify(await embedToken({}));
    expect(claims).not.toHaveProperty('embed');
    expect(claims).not.toHaveProperty('checkoutSessionId');
    expect((await verifierWith().verify(await embedToken({ embed: {} }))).claims.embed).toEqual({});
  });

  it.each([
    [
      'not an object',
      'USD',
      /^the token claim embed is not valid \(it must be an object of amount, currency, buyer_id, buyer_external_identifier, metadata\)$/,
    ],
    ['null', null, /embed is not valid/],
    ['an array', [1299], /embed is not valid/],
    ['an amount as a string', { amount: '1299' }, /amount: must be an integer/],
    ['a fractional amount', { amount: 12.5 }, /amount: must be an integer/],
    ['a zero amount', { amount: 0 }, /amount: must be at least 1/],
    ['a lower-case currency', { currency: 'usd' }, /currency: must be an ISO 4217 code/],
    ['a buyer_id that is no UUID', { buyer_id: 'buyer-1' }, /buyer_id: must be a UUID/],
    ['an empty buyer_external_identifier', { buyer_external_identifier: '' }, /buyer_external_identifier: /],
    ['metadata with a number', { metadata: { order: 1 } }, /metadata\.order: must be a string/],
    ['metadata as a string', { metadata: 'order=1' }, /metadata: /],
    ['a key it does not know', { amout: 1299 }, /unknown key "amout": it pins only amount, currency/],
    [
      'both buyer keys',
      { buyer_id: BUYER, buyer_external_identifier: 'cust-1' },
      /pin buyer_id or buyer_external_identifier, not both/,
    ],
  ])('refuse an embed claim that is %s, saying what is wrong', async (_case, embed, reason) => {
    const error = await refusal(verifierWith().verify(await embedToken({ embed })));
    expect(error.message).toMatch(reason);
  });

  it.each([
    ['a number', 12],
    ['no UUID', 'session-1'],
    ['null', null],
  ])('refuse a checkout_session_id claim that is %s', async (_case, value) => {
    const error = await refusal(verifierWith().verify(await embedToken({ checkout_session_id: value })));
    expect(error.message).toBe('the token claim checkout_session_id must be a checkout session id (a UUID)');
  });
});

describe('the verified-token cache', () => {
  it('keeps the claims: another gateway reading the shared entry sees the same pins and session', async () => {
    const shared = new MapStore();
    const token = await embedToken({
      embed: { amount: 500, currency: 'EUR', metadata: { cart: 'c-9' } },
      checkout_session_id: SESSION,
    });
    const first = await verifierWith(new LayeredVerifiedTokenCache(new InMemoryVerifiedTokenCache(), shared)).verify(
      token,
    );
    expect(shared.values.size).toBe(1);

    // A second instance: empty local cache, the directory refusing any signature check it would need to make.
    let lookups = 0;
    const second = new TokenVerifier({
      directory: { findByKid: async (kid) => ((lookups += 1), kid === key.kid ? key : null) },
      cache: new LayeredVerifiedTokenCache(new InMemoryVerifiedTokenCache(), shared),
      clockSkewSeconds: 30,
    });
    const spy = vi.spyOn(second as unknown as { verifySignatureAndClaims: () => unknown }, 'verifySignatureAndClaims');
    const again = await second.verify(token);
    expect(spy).not.toHaveBeenCalled();
    expect(again.claims).toEqual(first.claims);
    expect(again.claims).toMatchObject({
      embed: { amount: 500, currency: 'EUR', metadata: { cart: 'c-9' } },
      checkoutSessionId: SESSION,
    });
    expect(lookups).toBe(1);
  });

  it('verifies again an entry of an older shape (checkout_session_id, an unchecked embed) instead of trusting it', async () => {
    const token = await embedToken({ embed: { amount: 700 }, checkout_session_id: SESSION });
    const exp = Math.floor(Date.now() / 1000) + 300;
    const olderShapes: VerifiedClaims[] = [
      { kid: key.kid, scopes: ['embed'], exp, checkout_session_id: SESSION } as unknown as VerifiedClaims,
      { kid: key.kid, scopes: ['embed'], exp, embed: { amount: '700' } } as unknown as VerifiedClaims,
    ];
    for (const stale of olderShapes) {
      const cache = new InMemoryVerifiedTokenCache();
      await cache.put(createHash('sha256').update(token).digest('base64url'), stale, 60_000);
      const { claims } = await verifierWith(cache).verify(token);
      expect(claims).toMatchObject({ embed: { amount: 700 }, checkoutSessionId: SESSION });
      expect(claims).not.toHaveProperty('checkout_session_id');
    }
  });
});
