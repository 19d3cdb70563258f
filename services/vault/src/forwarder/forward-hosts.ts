/**
 * The hosts the vault lets a card go to, whatever its caller declares (issue 19 item 4): a forwarded call's host must
 * be one its connection's definition declares (sent by the caller, `ConnectorDefinition.hosts(config)`) and one of
 * these. The caller — the transactions process, outside the card data environment — cannot widen them: it is the
 * vault's own list, from
 *  - the providers' own hosts, as their definitions name them (`ConnectorDefinition.providerHosts`: Adyen's test and
 *    live checkout hosts, Stripe's API);
 *  - the hosts of the vault process's own settings that name a provider (MOCK_CARD_URL, THREE_DS_DIRECTORY_URL);
 *  - the operator's list, `VAULT_FORWARD_HOSTS` (comma-separated `host[:port]`, `*` for any characters within one
 *    label): a connection's `api_base_url` elsewhere (a provider's regional endpoint, a proxy) must be listed there;
 *  - loopback (127.0.0.0/8, ::1, localhost): a listener there is on the vault's own machine.
 */
import { hostOf, hostPattern } from '@switchyard/connectors';

export type ForwardHosts = (host: string) => boolean;

export function forwardHosts(options: {
  /** `VAULT_FORWARD_HOSTS`, as set. */
  readonly configured?: string | undefined;
  /** Base URLs of the vault's own settings (MOCK_CARD_URL, THREE_DS_DIRECTORY_URL); unset ones left out. */
  readonly settingsUrls?: readonly (string | undefined)[];
  readonly definitions: readonly { readonly providerHosts?: readonly string[] }[];
}): ForwardHosts {
  const patterns = [
    ...options.definitions.flatMap((definition) => definition.providerHosts ?? []),
    ...(options.settingsUrls ?? []).flatMap((url) => (url ? [hostOf(url)] : [])),
    ...(options.configured ?? '')
      .split(',')
      .map((host) => host.trim())
      .filter((host) => host !== ''),
  ];
  // Compiled once: the list is asked on every forwarded call.
  const matchers = patterns.map(hostPattern);
  return (host) => isLoopback(host) || matchers.some((matches) => matches(host));
}

function isLoopback(host: string): boolean {
  let hostname: string;
  try {
    hostname = new URL(`http://${host}`).hostname.toLowerCase();
  } catch {
    return false;
  }
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}
