/**
 * The vault's process as the transactions process reaches it (distributed runtime): its `VaultPort` (one RPC pattern
 * per method, `vaultPortPatterns`), card-bearing provider calls through its outbound forwarder, and the key hand-over.
 * rpc-services admits the transactions service alone to these patterns. And the one thing the vault asks of the
 * transactions process: a merchant account's card connections (do they take network tokens?).
 */
import {
  legacyForgetSecurityCodePattern,
  vaultDirectoryPatterns,
  vaultForwardingPatterns,
  vaultPortPatterns,
  type ForwardedAnswer,
  type ForwardedRequest,
  type VaultKeyHandOver,
} from '@switchyard/contracts';
import { notSentCode, type ProviderFetch } from '@switchyard/connectors';
import type { RpcClient, RpcHandlers } from '@switchyard/rpc';
import { ForwarderRefusedError } from './forwarder/outbound-forwarder';
import type { InProcessVault } from './in-process-vault';
import type { NetworkTokenConnection, NetworkTokenConnections } from './network-tokens/network-tokens.slice';
import type { TransactionsVaultKeys } from './vault-service';

/** Every port pattern names a method of the port as the vault answers it (checked when this compiles). */
type PortMethod = keyof typeof vaultPortPatterns;
const portMethodsExist: PortMethod extends keyof InProcessVault ? true : never = true;

export interface VaultRpcOptions {
  readonly port: InProcessVault;
  readonly cardForwarding: { fetchFor(merchantAccountId: string, hosts: readonly string[]): ProviderFetch };
  readonly keys: () => TransactionsVaultKeys;
  /** How long a forwarded call may take at most (the callers' own timeouts are shorter). */
  readonly forwardTimeoutMs: number;
}

export function vaultPortRpcHandlers(options: VaultRpcOptions): RpcHandlers {
  void portMethodsExist;
  const port = options.port as unknown as Record<PortMethod, (...args: unknown[]) => Promise<unknown>>;
  const handlers: Record<string, RpcHandlers[string]> = {};
  for (const [method, pattern] of Object.entries(vaultPortPatterns) as [PortMethod, string][])
    handlers[pattern] = async (payload) => {
      if (!Array.isArray(payload)) throw new TypeError(`${pattern}: the arguments are a JSON array`);
      return (await port[method].apply(options.port, payload)) ?? null;
    };
  handlers[legacyForgetSecurityCodePattern] = async (payload) => {
    if (!Array.isArray(payload) || typeof payload[0] !== 'string' || typeof payload[1] !== 'string')
      throw new TypeError(`${legacyForgetSecurityCodePattern}: the arguments are [merchantAccountId, alias]`);
    await options.port.forgetSecurityCodes([{ merchantAccountId: payload[0], alias: payload[1] }]);
    return null;
  };
  handlers[vaultForwardingPatterns.forward] = (payload) =>
    forward(options.cardForwarding, payload as ForwardedRequest, options.forwardTimeoutMs);
  handlers[vaultForwardingPatterns.keys] = async (): Promise<VaultKeyHandOver> => {
    const keys = options.keys();
    return {
      fingerprint_key: keys.fingerprintKey.toString('base64'),
      return_token_key: keys.returnTokenKey.toString('base64'),
      gift_card_legacy_secret_key: keys.giftCardLegacyKeys.secret.toString('base64'),
      gift_card_legacy_response_key: keys.giftCardLegacyKeys.responses.toString('base64'),
    };
  };
  return handlers;
}

/** Makes the call through the forwarder; the answer's status, headers and bytes come back unchanged. */
async function forward(
  forwarding: VaultRpcOptions['cardForwarding'],
  request: ForwardedRequest,
  timeoutMs: number,
): Promise<ForwardedAnswer> {
  const fetch = forwarding.fetchFor(request.merchant_account_id, request.hosts);
  try {
    const response = await fetch(request.url, {
      method: request.method,
      headers: request.headers.map(([name, value]) => [name, value] as [string, string]),
      body: request.body_base64 === null ? null : new Uint8Array(Buffer.from(request.body_base64, 'base64')),
      redirect: request.redirect,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = Buffer.from(await response.arrayBuffer());
    return {
      status: response.status,
      status_text: response.statusText,
      headers: [...response.headers],
      body_base64: body.toString('base64'),
    };
  } catch (error) {
    if (error instanceof ForwarderRefusedError)
      return { refused: { reason: error.reason, message: error.message, not_sent: error.code !== undefined } };
    const failure = error as { name?: unknown; message?: unknown };
    return {
      failed: {
        name: typeof failure.name === 'string' ? failure.name : 'Error',
        message: typeof failure.message === 'string' ? failure.message : String(error),
        code: notSentCode(error),
      },
    };
  }
}

/** The transactions process's card connections, asked when the vault needs them. */
export const connectionsOverRpc = (transactions: RpcClient): NetworkTokenConnections => ({
  activeConnections: (merchantAccountId) =>
    transactions.call<NetworkTokenConnection[]>(vaultDirectoryPatterns.connections, {
      merchant_account_id: merchantAccountId,
    }),
});
