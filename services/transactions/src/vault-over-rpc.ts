/**
 * The vault's process as this one uses it (distributed runtime): its `VaultPort` over RPC, one pattern per method
 * (`vaultPortPatterns`, its arguments as a JSON array), card-bearing provider calls sent to its outbound forwarder
 * (`vault-port.forward`: the request as bytes, the answer passed back unchanged), and the keys it hands over at the
 * start (asked until the vault answers). The vault asks this process one thing back: a merchant account's card
 * connections (`vaultDirectoryRpcHandlers`).
 */
import {
  vaultDirectoryPatterns,
  vaultForwardingPatterns,
  vaultPortPatterns,
  type ForwardedAnswer,
  type ForwardedRequest,
  type VaultKeyHandOver,
} from '@switchyard/contracts';
import { PROVIDER_FETCH_REFUSED, type ProviderFetch } from '@switchyard/connectors';
import { callUntilAnswered, type RpcClient, type RpcHandlers } from '@switchyard/rpc';
import type { PaymentServices } from './payment-services/payment-services.slice';
import type { TransactionsVault } from './transactions-service';
import type { VaultPort } from './vault-port';

/** One pattern per port method, and no other (checked when this compiles). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const onePatternPerMethod: Same<keyof typeof vaultPortPatterns, keyof VaultPort> = true;

export interface VaultOverRpcOptions {
  /** Asks the vault's port and its keys (RPC_TIMEOUT_MS). */
  readonly rpc: RpcClient;
  /** Forwarded provider calls: a client whose timeout exceeds the longest provider call. */
  readonly forwardRpc: RpcClient;
  /** How long to wait between two asks of the keys while the vault's process is not there yet. */
  readonly retryMs: number;
  readonly onRetry?: (error: unknown) => void;
}

export async function vaultOverRpc(options: VaultOverRpcOptions): Promise<TransactionsVault> {
  void onePatternPerMethod;
  const keys = await vaultKeysOverRpc(options);
  const port = Object.fromEntries(
    Object.entries(vaultPortPatterns).map(([method, pattern]) => [
      method,
      (...args: unknown[]) => options.rpc.call(pattern, args),
    ]),
  ) as unknown as VaultPort;
  return {
    port,
    cardForwarding: {
      fetchFor: (merchantAccountId, hosts) => forwardedFetch(options.forwardRpc, merchantAccountId, hosts),
    },
    keysForTransactions: () => keys,
    // The vault asks for the connections when it needs them (`vaultDirectoryRpcHandlers`).
    useConnections: () => undefined,
  };
}

async function vaultKeysOverRpc(
  options: VaultOverRpcOptions,
): Promise<ReturnType<TransactionsVault['keysForTransactions']>> {
  const keys = await callUntilAnswered<VaultKeyHandOver>(options.rpc, vaultForwardingPatterns.keys, {}, options);
  return {
    fingerprintKey: Buffer.from(keys.fingerprint_key, 'base64'),
    returnTokenKey: Buffer.from(keys.return_token_key, 'base64'),
    giftCardLegacyKeys: {
      secret: Buffer.from(keys.gift_card_legacy_secret_key, 'base64'),
      responses: Buffer.from(keys.gift_card_legacy_response_key, 'base64'),
    },
  };
}

/** A code a connector reads as "certainly not sent" (`notSentCode` of @switchyard/connectors) or as unknown (none). */
class ForwardedCallError extends Error {
  constructor(
    name: string,
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = name;
  }
}

const statusesWithoutBody = new Set([101, 103, 204, 205, 304]);

/**
 * A `ProviderFetch` whose calls the vault's forwarder makes: the request's body is read here (a string,
 * URLSearchParams or bytes, as the forwarder takes them), the caller's abort signal is honoured here (the forwarder
 * has its own time limit), and the answer comes back as the provider gave it.
 */
function forwardedFetch(rpc: RpcClient, merchantAccountId: string, hosts: readonly string[]): ProviderFetch {
  return async (input, init) => {
    const signal = init?.signal ?? undefined;
    signal?.throwIfAborted();
    const headers = new Headers(init?.headers);
    const body = init?.body ?? null;
    let bytes: Buffer | null = null;
    if (typeof body === 'string') bytes = Buffer.from(body);
    else if (body instanceof URLSearchParams) {
      bytes = Buffer.from(body.toString());
      if (!headers.has('content-type')) headers.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
    } else if (body instanceof ArrayBuffer) bytes = Buffer.from(body);
    else if (ArrayBuffer.isView(body)) bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    else if (body !== null)
      throw new ForwardedCallError(
        'ForwarderRefusedError',
        'vault forwarder refused the call: a card-bearing call carries a string, URLSearchParams or bytes body',
        PROVIDER_FETCH_REFUSED,
      );
    const request: ForwardedRequest = {
      merchant_account_id: merchantAccountId,
      hosts,
      url: input instanceof URL ? input.href : String(input),
      method: (init?.method ?? 'GET').toUpperCase(),
      headers: [...headers],
      body_base64: bytes === null ? null : bytes.toString('base64'),
      redirect: init?.redirect ?? 'follow',
    };
    const answer = await abortable(rpc.call<ForwardedAnswer>(vaultForwardingPatterns.forward, request), signal).catch(
      (error: unknown) => {
        // The vault's process was not reached: the provider certainly was not either.
        if ((error as { cause?: { code?: unknown } }).cause?.code === 'ECONNREFUSED')
          throw new ForwardedCallError('Error', 'the vault is not reachable', 'ECONNREFUSED');
        throw error;
      },
    );
    if ('refused' in answer)
      throw new ForwardedCallError(
        'ForwarderRefusedError',
        answer.refused.message,
        answer.refused.not_sent ? PROVIDER_FETCH_REFUSED : undefined,
      );
    if ('failed' in answer)
      throw new ForwardedCallError(answer.failed.name, answer.failed.message, answer.failed.code ?? undefined);
    return new Response(statusesWithoutBody.has(answer.status) ? null : Buffer.from(answer.body_base64, 'base64'), {
      status: answer.status,
      statusText: answer.status_text,
      headers: answer.headers.map(([name, value]) => [name, value] as [string, string]),
    });
  };
}

/** The call, or the signal's reason once it aborts (as fetch rejects: a TimeoutError or an AbortError). */
function abortable<T>(call: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return call;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    call.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** What the vault's process asks of this one (rpc-services admits only it): a merchant account's card connections. */
export function vaultDirectoryRpcHandlers(paymentServices: Pick<PaymentServices, 'activeConnections'>): RpcHandlers {
  return {
    [vaultDirectoryPatterns.connections]: async (payload) =>
      paymentServices
        .activeConnections((payload as { merchant_account_id: string }).merchant_account_id)
        .map((connection) => ({
          method: connection.method,
          networkTokensEnabled: connection.networkTokensEnabled,
          effectiveCapabilities: { networkTokens: connection.effectiveCapabilities.networkTokens },
        })),
  };
}
