/**
 * The client's own rules against a fake fetch: tokens (ES512, the operation's scope, renewed before expiry), the
 * merchant account per client and per call, retries (reads; writes only with an Idempotency-Key, generated once and
 * reused), one error class for both bodies, pagination.
 */
import { generateKeyPairSync } from 'node:crypto';
import { decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import { SwitchyardApiError, SwitchyardClient, keyThumbprint, TokenSigner } from './index';
import { TokenCache } from './credentials';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-521' });
const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
const publicPem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
const keyFile = { id: 'key-1', kid: keyThumbprint(privateKey), private_key: pem };

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', 'x-request-id': 'req-1', ...headers },
  });

function fakeServer(answers: Array<Response | Error | (() => Response)>) {
  const requests: Request[] = [];
  const times: number[] = [];
  const fetch = async (request: Request) => {
    requests.push(request);
    times.push(Date.now());
    const next = answers.length > 1 ? answers.shift()! : answers[0]!;
    if (next instanceof Error) throw next;
    return typeof next === 'function' ? next() : next.clone();
  };
  return { requests, times, fetch };
}

const transaction = {
  type: 'transaction',
  id: '6f1c2e8b-0a01-4c61-9d11-5b3ac0a47e2a',
  status: 'authorization_succeeded',
};

describe('tokens', () => {
  it('signs ES512 with the key file’s kid and the operation’s first scope, verifiable with the public key', async () => {
    const server = fakeServer([json(200, transaction)]);
    const client = new SwitchyardClient({ baseUrl: 'http://api.test', credentials: keyFile, fetch: server.fetch });
    await client.transactions.get(transaction.id);
    const token = server.requests[0]!.headers.get('authorization')!.replace('Bearer ', '');
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES512', typ: 'JWT', kid: keyFile.kid });
    const { payload } = await jwtVerify(token, await importSPKI(publicPem, 'ES512'));
    expect(payload).toMatchObject({ scopes: ['transactions.read'] });
    expect(payload.exp! - payload.iat!).toBe(300);
  });

  it('computes the kid from a PEM alone, and refuses a key that is not P-521', () => {
    expect(TokenSigner.from({ privateKey: pem }).kid).toBe(keyFile.kid);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    expect(() => TokenSigner.from({ privateKey: rsa, kid: 'x' })).toThrow(/P-521/);
  });

  it('reuses a token until 60 s before it expires, then signs a new one', () => {
    let now = 1_700_000_000_000;
    const cache = new TokenCache(TokenSigner.from(keyFile), 300, 60, () => now);
    const first = cache.token(['transactions.read']);
    now += 239_000;
    expect(cache.token(['transactions.read'])).toBe(first);
    now += 2_000;
    expect(cache.token(['transactions.read'])).not.toBe(first);
  });

  it('signs embed tokens pinning the amount, currency, buyer and checkout session', async () => {
    const client = new SwitchyardClient({ baseUrl: 'http://api.test', credentials: keyFile });
    const token = client.embedToken({ amount: 1299, currency: 'USD', buyerId: 'b-1', checkoutSessionId: 'cs-1' });
    const { payload } = await jwtVerify(token, await importSPKI(publicPem, 'ES512'));
    expect(payload).toMatchObject({
      scopes: ['embed'],
      embed: { amount: 1299, currency: 'USD', buyer_id: 'b-1' },
      checkout_session_id: 'cs-1',
    });
  });
});

describe('the merchant account', () => {
  it('is the client’s unless a call names another', async () => {
    const server = fakeServer([json(200, transaction)]);
    const client = new SwitchyardClient({
      baseUrl: 'http://api.test',
      credentials: keyFile,
      merchantAccountId: 'shop-a',
      fetch: server.fetch,
    });
    await client.transactions.get(transaction.id);
    await client.transactions.get(transaction.id, { merchantAccountId: 'shop-b' });
    expect(server.requests.map((request) => request.headers.get('x-service-merchant-account-id'))).toEqual([
      'shop-a',
      'shop-b',
    ]);
  });
});

describe('retries', () => {
  it('retry a read on 5xx and connection errors every 200 ms, then answer', async () => {
    const server = fakeServer([
      json(503, { type: 'error', code: 'server_error', status: 503, message: 'x', details: [] }),
      new TypeError('fetch failed'),
      json(200, transaction),
    ]);
    const client = new SwitchyardClient({ baseUrl: 'http://api.test', credentials: keyFile, fetch: server.fetch });
    await expect(client.transactions.get(transaction.id)).resolves.toMatchObject({ id: transaction.id });
    expect(server.requests).toHaveLength(3);
    const gaps = server.times.slice(1).map((time, index) => time - server.times[index]!);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(195);
  });

  it('stop after 1,000 ms: the last answer is the error', async () => {
    const server = fakeServer([
      json(502, { type: 'error', code: 'bad_gateway', status: 502, message: 'upstream', details: [] }),
    ]);
    const client = new SwitchyardClient({ baseUrl: 'http://api.test', credentials: keyFile, fetch: server.fetch });
    const started = Date.now();
    const error = await client.transactions.get(transaction.id).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 502, code: 'bad_gateway' });
    expect(Date.now() - started).toBeLessThan(1_300);
    expect(server.requests.length).toBe(5);
    expect(server.times.at(-1)! - server.times[0]!).toBeLessThanOrEqual(1_000);
  });

  it('never retry a write without an Idempotency-Key', async () => {
    const server = fakeServer([
      json(503, { type: 'error', code: 'server_error', status: 503, message: 'x', details: [] }),
    ]);
    const client = new SwitchyardClient({ baseUrl: 'http://api.test', credentials: keyFile, fetch: server.fetch });
    await expect(client.buyers.create({ display_name: 'Ada' })).rejects.toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.headers.has('idempotency-key')).toBe(false);
  });

  it('retry a write that honours Idempotency-Key with one generated key, the same on every attempt, body and all', async () => {
    const server = fakeServer([
      new TypeError('socket hang up'),
      json(409, { type: 'error', code: 'concurrent_request', status: 409, message: 'x', details: [] }),
      json(201, transaction),
    ]);
    const client = new SwitchyardClient({ baseUrl: 'http://api.test', credentials: keyFile, fetch: server.fetch });
    await client.transactions.create({
      amount: 100,
      currency: 'USD',
      payment_method: { method: 'id', id: transaction.id },
    });
    const keys = server.requests.map((request) => request.headers.get('idempotency-key'));
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    const bodies = await Promise.all(server.requests.map((request) => request.text()));
    expect(new Set(bodies).size).toBe(1);
    expect(JSON.parse(bodies[0]!)).toMatchObject({ amount: 100 });
  });

  it('keep the caller’s own Idempotency-Key', async () => {
    const server = fakeServer([
      json(500, { type: 'error', code: 'server_error', status: 500, message: 'x', details: [] }),
      json(200, transaction),
    ]);
    const client = new SwitchyardClient({ baseUrl: 'http://api.test', credentials: keyFile, fetch: server.fetch });
    await client.transactions.capture(transaction.id, {}, { idempotencyKey: 'order-1001-capture' });
    expect(server.requests.map((request) => request.headers.get('idempotency-key'))).toEqual([
      'order-1001-capture',
      'order-1001-capture',
    ]);
  });

  it('can be turned off', async () => {
    const server = fakeServer([new TypeError('fetch failed')]);
    const client = new SwitchyardClient({
      baseUrl: 'http://api.test',
      credentials: keyFile,
      fetch: server.fetch,
      retry: false,
    });
    await expect(client.transactions.get(transaction.id)).rejects.toThrow('fetch failed');
    expect(server.requests).toHaveLength(1);
  });
});

describe('errors', () => {
  it('the standard body: status, code, details, request id and the 409’s resource id', async () => {
    const body = {
      type: 'error',
      code: 'duplicate_record',
      status: 409,
      message: 'exists',
      details: [{ location: 'body', pointer: '/id', message: 'taken', type: 'duplicate' }],
      resource_id: transaction.id,
    };
    const client = new SwitchyardClient({
      baseUrl: 'http://api.test',
      credentials: keyFile,
      fetch: fakeServer([json(409, body)]).fetch,
    });
    const error = await client.buyers.create({ display_name: 'Ada' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SwitchyardApiError);
    expect(error).toMatchObject({
      status: 409,
      code: 'duplicate_record',
      message: 'exists',
      details: body.details,
      requestId: 'req-1',
      resourceId: transaction.id,
    });
  });

  it('the 422 body: the same class, code validation_error, its entries as details', async () => {
    const body = {
      detail: [
        {
          loc: ['body', 'payment_method', 'number'],
          msg: 'Invalid card number',
          type: 'invalid_card_number',
          input: '[redacted]',
          ctx: {},
        },
      ],
    };
    const client = new SwitchyardClient({
      baseUrl: 'http://api.test',
      credentials: keyFile,
      fetch: fakeServer([json(422, body)]).fetch,
    });
    const error = await client.buyers.create({ display_name: 'Ada' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SwitchyardApiError);
    expect(error).toMatchObject({
      status: 422,
      code: 'validation_error',
      details: [
        {
          location: 'body',
          pointer: '/payment_method/number',
          message: 'Invalid card number',
          type: 'invalid_card_number',
        },
      ],
      requestId: 'req-1',
    });
  });

  it('a body that is neither: the status', async () => {
    const client = new SwitchyardClient({
      baseUrl: 'http://api.test',
      credentials: keyFile,
      retry: false,
      fetch: async () => new Response('<html>', { status: 502, statusText: 'Bad Gateway' }),
    });
    await expect(client.transactions.get(transaction.id)).rejects.toMatchObject({ status: 502, code: 'http_502' });
  });
});

describe('pagination', () => {
  it('follows next_cursor page after page as the loop asks', async () => {
    const page = (ids: string[], next: string | null) =>
      json(200, {
        items: ids.map((id) => ({ ...transaction, id })),
        limit: 2,
        next_cursor: next,
        previous_cursor: null,
      });
    const server = fakeServer([page(['a', 'b'], 'c1'), page(['c', 'd'], 'c2'), page(['e'], null)]);
    const client = new SwitchyardClient({ baseUrl: 'http://api.test', credentials: keyFile, fetch: server.fetch });
    const ids: string[] = [];
    for await (const one of client.transactions.list({ limit: 2 })) ids.push(one.id);
    expect(ids).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(server.requests.map((request) => new URL(request.url).searchParams.get('cursor'))).toEqual([
      null,
      'c1',
      'c2',
    ]);

    const early = fakeServer([page(['a', 'b'], 'c1')]);
    const second = new SwitchyardClient({ baseUrl: 'http://api.test', credentials: keyFile, fetch: early.fetch });
    for await (const one of second.transactions.list()) if (one.id === 'a') break;
    expect(early.requests).toHaveLength(1);
  });
});
