/**
 * A Paze payment's checks, in the order a merchant would fix them: a Paze wallet registered with its key, a US
 * business, USD, a US acquiring connection that sends network tokens; only then is the payload decrypted (a network
 * token and its cryptogram, which stay in memory for the provider call). Every refusal is a 400 naming its code.
 */
import { ApiError } from '@switchyard/api';
import type { DigitalWallets } from './digital-wallets.slice';
import { decryptPazePayload, PazeError, pazeEligibility } from './paze';
import type { PazeSigningKeys } from './paze-signing-keys';

/** A merchant account's active connection as the transactions service names it (its payment services). */
export interface PazeConnection {
  readonly id: string;
  readonly method: string;
  readonly acceptedCountries: readonly string[];
  readonly networkTokensEnabled: boolean;
  readonly effectiveCapabilities: { readonly networkTokens: boolean };
}

const refused = (type: string, message: string, pointer = '/payment_method') =>
  ApiError.badRequest(message, [{ location: 'body', pointer, message, type }]);

/** Opens a Paze payload for a payment: the only code that holds a merchant's Paze key. */
export class PazePayments {
  constructor(
    private readonly wallets: Pick<DigitalWallets, 'pazeKeyFor'>,
    private readonly now: () => Date,
    /** Paze's signing keys (PAZE_SIGNING_KEYS): both signatures of every payload must verify against them; none in
     * production without the setting, where every payload is refused. */
    private readonly signingKeys: PazeSigningKeys | null,
  ) {}

  async open(
    merchantAccountId: string,
    payload: string,
    input: { currency: string; connections: readonly PazeConnection[] },
  ) {
    const paze = this.wallets.pazeKeyFor(merchantAccountId);
    if (!paze)
      throw refused(
        'paze_not_configured',
        'Paze is not set up for this merchant account: register a digital wallet with provider "paze" and its decryption key first',
      );
    const eligibility = pazeEligibility({
      merchantCountry: paze.wallet.merchantCountryCode,
      currency: input.currency,
      connections: input.connections
        .filter((connection) => connection.method === 'card')
        .map((connection) => ({
          id: connection.id,
          acceptedCountries: connection.acceptedCountries,
          networkTokensEnabled: connection.networkTokensEnabled,
          supportsNetworkTokens: connection.networkTokensEnabled && connection.effectiveCapabilities.networkTokens,
        })),
    });
    if (!eligibility.ok)
      throw refused(
        eligibility.code,
        eligibility.message,
        eligibility.code === 'paze_currency_not_supported' ? '/currency' : '/payment_method',
      );
    if (!this.signingKeys) {
      throw refused(
        'paze_signing_keys_not_configured',
        "Paze payloads cannot be verified: PAZE_SIGNING_KEYS (Paze's signing keys) is not set on this installation",
        '/payment_method/token',
      );
    }
    try {
      const credential = await decryptPazePayload(
        payload,
        { decryptionKey: paze.key, signingKeys: this.signingKeys },
        this.now(),
      );
      return { credential, connectionIds: eligibility.connectionIds };
    } catch (error) {
      if (error instanceof PazeError) throw refused(error.code, error.message, '/payment_method/token');
      throw error;
    }
  }
}
