/**
 * The existing generated client of this API (`@gr4vy/sdk`, pinned at 1.10.18) pointed at the embedded runtime that
 * `npm start` runs, listening on a loopback port with the card simulator. The client is used as a merchant would
 * use it, with two changes made outside it, on the wire:
 *
 * - its merchant header (`x-gr4vy-merchant-account-id`) is renamed to ours (`x-service-merchant-account-id`) by a
 *   request hook — the spec names the header, and the spec wins;
 * - like the client's own end-to-end setup, every JSON answer gets an unknown member added before the client reads
 *   it, so the suite also proves our additions never break it.
 *
 * Every call goes through the client's zod schemas: an answer they refuse throws `ResponseValidationError` and fails
 * the spec that made the call.
 */
import { randomBytes } from 'node:crypto';
import { Gr4vy, withToken } from '@gr4vy/sdk';
import { HTTPClient } from '@gr4vy/sdk/lib/http.js';
import { startHarness, TEST_PANS, type Harness } from '../../services/standalone/src/transactions.harness';

export const CLIENT_MERCHANT_HEADER = 'x-gr4vy-merchant-account-id';
export const OUR_MERCHANT_HEADER = 'x-service-merchant-account-id';
/** The card of the client's own end-to-end scenarios, with an expiry years ahead. */
export const CLIENT_TEST_CARD = { number: TEST_PANS[0], expirationDate: '11/30', securityCode: '123' } as const;

export interface WireRuntime {
  readonly harness: Harness;
  readonly baseUrl: string;
  /** A client as a merchant configures it: our server, a key's private key, and (optionally) its merchant account. */
  client(merchantAccountId?: string): Gr4vy;
  /** A fresh merchant account (as the client's e2e setup does) with a mock-card connection; its id. */
  merchantAccountWithConnection(): Promise<string>;
  /** Every request the clients sent: method, path and the merchant headers it carried on the wire. */
  readonly sent: readonly SentRequest[];
  stop(): Promise<void>;
}

export interface SentRequest {
  readonly method: string;
  readonly path: string;
  readonly ourHeader: string | null;
  readonly clientHeader: string | null;
}

/** The client's beforeRequest hook: the merchant header under our name, the client's name gone. */
export function renameMerchantHeader(request: Request): Request {
  const value = request.headers.get(CLIENT_MERCHANT_HEADER);
  if (value === null) return request;
  const headers = new Headers(request.headers);
  headers.delete(CLIENT_MERCHANT_HEADER);
  headers.set(OUR_MERCHANT_HEADER, value);
  return new Request(request, { headers });
}

/** The client's own e2e fetcher, kept: an unknown member in every JSON object answer (forward compatibility). */
async function withUnknownMember(request: Request): Promise<Response> {
  const response = await fetch(request);
  if (!(response.headers.get('content-type') ?? '').includes('application/json')) return response;
  const body: unknown = await response.clone().json();
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return response;
  const widened = { ...body, [`unexpected_field_${randomBytes(2).toString('hex')}`]: 'an injected test value' };
  return new Response(JSON.stringify(widened), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

export async function startWireRuntime(name: string): Promise<WireRuntime> {
  const harness = await startHarness(`wire-${name}`);
  const key = await harness.fixture.service.identity.apiKeyPairs.create(
    { display_name: 'wire client', roles: ['administrator'] },
    { kind: 'operator' },
  );
  const privateKey = key.private_key;
  if (!privateKey) throw new Error('the key pair came without its private key');
  const sent: SentRequest[] = [];
  const httpClient = new HTTPClient({ fetcher: (input, init) => withUnknownMember(new Request(input, init)) });
  httpClient.addHook('beforeRequest', (request) => {
    const renamed = renameMerchantHeader(request);
    sent.push({
      method: renamed.method,
      path: new URL(renamed.url).pathname,
      ourHeader: renamed.headers.get(OUR_MERCHANT_HEADER),
      clientHeader: renamed.headers.get(CLIENT_MERCHANT_HEADER),
    });
    return renamed;
  });
  const client = (merchantAccountId?: string) =>
    new Gr4vy({
      serverURL: harness.baseUrl,
      httpClient,
      bearerAuth: withToken({ privateKey }),
      ...(merchantAccountId ? { merchantAccountId } : {}),
    });

  return {
    harness,
    baseUrl: harness.baseUrl,
    client,
    sent,
    async merchantAccountWithConnection() {
      const id = randomBytes(8).toString('hex');
      const created = await client().merchantAccounts.create({ id, displayName: id });
      await client(created.id).paymentServices.create({
        acceptedCountries: ['US'],
        acceptedCurrencies: ['USD'],
        displayName: 'Payment service',
        paymentServiceDefinitionId: 'mock-card',
        fields: [{ key: 'merchant_id', value: 'test' }],
      });
      return created.id;
    },
    stop: () => harness.stop(),
  };
}

/** Every item a paged list answers, walked by the client's own pagination (`next_cursor` until it is null). */
export async function walkPages<Item>(
  first: AsyncIterable<{ result: { items: readonly Item[] } }>,
): Promise<{ items: Item[]; pages: number }> {
  const items: Item[] = [];
  let pages = 0;
  for await (const page of first) {
    pages += 1;
    items.push(...page.result.items);
  }
  return { items, pages };
}
