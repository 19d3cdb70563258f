/**
 * The token service provider port: how Switchyard asks a card network's token service (Visa VTS, Mastercard MDES,
 * the Amex and Discover services; the simulator's `/v1/network-tokens` in development) for a network token standing
 * in for a stored card, manages that token's life, and gets a cryptogram for each payment made with it.
 *
 * Business answers (a card the network will not tokenize, a token that cannot give a cryptogram) are VALUES; an
 * unreachable provider or a broken protocol throws the classes in `connector-errors.ts`. Provisioning is idempotent
 * by our `reference` (the network token's id), and suspend, resume and delete by their target state, so every call
 * may be repeated after a timeout.
 */

export type ProviderNetworkTokenStatus = 'active' | 'suspended' | 'deleted';

export interface TokenProvisionRequest {
  /** Our network token id: the provider answers a repeated request with the same reference with the same token. */
  readonly reference: string;
  /** The card, sent to the provider over HTTP only: never logged or kept. */
  readonly card: { readonly number: string /** MM/YY */; readonly expirationDate: string };
  /** The card's scheme (`visa`, `mastercard`, `amex`, `discover`): which network's service is asked. */
  readonly scheme: string;
  /** The merchant's token requestor id with that network, when it has one. */
  readonly requestorId?: string;
  readonly appId?: string;
  readonly merchantInitiated: boolean;
  readonly isSubsequentPayment: boolean;
  /** Helps the issuer verify the card; never kept. */
  readonly securityCode?: string;
}

export type TokenProvisionResult =
  | {
      readonly outcome: 'succeeded';
      readonly providerTokenId: string;
      /** The network token number: not a card number, but still a payment credential. */
      readonly token: string;
      /** MM/YY: the token's own expiry, which may differ from the card's. */
      readonly expirationDate: string;
      readonly status: 'active';
      /** The Payment Account Reference: the same for every token of one card account. */
      readonly paymentAccountReference: string;
    }
  | { readonly outcome: 'failed'; readonly errorCode: string; readonly message: string };

export type TokenCryptogramResult =
  | {
      readonly outcome: 'succeeded' /** Base64 (TAVV / DSRP), fresh for each payment. */;
      readonly cryptogram: string;
      readonly eci: string;
    }
  | { readonly outcome: 'failed'; readonly errorCode: string; readonly message: string };

export interface TokenServiceProvider {
  provision(request: TokenProvisionRequest): Promise<TokenProvisionResult>;
  /** The token's status after the call: `suspended` (already suspended: the same). */
  suspend(providerTokenId: string): Promise<ProviderNetworkTokenStatus>;
  resume(providerTokenId: string): Promise<ProviderNetworkTokenStatus>;
  /** Final: a deleted token never comes back. Deleting again answers `deleted`. */
  delete(providerTokenId: string): Promise<ProviderNetworkTokenStatus>;
  /** A cryptogram for one payment; a token that is not active gives none (a failed answer). */
  cryptogram(providerTokenId: string, options: { readonly merchantInitiated: boolean }): Promise<TokenCryptogramResult>;
}
