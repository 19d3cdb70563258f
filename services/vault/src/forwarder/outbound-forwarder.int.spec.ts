/**
 * The vault's outbound forwarder against a loopback HTTP server playing the provider: aliases swapped in JSON, form
 * and XML bodies and headers, the answer passed back unchanged, and every refusal made before any call (undeclared
 * host, expired alias, another merchant account's alias, an unknown alias-shaped token) without a card value in its
 * message.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { hostOf, notSentCode, PROVIDER_FETCH_REFUSED } from '@switchyard/connectors';
import { CardAliases } from './card-aliases';
import { ForwarderRefusedError, OutboundForwarder } from './outbound-forwarder';

const NUMBER = '4111111111111111';
const CVC = '737';
const OTHER_NUMBER = '5555555555554444';

interface Received {
  readonly method: string;
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

let server: http.Server;
let other: http.Server;
let baseUrl: string;
let otherBaseUrl: string;
let received: Received[];
let clock: number;
let aliases: CardAliases;
let forwarder: OutboundForwarder;

const listen = (handler: http.RequestListener): Promise<{ server: http.Server; baseUrl: string }> =>
  new Promise((resolve) => {
    const created = http.createServer(handler);
    created.listen(0, '127.0.0.1', () =>
      resolve({ server: created, baseUrl: `http://127.0.0.1:${(created.address() as AddressInfo).port}` }),
    );
  });

beforeAll(async () => {
  ({ server, baseUrl } = await listen((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://provider');
      received.push({
        method: request.method ?? '',
        path: url.pathname,
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      if (url.pathname === '/redirect-elsewhere')
        return void response.writeHead(307, { location: `${otherBaseUrl}/steal` }).end();
      if (url.pathname === '/redirect-home') return void response.writeHead(307, { location: '/echo' }).end();
      response
        .writeHead(202, { 'content-type': 'application/xml', 'x-provider-ref': 'psp-42' })
        .end('<answer result="Authorised">psp-42</answer>');
    });
  }));
  ({ server: other, baseUrl: otherBaseUrl } = await listen((request, response) => {
    received.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body: '' });
    response.writeHead(200).end('stolen');
  }));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await new Promise((resolve) => other.close(resolve));
});

beforeEach(() => {
  received = [];
  clock = Date.parse('2026-01-01T00:00:00.000Z');
  aliases = new CardAliases({ ttlMs: 60_000, now: () => clock });
  forwarder = new OutboundForwarder({ aliases });
});

const shopA = () => forwarder.fetchFor('shop-a', [hostOf(baseUrl)]);

/** The refusal a call ends with, checked to hold no card value and to have made no call. */
async function refusal(call: Promise<Response>): Promise<ForwarderRefusedError> {
  const error = await call.then(
    () => {
      throw new Error('the call was not refused');
    },
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ForwarderRefusedError);
  expect(notSentCode(error)).toBe(PROVIDER_FETCH_REFUSED);
  // Ports and line numbers in the text are digits too (port 33737 holds the code 737): the secrets as whole numbers.
  const text = `${(error as Error).message} ${inspect(error)}`;
  for (const secret of [NUMBER, CVC, OTHER_NUMBER]) expect(text).not.toMatch(new RegExp(`(?<!\\d)${secret}(?!\\d)`));
  expect(received).toEqual([]);
  return error as ForwarderRefusedError;
}

describe('aliases', () => {
  it('are tok + 32 base62 characters, a fresh one each time, and never show their values when inspected', () => {
    const first = aliases.issue('shop-a', { number: NUMBER, securityCode: CVC });
    const second = aliases.issue('shop-a', { number: NUMBER });
    for (const alias of [first.number, first.securityCode, second.number])
      expect(alias).toMatch(/^tok[0-9A-Za-z]{32}$/);
    expect(new Set([first.number, first.securityCode, second.number]).size).toBe(3);
    expect(second.securityCode).toBeNull();
    expect(first.expiresAt.toISOString()).toBe('2026-01-01T00:01:00.000Z');
    expect(`${inspect(aliases)} ${inspect(forwarder)} ${JSON.stringify(aliases)}`).not.toContain(NUMBER);
  });

  it('are forgotten once expired', () => {
    aliases.issue('shop-a', { number: NUMBER, securityCode: CVC });
    clock += 60_000;
    aliases.issue('shop-a', { number: OTHER_NUMBER });
    expect(aliases.size).toBe(1);
  });

  it('a security code alone, kept past the TTL when asked (a challenge), then forgotten', () => {
    const code = aliases.issueSecurityCode('shop-a', CVC);
    expect(code).toMatch(/^tok[0-9A-Za-z]{32}$/);
    expect(aliases.keep('shop-b', code, 600_000)).toBe(false); // another merchant account's
    expect(aliases.keep('shop-a', code, 600_000)).toBe(true);
    clock += 300_000;
    aliases.issue('shop-a', { number: OTHER_NUMBER }); // forgets what expired
    expect(aliases.resolve('shop-a', code)).toBe(CVC);
    clock += 300_000;
    expect(() => aliases.resolve('shop-a', code)).toThrow(/expired/);
    expect(aliases.keep('shop-a', code, 600_000)).toBe(false);
    const again = aliases.issueSecurityCode('shop-a', CVC);
    aliases.forget('shop-b', again); // another merchant account's: left alone
    expect(aliases.resolve('shop-a', again)).toBe(CVC);
    aliases.forget('shop-a', again);
    expect(() => aliases.resolve('shop-a', again)).toThrow(/unknown/);
    expect(`${inspect(aliases)} ${JSON.stringify(aliases)}`).not.toContain(CVC);
  });
});

describe('swapping', () => {
  it('puts the real values in a JSON body and headers, and passes the answer back unchanged', async () => {
    const card = aliases.issue('shop-a', { number: NUMBER, securityCode: CVC });
    const response = await shopA()(`${baseUrl}/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-card-check': card.securityCode! },
      body: JSON.stringify({
        card: { number: card.number, cvc: card.securityCode, expiry: '03/30' },
        reference: 'order-1',
      }),
    });
    expect(received).toHaveLength(1);
    expect(JSON.parse(received[0]!.body)).toEqual({
      card: { number: NUMBER, cvc: CVC, expiry: '03/30' },
      reference: 'order-1',
    });
    expect(received[0]!.headers['x-card-check']).toBe(CVC);
    expect(response.status).toBe(202);
    expect(response.headers.get('x-provider-ref')).toBe('psp-42');
    expect(response.headers.get('content-type')).toBe('application/xml');
    expect(await response.text()).toBe('<answer result="Authorised">psp-42</answer>');
  });

  it('puts the real values in a form-encoded body, as a string and as URLSearchParams', async () => {
    const card = aliases.issue('shop-a', { number: NUMBER, securityCode: CVC });
    await shopA()(`${baseUrl}/v1/payment_methods`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `type=card&card%5Bnumber%5D=${card.number}&card%5Bcvc%5D=${card.securityCode}`,
    });
    await shopA()(`${baseUrl}/v1/payment_methods`, {
      method: 'POST',
      body: new URLSearchParams({ 'card[number]': card.number, 'card[cvc]': card.securityCode! }),
    });
    expect(received.map((request) => Object.fromEntries(new URLSearchParams(request.body)))).toEqual([
      { type: 'card', 'card[number]': NUMBER, 'card[cvc]': CVC },
      { 'card[number]': NUMBER, 'card[cvc]': CVC },
    ]);
    expect(received[1]!.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
  });

  it('puts the real values in an XML body, as a string and as bytes', async () => {
    const card = aliases.issue('shop-a', { number: NUMBER, securityCode: CVC });
    const xml = `<?xml version="1.0"?><payment><card><pan>${card.number}</pan><cvv>${card.securityCode}</cvv></card><note>café</note></payment>`;
    await shopA()(`${baseUrl}/xml`, { method: 'POST', headers: { 'content-type': 'application/xml' }, body: xml });
    await shopA()(`${baseUrl}/xml`, {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: new TextEncoder().encode(xml),
    });
    const expected = `<?xml version="1.0"?><payment><card><pan>${NUMBER}</pan><cvv>${CVC}</cvv></card><note>café</note></payment>`;
    expect(received.map((request) => request.body)).toEqual([expected, expected]);
  });

  it('leaves a body without aliases as it is, and a longer alphanumeric run that merely contains one alone', async () => {
    const card = aliases.issue('shop-a', { number: NUMBER });
    const body = JSON.stringify({ id: `x${card.number}`, note: 'tok_1234 is a Stripe token, not ours' });
    await shopA()(`${baseUrl}/plain`, { method: 'POST', body });
    expect(received[0]!.body).toBe(body);
  });

  it('hands a call without aliases to the fetch it was given as it came (input, headers, body), with redirects its own', async () => {
    const calls: [string | URL, RequestInit | undefined][] = [];
    const answer = new Response('ok', { status: 201 });
    const send = new OutboundForwarder({
      aliases,
      fetch: async (input, init) => (calls.push([input, init]), answer),
    }).fetchFor('shop-a', [hostOf(baseUrl)]);
    const headers = { 'content-type': 'application/json', authorization: 'Bearer sk_test_1' };
    const body = JSON.stringify({ amount: 100 });
    expect(await send(`${baseUrl}/capture`, { method: 'POST', headers, body })).toBe(answer);
    expect(calls).toEqual([[`${baseUrl}/capture`, { method: 'POST', headers, body, redirect: 'manual' }]]);
    expect(calls[0]![1]!.headers).toBe(headers);
  });

  it('follows a redirect to a declared host, with the swapped body', async () => {
    const card = aliases.issue('shop-a', { number: NUMBER });
    const response = await shopA()(`${baseUrl}/redirect-home`, {
      method: 'POST',
      body: JSON.stringify({ number: card.number }),
    });
    expect(response.status).toBe(202);
    expect(received.map((request) => [request.path, request.body])).toEqual([
      ['/redirect-home', JSON.stringify({ number: NUMBER })],
      ['/echo', JSON.stringify({ number: NUMBER })],
    ]);
  });
});

describe('refusals (no call made, no card value in the message)', () => {
  it('a host the definition does not declare', async () => {
    const card = aliases.issue('shop-a', { number: NUMBER });
    const error = await refusal(
      forwarder.fetchFor('shop-a', [hostOf(baseUrl)])(`${otherBaseUrl}/payments`, {
        method: 'POST',
        body: card.number,
      }),
    );
    expect(error.reason).toBe('host_not_declared');
    expect(error.message).toContain(hostOf(otherBaseUrl));
  });

  it('a host the caller declares but the vault does not forward cards to (its own list, which no caller widens)', async () => {
    // The vault's list allows the provider's host only, not the second server's, which the caller declares too.
    const listed = new OutboundForwarder({ aliases, hosts: (host) => host === hostOf(baseUrl) });
    const card = aliases.issue('shop-a', { number: NUMBER });
    const error = await refusal(
      listed.fetchFor('shop-a', [hostOf(baseUrl), hostOf(otherBaseUrl)])(`${otherBaseUrl}/payments`, {
        method: 'POST',
        body: card.number,
      }),
    );
    expect(error.reason).toBe('host_not_allowed');
    expect(error.message).toContain('VAULT_FORWARD_HOSTS');
    const sent = await listed.fetchFor('shop-a', [hostOf(baseUrl), hostOf(otherBaseUrl)])(`${baseUrl}/payments`, {
      method: 'POST',
      body: card.number,
    });
    expect(sent.status).toBe(202);
    expect(received.map((r) => r.body)).toEqual([NUMBER]);
  });

  it('a host declared with another port, and a URL that is not http(s)', async () => {
    const { port } = new URL(baseUrl);
    expect((await refusal(shopA()(`http://127.0.0.1:${Number(port) === 1 ? 2 : 1}/payments`))).reason).toBe(
      'host_not_declared',
    );
    expect((await refusal(shopA()(`ftp://${hostOf(baseUrl)}/payments`))).reason).toBe('host_not_declared');
  });

  it('an alias used after it expired', async () => {
    const card = aliases.issue('shop-a', { number: NUMBER, securityCode: CVC });
    clock += 60_000;
    const error = await refusal(
      shopA()(`${baseUrl}/payments`, { method: 'POST', body: JSON.stringify({ number: card.number }) }),
    );
    expect(error.reason).toBe('alias_expired');
  });

  it('an alias that was expired and already forgotten', async () => {
    const card = aliases.issue('shop-a', { number: NUMBER });
    clock += 61_000;
    aliases.issue('shop-a', { number: OTHER_NUMBER });
    expect((await refusal(shopA()(`${baseUrl}/payments`, { method: 'POST', body: card.number }))).reason).toBe(
      'alias_unknown',
    );
  });

  it("another merchant account's alias, even next to one of its own", async () => {
    const theirs = aliases.issue('shop-b', { number: OTHER_NUMBER });
    const ours = aliases.issue('shop-a', { number: NUMBER });
    const error = await refusal(
      shopA()(`${baseUrl}/payments`, {
        method: 'POST',
        body: JSON.stringify({ number: ours.number, other: theirs.number }),
      }),
    );
    expect(error.reason).toBe('alias_other_merchant_account');
  });

  it('an alias-shaped token that was never issued, in the body or in a header', async () => {
    const madeUp = `tok${'A1b2'.repeat(8)}`;
    expect(
      (await refusal(shopA()(`${baseUrl}/payments`, { method: 'POST', body: `<pan>${madeUp}</pan>` }))).reason,
    ).toBe('alias_unknown');
    expect(
      (await refusal(shopA()(`${baseUrl}/payments`, { headers: { authorization: `Bearer ${madeUp}` } }))).reason,
    ).toBe('alias_unknown');
  });

  it('a body it cannot scan (a stream)', async () => {
    const card = aliases.issue('shop-a', { number: NUMBER });
    const stream = new Blob([card.number]).stream();
    expect(
      (await refusal(shopA()(`${baseUrl}/payments`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit)))
        .reason,
    ).toBe('unsupported_body');
  });

  it('a redirect to a host the definition does not declare (the card is not sent there)', async () => {
    const card = aliases.issue('shop-a', { number: NUMBER });
    const error = await shopA()(`${baseUrl}/redirect-elsewhere`, {
      method: 'POST',
      body: JSON.stringify({ number: card.number }),
    }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ForwarderRefusedError);
    expect((error as ForwarderRefusedError).reason).toBe('host_not_declared');
    // The provider was called: not a call "certainly not sent", its outcome is unknown.
    expect(notSentCode(error)).toBeNull();
    expect(received.map((request) => request.path)).toEqual(['/redirect-elsewhere']);
  });
});
