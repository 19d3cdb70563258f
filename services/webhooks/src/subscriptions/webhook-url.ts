/**
 * Where a webhook may be sent: http(s) only, no credentials in the URL (they would be shown back in clear: use
 * `basic_auth`), and — unless WEBHOOK_ALLOW_PRIVATE_URLS is on — not to this machine or a private network:
 * `localhost` (and `*.localhost`), loopback (127.0.0.0/8, ::1), private (10/8, 172.16/12, 192.168/16, fc00::/7),
 * link-local (169.254/16, fe80::/10), shared (100.64/10), benchmarking (198.18/15), IETF protocol assignments
 * (192.0.0/24), multicast and reserved (224/3, ff00::/8), unspecified (0.0.0.0/8, ::) addresses and NAT64 prefixes
 * (64:ff9b::/96, 64:ff9b:1::/48: they reach IPv4 hosts through a translator, inner ones included), also written as
 * IPv4-mapped IPv6 or in the numeric forms the URL parser normalises (`http://2130706433/`, `http://0x7f.1/`).
 *
 * The rule reads the host as written; a name that resolves to a private address is caught when the delivery
 * connects (`delivery/guarded-fetch.ts`), which applies `isPrivateAddress` to every address the name resolves to.
 */
import { isIP } from 'node:net';

/** Why the URL is refused; null when it may be used. */
export function webhookUrlProblem(url: string, options: { allowPrivate: boolean }): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be an http or https URL';
  if (parsed.username !== '' || parsed.password !== '') return 'must not carry credentials; use basic_auth';
  if (parsed.hostname === '') return 'must name a host';
  if (options.allowPrivate) return null;
  const host = parsed.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost'))
    return 'must not point at localhost (WEBHOOK_ALLOW_PRIVATE_URLS is off)';
  if (isPrivateAddress(host))
    return 'must not point at a loopback, private or link-local address (WEBHOOK_ALLOW_PRIVATE_URLS is off)';
  return null;
}

/** True for an IP literal in a loopback, private, link-local, shared or unspecified range; false for names and public addresses. */
export function isPrivateAddress(host: string): boolean {
  const version = isIP(host);
  if (version === 4) return isPrivateV4(ipv4Octets(host));
  if (version === 6) {
    const words = ipv6Words(host);
    if (!words) return true; // unparseable: refuse rather than guess
    // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d): the IPv4 rule decides.
    const mapped = words.slice(0, 5).every((word) => word === 0) && (words[5] === 0xffff || words[5] === 0);
    if (mapped && !(words[5] === 0 && words[6] === 0 && words[7]! <= 1)) {
      return isPrivateV4([words[6]! >> 8, words[6]! & 0xff, words[7]! >> 8, words[7]! & 0xff]);
    }
    if (words.every((word) => word === 0)) return true; // ::
    if (words.slice(0, 7).every((word) => word === 0) && words[7] === 1) return true; // ::1
    if ((words[0]! & 0xfe00) === 0xfc00) return true; // fc00::/7 unique local
    if ((words[0]! & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
    if ((words[0]! & 0xffc0) === 0xfec0) return true; // fec0::/10 deprecated site-local
    if ((words[0]! & 0xff00) === 0xff00) return true; // ff00::/8 multicast
    if (words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((word) => word === 0)) return true; // 64:ff9b::/96 NAT64
    if (words[0] === 0x64 && words[1] === 0xff9b && words[2] === 1) return true; // 64:ff9b:1::/48 local-use NAT64
    return false;
  }
  return false;
}

function isPrivateV4([a, b, c]: readonly number[]): boolean {
  if (a === undefined || b === undefined || c === undefined) return true;
  return (
    a === 0 || // 0.0.0.0/8: "this network", reaches the local host
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // 100.64.0.0/10 shared (carrier-grade NAT)
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && c === 0) || // 192.0.0.0/24 IETF protocol assignments
    (a === 198 && (b === 18 || b === 19)) || // 198.18.0.0/15 benchmarking: often routed to inner networks
    a >= 224 // 224.0.0.0/4 multicast, 240.0.0.0/4 reserved, 255.255.255.255
  );
}

const ipv4Octets = (host: string): number[] => host.split('.').map(Number);

/** The eight 16-bit words of an IPv6 address (zone id dropped, embedded IPv4 expanded); null when malformed. */
function ipv6Words(host: string): number[] | null {
  let text = host.split('%')[0]!;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = ipv4Octets(v4[1]!);
    text = `${text.slice(0, -v4[1]!.length)}${((a! << 8) | b!).toString(16)}:${((c! << 8) | d!).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((word) => parseInt(word, 16)));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? head.length !== 8 : missing < 0) return null;
  const words = [...head, ...Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  return words.length === 8 && words.every((word) => Number.isInteger(word) && word >= 0 && word <= 0xffff)
    ? words
    : null;
}
