/**
 * Network tokens as the API shows them, the token service's trouble as HTTP errors, and the sealing of token
 * numbers (AES-256-GCM under the slice's sealing key, bound to the merchant account and the token id).
 */
import { ApiError, type ErrorDetail } from '@switchyard/api';
import { ConnectorRequestRejectedError, ConnectorUnavailableError } from '@switchyard/connectors';
import type { NetworkToken } from '@switchyard/contracts';
import { associatedData, VaultCipher } from '../vault/vault-cipher';
import type { NetworkTokenView } from './network-tokens.read-model';

/** Seals and opens token numbers; a sealed number copied to another token or account no longer opens. */
export class TokenSeal {
  readonly #cipher: VaultCipher;

  constructor(sealingKey: Buffer) {
    this.#cipher = new VaultCipher(sealingKey, 'switchyard/network-tokens/v1/token-number');
  }

  seal(merchantAccountId: string, networkTokenId: string, token: string): string {
    return this.#cipher.sealToText(token, associatedData(merchantAccountId, networkTokenId));
  }

  open(view: Pick<NetworkTokenView, 'merchantAccountId' | 'id' | 'sealedToken'>): string {
    return this.#cipher.openText(view.sealedToken, associatedData(view.merchantAccountId, view.id));
  }
}

export function toNetworkToken(view: NetworkTokenView, token: string): NetworkToken {
  return {
    type: 'network-token',
    id: view.id,
    payment_method_id: view.paymentMethodId,
    status: view.status,
    token,
    expiration_date: view.expirationDate,
    created_at: view.createdAt,
    updated_at: view.updatedAt,
  };
}

/** A 400 about the payment method in the path; the detail's `type` is the reason (a stable code). */
export function badPaymentMethod(type: string, message: string): ApiError {
  const detail: ErrorDetail = { location: 'path', pointer: '/payment_method_id', message, type };
  return ApiError.badRequest(message, [detail]);
}

/** The token service refused: a 400 whose detail `type` is its code (`card_not_eligible`, `token_not_active`, …). */
export const refusedBy = (what: string, errorCode: string, message: string): ApiError =>
  badPaymentMethod(errorCode, `The network token service refused to ${what}: ${errorCode} (${message})`);

/**
 * A token service call for an API request: unreachable or broken protocol → 502, no answer in time → 504 (the
 * message stays in the log).
 */
export async function tokenService<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if (error instanceof ConnectorUnavailableError && error.timedOut) throw ApiError.gatewayTimeout(error);
    if (error instanceof ConnectorUnavailableError || error instanceof ConnectorRequestRejectedError)
      throw ApiError.badGateway(error);
    throw error;
  }
}
