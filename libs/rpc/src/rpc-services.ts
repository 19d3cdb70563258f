/**
 * The distributed runtime's services and who may call what. Adding a service is one entry here: `rpc-credentials
 * create` issues it a certificate (named after its key), its RPC server admits exactly the callers listed and only
 * for their patterns, and tests/deploy/manifests.unit.spec.ts holds the Kubernetes NetworkPolicies to the same callers.
 *
 * A pattern is exact (`identity.merchant-accounts.get`) or a prefix ending in `.*` (`identity.*`). Each service lists
 * itself for its ping: its readiness probe (`scripts/rpc-ping.cjs`) calls it with the service's own certificate.
 */
import {
  apiKeyPairPatterns,
  giftCardDirectoryPatterns,
  giftCardGatewayPatterns,
  giftCardPatterns,
  giftCardPaymentPatterns,
  identityPatterns,
  merchantAccountPatterns,
  transactionsPatterns,
  vaultDirectoryPatterns,
  vaultPatterns,
  webhookPatterns,
} from '@switchyard/contracts';

export interface RpcServiceEntry {
  /** Caller service → the patterns it may call on this service. A service that serves no RPC has none. */
  readonly callers: Readonly<Record<string, readonly string[]>>;
}

export const rpcServices = {
  /** Serves HTTP only; calls every service with its certificate. */
  gateway: { callers: {} },
  identity: {
    callers: {
      identity: [identityPatterns.ping],
      gateway: ['identity.*'],
      // Renders `api-key-pair.*` webhook targets.
      webhooks: [apiKeyPairPatterns.get],
      // Whether a merchant account exists (the transaction hot path).
      transactions: [merchantAccountPatterns.get],
      // Merchant account settings (network tokens, account updater), read when used.
      vault: [merchantAccountPatterns.get],
    },
  },
  transactions: {
    callers: {
      transactions: [transactionsPatterns.ping],
      gateway: ['transactions.*'],
      // Renders transaction, capture and refund webhook targets.
      webhooks: [transactionsPatterns.get, transactionsPatterns.captureGet, transactionsPatterns.refundById],
      // The merchant accounts' gift card services (the connections are ours) and, at its start, the key hand-over
      // (`gift-card-directory.*`: outside `transactions.*`, so the gateway cannot ask for the keys).
      'gift-cards': Object.values(giftCardDirectoryPatterns),
      // Which of a merchant account's card connections take network tokens.
      vault: Object.values(vaultDirectoryPatterns),
    },
  },
  /**
   * The only service that holds card data and the vault's keys. The webhooks, identity and gift cards services may
   * ask it nothing; the transactions service only its port (card summaries and aliases, never a number), the
   * forwarder and the key hand-over, all outside `vault.`.
   */
  vault: {
    callers: {
      vault: [vaultPatterns.ping],
      gateway: ['vault.*'],
      transactions: ['vault-port.*'],
    },
  },
  'gift-cards': {
    callers: {
      'gift-cards': [giftCardPatterns.ping],
      // Not `gift-cards.*`: the split payments' patterns are the transactions service's only.
      gateway: giftCardGatewayPatterns,
      // A split payment's stored cards: what may be shown of one (never its number or PIN), whether one is the buyer's.
      transactions: Object.values(giftCardPaymentPatterns),
    },
  },
  webhooks: {
    callers: {
      webhooks: [webhookPatterns.ping],
      gateway: ['webhooks.*'],
    },
  },
} as const satisfies Readonly<Record<string, RpcServiceEntry>>;

export type RpcServiceName = keyof typeof rpcServices;

export const rpcServiceNames = Object.keys(rpcServices) as RpcServiceName[];

export const isRpcServiceName = (name: string): name is RpcServiceName => Object.hasOwn(rpcServices, name);

/** Whether `caller` may call `pattern` on `service` (an unknown service or caller may call nothing). */
export function rpcCallAllowed(service: string, caller: string, pattern: string): boolean {
  if (!isRpcServiceName(service)) return false;
  const callers: Readonly<Record<string, readonly string[]>> = rpcServices[service].callers;
  const allowed = Object.hasOwn(callers, caller) ? callers[caller] : undefined;
  return (allowed ?? []).some((rule) =>
    rule.endsWith('.*') ? pattern.startsWith(rule.slice(0, -1)) : pattern === rule,
  );
}
