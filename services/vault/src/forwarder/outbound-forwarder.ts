/**
 * The vault's outbound forwarder (issue 19 item 4): a `ProviderFetch` (`@switchyard/connectors`) for one merchant
 * account and the hosts its connection's definition declares (`ConnectorDefinition.hosts`). A connector given it as
 * its `fetch` builds its request with card aliases (`card-aliases.ts`) in place of the number and security code;
 * the forwarder
 *  - refuses a URL whose host (`host[:port]`, as `hostOf` gives it) is not declared, or that is not http(s), and one
 *    outside the vault's own list of hosts (`forward-hosts.ts`), which no caller can widen;
 *  - swaps every alias in the body (a string, URLSearchParams or bytes: JSON, form-encoded, XML alike) and in the
 *    headers for its real value, and refuses the whole call when an alias-shaped token is unknown, expired or
 *    another merchant account's;
 *  - follows redirects itself, only to declared hosts (fetch would otherwise resend the card to any host a 307 names);
 *  - calls the global fetch (or the one given) and returns its Response unchanged.
 * A refusal is a `ForwarderRefusedError`, thrown before any call is made (`code` PROVIDER_FETCH_REFUSED: the
 * connectors take it as a call not sent) — except a redirect refused, after the provider was called (no `code`: the
 * outcome is unknown). Its message never holds a card value or an alias.
 */
import { PROVIDER_FETCH_REFUSED, type ProviderFetch } from '@switchyard/connectors';
import { CardAliasError, cardAliasPattern, type CardAliasRefusal, type CardAliases } from './card-aliases';
import type { ForwardHosts } from './forward-hosts';

export type ForwarderRefusal =
  | CardAliasRefusal
  | 'host_not_declared'
  | 'host_not_allowed'
  | 'unsupported_body'
  | 'too_many_redirects';

export class ForwarderRefusedError extends Error {
  /** PROVIDER_FETCH_REFUSED when no call was made: connectors read it as "certainly not sent" (`notSentCode`, `@switchyard/connectors`). */
  readonly code: typeof PROVIDER_FETCH_REFUSED | undefined;

  constructor(
    readonly reason: ForwarderRefusal,
    message: string,
    options: { readonly afterACall?: boolean } = {},
  ) {
    super(`vault forwarder refused the call: ${message}`);
    this.name = 'ForwarderRefusedError';
    this.code = options.afterACall ? undefined : PROVIDER_FETCH_REFUSED;
  }
}

const MAX_REDIRECTS = 20;
const redirectStatuses = new Set([301, 302, 303, 307, 308]);

export class OutboundForwarder {
  readonly #aliases: CardAliases;
  readonly #fetch: ProviderFetch;
  readonly #allowed: ForwardHosts;

  /**
   * @param options.fetch how the provider is finally called; default the global `fetch`.
   * @param options.hosts the vault's own list of hosts (`forwardHosts`); default any host a caller declares.
   */
  constructor(options: { aliases: CardAliases; fetch?: ProviderFetch; hosts?: ForwardHosts }) {
    this.#aliases = options.aliases;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#allowed = options.hosts ?? (() => true);
  }

  /** The fetch a connector of this merchant account's connection is given; `hosts` from its definition's `hosts(config)`. */
  fetchFor(merchantAccountId: string, hosts: readonly string[]): ProviderFetch {
    const declared = new Set(hosts.map((host) => host.toLowerCase()));
    const allowed = this.#allowed;
    return async (input, init) => {
      let url = declaredUrl(input, declared, allowed);
      let request: RequestInit = {
        ...init,
        headers: this.#swapHeaders(merchantAccountId, init?.headers),
        body: this.#swapBody(merchantAccountId, init?.body),
      };
      const redirect = init?.redirect ?? 'follow';
      for (let hops = 0; ; hops++) {
        // The first call with the input as given; a redirect's target as the URL it resolved to.
        const response = await this.#fetch(hops === 0 ? input : url, { ...request, redirect: 'manual' });
        const location = response.headers.get('location');
        if (redirect === 'manual' || !redirectStatuses.has(response.status) || location === null) return response;
        await response.body?.cancel();
        if (redirect === 'error')
          throw new TypeError(`the provider answered a redirect (${response.status}) to a call that refuses them`);
        if (hops >= MAX_REDIRECTS)
          throw new ForwarderRefusedError('too_many_redirects', `more than ${MAX_REDIRECTS} redirects`, {
            afterACall: true,
          });
        url = declaredUrl(new URL(location, url), declared, allowed, { afterACall: true });
        const method = (request.method ?? 'GET').toUpperCase();
        // As fetch does (WHATWG fetch, HTTP-redirect fetch step 12): 303, and 301/302 after a POST, become a bodiless GET.
        if (
          (response.status === 303 && method !== 'GET' && method !== 'HEAD') ||
          ((response.status === 301 || response.status === 302) && method === 'POST')
        ) {
          const headers = new Headers(request.headers);
          for (const name of [
            'content-type',
            'content-length',
            'content-encoding',
            'content-language',
            'content-location',
          ])
            headers.delete(name);
          request = { ...request, method: 'GET', body: null, headers };
        }
      }
    };
  }

  #swap(merchantAccountId: string, text: string): string {
    return text.replace(cardAliasPattern(), (alias) => {
      try {
        return this.#aliases.resolve(merchantAccountId, alias);
      } catch (error) {
        if (error instanceof CardAliasError) throw new ForwarderRefusedError(error.reason, error.message);
        throw error;
      }
    });
  }

  /** The headers as given when none holds an alias; else a `Headers` with the values swapped. */
  #swapHeaders(merchantAccountId: string, headers: RequestInit['headers']): RequestInit['headers'] {
    if (headers === undefined) return undefined;
    const swapped = new Headers();
    let changed = false;
    for (const [name, value] of new Headers(headers)) {
      const next = this.#swap(merchantAccountId, value);
      changed ||= next !== value;
      swapped.append(name, next);
    }
    return changed ? swapped : headers;
  }

  #swapBody(merchantAccountId: string, body: RequestInit['body']): RequestInit['body'] {
    if (body === undefined || body === null) return body;
    if (typeof body === 'string') return this.#swap(merchantAccountId, body);
    // Sent as its string with the same content type fetch gives URLSearchParams.
    if (body instanceof URLSearchParams) {
      const text = body.toString();
      const swapped = this.#swap(merchantAccountId, text);
      return swapped === text ? body : new Blob([swapped], { type: 'application/x-www-form-urlencoded;charset=UTF-8' });
    }
    if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) {
      const bytes =
        body instanceof ArrayBuffer
          ? new Uint8Array(body)
          : new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
      // latin1 maps bytes to characters one to one, so whatever the encoding the bytes around an (ASCII) alias stay as they were.
      const text = Buffer.from(bytes).toString('latin1');
      const swapped = this.#swap(merchantAccountId, text);
      return swapped === text ? body : new Uint8Array(Buffer.from(swapped, 'latin1'));
    }
    // A stream, Blob or FormData cannot be scanned before it is sent: an alias in it would reach the provider unswapped.
    throw new ForwarderRefusedError(
      'unsupported_body',
      'a card-bearing call carries a string, URLSearchParams or bytes body',
    );
  }
}

function declaredUrl(
  input: string | URL,
  declared: ReadonlySet<string>,
  allowed: ForwardHosts,
  options: { readonly afterACall?: boolean } = {},
): URL {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new ForwarderRefusedError('host_not_declared', 'not an absolute URL', options);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ForwarderRefusedError('host_not_declared', `protocol ${url.protocol} is not http(s)`, options);
  if (!declared.has(url.host.toLowerCase()))
    throw new ForwarderRefusedError(
      'host_not_declared',
      `host ${url.host} is not declared by the connection's definition`,
      options,
    );
  if (!allowed(url.host))
    throw new ForwarderRefusedError(
      'host_not_allowed',
      `host ${url.host} is not one the vault forwards cards to (VAULT_FORWARD_HOSTS)`,
      options,
    );
  return url;
}
