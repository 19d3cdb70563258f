/**
 * How a connector reaches its provider over HTTP: the WHATWG `fetch` signature, given to the connector in its
 * configuration. Unset, the global `fetch`. A card-bearing call is meant to go through the vault's outbound
 * forwarder, which is such a function: it swaps card aliases for the card's values and calls only the hosts the
 * connection's definition declares (`ConnectorDefinition.hosts`).
 */
export type ProviderFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** `host[:port]` of a base URL, as `ConnectorDefinition.hosts` declares it. */
export const hostOf = (baseUrl: string): string => new URL(baseUrl).host;
