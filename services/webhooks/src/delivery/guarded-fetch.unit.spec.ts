/** The delivery client's address guard and the coarse error classes an attempt records (issue 22, item 3). */
import type { LookupAddress } from 'node:dns';
import { deliveryErrorClass, ForbiddenAddressError, guardedLookup, type ResolveAll } from './guarded-fetch';

/** A resolver answering fixed addresses per name, as `dns.lookup({all: true})` does. */
const resolver =
  (table: Record<string, string[]>): ResolveAll =>
  (hostname, _options, callback) => {
    const addresses = table[hostname];
    if (!addresses)
      return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    callback(
      null,
      addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  };

const lookupOf = (table: Record<string, string[]>, all = false) =>
  new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
    guardedLookup(resolver(table))('host.example', { all } as never, (error, address) => resolve({ error, address })),
  );

describe('the lookup a delivery connects with', () => {
  it.each([
    ['127.0.0.1'],
    ['10.1.2.3'],
    ['169.254.169.254'],
    ['198.18.0.7'],
    ['::1'],
    ['64:ff9b::a00:5'],
    ['::ffff:192.168.0.1'],
  ])('refuses a name resolving to %s', async (address) => {
    const { error } = await lookupOf({ 'host.example': [address] });
    expect(error).toBeInstanceOf(ForbiddenAddressError);
  });

  it('refuses a name when any one of its addresses is forbidden (the connection may go to any)', async () => {
    expect((await lookupOf({ 'host.example': ['93.184.215.14', '10.0.0.1'] })).error).toBeInstanceOf(
      ForbiddenAddressError,
    );
  });

  it('answers a public name as dns.lookup does: one address, or all of them', async () => {
    expect(await lookupOf({ 'host.example': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] })).toEqual({
      error: null,
      address: '93.184.215.14',
    });
    expect((await lookupOf({ 'host.example': ['93.184.215.14'] }, true)).address).toEqual([
      { address: '93.184.215.14', family: 4 },
    ]);
  });
});

describe('what an attempt without an answer records', () => {
  const wrapped = (code: string) =>
    new TypeError('fetch failed', { cause: Object.assign(new Error(`connect ${code} 10.0.0.5:6379`), { code }) });

  it.each([
    ['ECONNREFUSED', 'refused'],
    ['ENOTFOUND', 'dns'],
    ['EAI_AGAIN', 'dns'],
    ['UND_ERR_CONNECT_TIMEOUT', 'timeout'],
    ['ECONNRESET', 'reset'],
    ['EHOSTUNREACH', 'unreachable'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'tls'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'tls'],
    ['ERR_WEBHOOK_FORBIDDEN_ADDRESS', 'forbidden_address'],
    ['ESOMETHING', 'network'],
  ])('%s → %s, never the message', (code, expected) => {
    expect(deliveryErrorClass(wrapped(code), false)).toBe(expected);
  });

  it('a timeout of our own is a timeout, whatever the error', () =>
    expect(deliveryErrorClass(new Error('aborted'), true)).toBe('timeout'));
});
