/**
 * The HTTP client of webhook deliveries (issue 22, item 3). The URL rule (`webhook-url.ts`) reads the host as
 * written, so a name that resolves to a loopback or private address (`gateway`, a name in /etc/hosts, a public name
 * pointed at 10.0.0.5) would pass it. Here every address a name resolves to is checked when the connection is made:
 * the undici agent's `connect.lookup` resolves the name, and if any address is forbidden (`isPrivateAddress`) the
 * connection is refused before a socket is opened. Checking at connection time, not before the request, leaves no
 * window for a second resolution to answer differently (DNS rebinding). IP literals never reach a lookup: the URL
 * rule, applied again on every attempt, covers them.
 *
 * What went wrong is kept only as a coarse class (`dns`, `refused`, `timeout`, `forbidden_address`, `tls`, …):
 * a resolver's or socket's message would tell a subscriber which inner hosts and ports exist.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { Agent, fetch as undiciFetch } from 'undici';
import { isPrivateAddress } from '../subscriptions/webhook-url';

export const FORBIDDEN_ADDRESS_CODE = 'ERR_WEBHOOK_FORBIDDEN_ADDRESS';

/** A name resolved to an address deliveries may not reach. The address is not in the message (it goes nowhere). */
export class ForbiddenAddressError extends Error {
  readonly code = FORBIDDEN_ADDRESS_CODE;

  constructor() {
    super('the host resolves to a loopback, private or reserved address');
    this.name = 'ForbiddenAddressError';
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
/** `dns.lookup` with `all: true` (tests give their own resolver). */
export type ResolveAll = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * A `lookup` for `net.connect` / `tls.connect` that refuses a name when any address it resolves to is forbidden
 * (one bad address is enough: a connection may go to any of them, and Node tries several for `autoSelectFamily`).
 */
export function guardedLookup(resolveAll: ResolveAll = dnsLookup as unknown as ResolveAll) {
  return (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void => {
    resolveAll(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      if (addresses.length === 0 || addresses.some((entry) => isPrivateAddress(entry.address)))
        return callback(new ForbiddenAddressError(), []);
      if (options.all) return callback(null, addresses);
      const [first] = addresses as [LookupAddress];
      callback(null, first.address, first.family);
    });
  };
}

/**
 * The `fetch` deliveries use: with private addresses allowed (WEBHOOK_ALLOW_PRIVATE_URLS, tests and local
 * development), an ordinary one; otherwise one whose connections go only to addresses that pass `isPrivateAddress`.
 */
export function deliveryFetch(options: {
  readonly allowPrivate: boolean;
  readonly resolveAll?: ResolveAll;
}): typeof fetch {
  const dispatcher = new Agent(options.allowPrivate ? {} : { connect: { lookup: guardedLookup(options.resolveAll) } });
  return ((input: string | URL, init?: RequestInit) =>
    undiciFetch(input, { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher })) as unknown as typeof fetch;
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME', 'ENODATA', 'ESERVFAIL']);
const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'ECONNABORTED']);
const UNREACHABLE_CODES = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'EADDRNOTAVAIL']);
const TLS_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'EPROTO',
]);

/** The coarse classes an attempt without an answer records. */
export type DeliveryErrorClass =
  | 'forbidden_address'
  | 'dns'
  | 'refused'
  | 'timeout'
  | 'reset'
  | 'unreachable'
  | 'tls'
  | 'network';

/** The error's class, read from the `code` of it or of its causes (undici wraps the socket's error). */
export function deliveryErrorClass(error: unknown, timedOut: boolean): DeliveryErrorClass {
  if (timedOut) return 'timeout';
  for (
    let current: unknown = error, depth = 0;
    current instanceof Error && depth < 5;
    current = current.cause, depth += 1
  ) {
    const code = (current as Error & { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    if (code === FORBIDDEN_ADDRESS_CODE) return 'forbidden_address';
    if (DNS_CODES.has(code)) return 'dns';
    if (code === 'ECONNREFUSED') return 'refused';
    if (TIMEOUT_CODES.has(code)) return 'timeout';
    if (RESET_CODES.has(code)) return 'reset';
    if (UNREACHABLE_CODES.has(code)) return 'unreachable';
    if (TLS_CODES.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_') || code.startsWith('CERT_'))
      return 'tls';
  }
  return 'network';
}
