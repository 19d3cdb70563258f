/**
 * How a connector reaches its provider over HTTP: the WHATWG `fetch` signature, given to the connector in its
 * configuration. Unset, the global `fetch`. A card-bearing call is meant to go through the vault's outbound
 * forwarder, which is such a function: it swaps card aliases for the card's values and calls only the hosts the
 * connection's definition declares (`ConnectorDefinition.hosts`).
 */
export type ProviderFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * The `code` of the error a `ProviderFetch` throws when it refused a call without making it (the vault's forwarder:
 * an undeclared host, an expired alias). Connectors treat it as a call certainly not sent, as a refused connection.
 */
export const PROVIDER_FETCH_REFUSED = 'ERR_PROVIDER_FETCH_REFUSED';

/** Error codes of a call that certainly never reached the provider: retriable, and nothing to reconcile. */
export const notSentCodes: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  PROVIDER_FETCH_REFUSED,
]);

/** The code of a fetch error when it says the call was never sent (undici puts it on `cause`; a ProviderFetch's refusal on the error). */
export function notSentCode(error: unknown): string | null {
  const code =
    (error as { cause?: { code?: unknown } } | null)?.cause?.code ?? (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && notSentCodes.has(code) ? code : null;
}

/** `host[:port]` of a base URL, as `ConnectorDefinition.hosts` declares it. */
export const hostOf = (baseUrl: string): string => new URL(baseUrl).host;

/**
 * A host pattern compiled once: whether a `host` (`host[:port]`) matches it — the same, ignoring case, where a `*`
 * stands for any characters but a dot or a colon (`*-checkout-live.adyenpayments.com`, `*.psp.example:8443`).
 */
export function hostPattern(pattern: string): (host: string) => boolean {
  const escaped = pattern
    .toLowerCase()
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^.:]+');
  const compiled = new RegExp(`^${escaped}$`);
  return (host) => compiled.test(host.toLowerCase());
}
