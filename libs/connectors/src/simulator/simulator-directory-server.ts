/**
 * The ThreeDSecureDirectory port over real HTTP to the simulator's directory server / ACS (`/v1/3ds/...`,
 * simulator-acs.ts). Unreachable, 5xx and no answer in time throw a retriable ConnectorUnavailableError (both calls
 * are safe to repeat: an authentication is keyed by its reference); 4xx throws ConnectorRequestRejectedError.
 */
import { ConnectorUnavailableError } from '../connector-errors';
import type { ProviderFetch } from '../provider-fetch';
import type {
  ThreeDSecureAuthentication,
  ThreeDSecureAuthenticationRequest,
  ThreeDSecureDirectory,
} from '../three-d-secure';
import { callSimulator, type SimulatorEndpoint } from './simulator-http-client';
import type { WireThreeDSecureAuthentication, WireThreeDSecureAuthenticationRequest } from './simulator-wire';

export interface SimulatorDirectoryServerConfig {
  /** The simulator's base URL, e.g. http://127.0.0.1:4010 */
  readonly baseUrl: string;
  /** Per-request timeout. Default 10 s. */
  readonly timeoutMs?: number;
  /** How the calls are made (the vault's forwarder: the card as aliases); default the global fetch. */
  readonly fetch?: ProviderFetch;
}

export class SimulatorDirectoryServer implements ThreeDSecureDirectory {
  private readonly endpoint: SimulatorEndpoint;

  constructor(config: SimulatorDirectoryServerConfig) {
    this.endpoint = {
      name: '3-D Secure directory server',
      baseUrl: config.baseUrl,
      timeoutMs: config.timeoutMs ?? 10_000,
      ...(config.fetch ? { fetch: config.fetch } : {}),
    };
  }

  authenticate(request: ThreeDSecureAuthenticationRequest): Promise<ThreeDSecureAuthentication> {
    const { merchant } = request;
    const body: WireThreeDSecureAuthenticationRequest = {
      reference: request.reference,
      amount: request.amount,
      currency: request.currency,
      card: { number: request.card.number, expiration_date: request.card.expirationDate },
      merchant: {
        acquirer_bin: merchant.acquirerBin,
        acquirer_merchant_id: merchant.acquirerMerchantId,
        name: merchant.name,
        country_code: merchant.countryCode,
        category_code: merchant.categoryCode,
        url: merchant.url,
      },
      return_url: request.returnUrl,
    };
    return this.call('POST', '/v1/3ds/authentications', body);
  }

  result(authenticationId: string): Promise<ThreeDSecureAuthentication> {
    return this.call('GET', `/v1/3ds/authentications/${encodeURIComponent(authenticationId)}`, undefined);
  }

  private async call(method: 'GET' | 'POST', path: string, body: unknown): Promise<ThreeDSecureAuthentication> {
    const answer = await callSimulator<WireThreeDSecureAuthentication>(this.endpoint, method, path, body);
    if (answer.kind === 'unknown')
      throw new ConnectorUnavailableError(`${this.endpoint.name} gave no answer to ${method} ${path}`, true);
    return toAuthentication(answer.body);
  }
}

function toAuthentication(a: WireThreeDSecureAuthentication): ThreeDSecureAuthentication {
  return {
    authenticationId: a.authentication_id,
    version: a.version,
    transactionStatus: a.trans_status,
    method: a.method,
    ...(a.challenge_url !== null && { challengeUrl: a.challenge_url }),
    ...(a.eci !== null && { eci: a.eci }),
    ...(a.cavv !== null && { cavv: a.cavv }),
    directoryServerTransactionId: a.ds_transaction_id,
    ...(a.status_reason !== null && { statusReason: a.status_reason }),
  };
}
