/**
 * The vault service (issue 19): its store's streams, its topic and its readiness pattern. Its slices' RPC patterns
 * are `vault.` too (buyers, payment methods, checkout sessions, network tokens, digital wallets, account updater:
 * their contracts' files); the transactions process serves them until the vault has a process of its own.
 */

/**
 * The streams of the vault's store: buyers (and their external identifier claims), stored payment methods, network
 * tokens, account updater jobs and claims, digital wallets (and their provider claims), checkout sessions. Until the
 * vault had a store of its own they were in the transactions store, which now reads its store without them.
 */
export const VAULT_STREAM_PREFIXES: readonly string[] = [
  'buyer-',
  'payment-method-',
  'network-token-',
  'account-updater-job-',
  'account-updater-claim-',
  'digital-wallet-',
  'checkout-session-',
];

/** The vault's own events (no public names), relayed from its store. */
export const vaultTopic = 'vault.events';

export const vaultPatterns = {
  /** The vault service's readiness. */
  ping: 'vault.ping',
} as const;
