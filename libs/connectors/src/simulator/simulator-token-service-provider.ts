/**
 * The TokenServiceProvider port over real HTTP to the simulator's token service (`/v1/network-tokens/...`,
 * simulator-network-tokens.ts). A refusal (422) is a failed answer; other 4xx throw ConnectorRequestRejectedError;
 * unreachable, 5xx and no answer in time throw a retriable ConnectorUnavailableError — every call may be repeated
 * (provisioning is keyed by its reference, the rest by the state they lead to).
 */
import { ConnectorRequestRejectedError, ConnectorUnavailableError } from '../connector-errors';
import type {
  ProviderNetworkTokenStatus,
  TokenCryptogramResult,
  TokenProvisionRequest,
  TokenProvisionResult,
  TokenServiceProvider,
} from '../network-tokens';
import { callSimulator, type SimulatorEndpoint } from './simulator-http-client';
import type {
  WireCryptogram,
  WireCryptogramRequest,
  WireNetworkToken,
  WireNetworkTokenProvisionRequest,
  WireNetworkTokenRefusal,
} from './simulator-network-tokens';

export interface SimulatorTokenServiceProviderConfig {
  /** The simulator's base URL, e.g. http://127.0.0.1:4010 */
  readonly baseUrl: string;
  /** Per-request timeout. Default 10 s. */
  readonly timeoutMs?: number;
}

const refusalStatus = 422;

export class SimulatorTokenServiceProvider implements TokenServiceProvider {
  private readonly endpoint: SimulatorEndpoint;

  constructor(config: SimulatorTokenServiceProviderConfig) {
    this.endpoint = { name: 'network token service', baseUrl: config.baseUrl, timeoutMs: config.timeoutMs ?? 10_000 };
  }

  async provision(request: TokenProvisionRequest): Promise<TokenProvisionResult> {
    const body: WireNetworkTokenProvisionRequest = {
      reference: request.reference,
      card: { number: request.card.number, expiration_date: request.card.expirationDate },
      scheme: request.scheme,
      ...(request.requestorId !== undefined && { requestor_id: request.requestorId }),
      ...(request.appId !== undefined && { app_id: request.appId }),
      merchant_initiated: request.merchantInitiated,
      is_subsequent_payment: request.isSubsequentPayment,
      ...(request.securityCode !== undefined && { security_code: request.securityCode }),
    };
    const answer = await this.call<WireNetworkToken | WireNetworkTokenRefusal>('POST', '/v1/network-tokens', body);
    if (isRefusal(answer)) return { outcome: 'failed', errorCode: answer.error, message: answer.message };
    const token = expectToken(answer);
    // A repeated reference answers the token it made, which may have been suspended or deleted since.
    if (token.status !== 'active')
      return {
        outcome: 'failed',
        errorCode: 'token_not_active',
        message: `network token ${token.id} is ${token.status}`,
      };
    return {
      outcome: 'succeeded',
      providerTokenId: token.id,
      token: token.token,
      expirationDate: token.expiration_date,
      status: 'active',
      paymentAccountReference: token.payment_account_reference,
    };
  }

  suspend(providerTokenId: string): Promise<ProviderNetworkTokenStatus> {
    return this.transition(providerTokenId, 'suspend');
  }

  resume(providerTokenId: string): Promise<ProviderNetworkTokenStatus> {
    return this.transition(providerTokenId, 'resume');
  }

  delete(providerTokenId: string): Promise<ProviderNetworkTokenStatus> {
    return this.transition(providerTokenId, 'delete');
  }

  async cryptogram(
    providerTokenId: string,
    options: { readonly merchantInitiated: boolean },
  ): Promise<TokenCryptogramResult> {
    const body: WireCryptogramRequest = { merchant_initiated: options.merchantInitiated };
    const answer = await this.call<WireCryptogram | WireNetworkTokenRefusal>(
      'POST',
      `${tokenPath(providerTokenId)}/cryptograms`,
      body,
    );
    if (isRefusal(answer)) return { outcome: 'failed', errorCode: answer.error, message: answer.message };
    if (typeof answer?.cryptogram !== 'string' || typeof answer.eci !== 'string') throw malformed('cryptogram');
    return { outcome: 'succeeded', cryptogram: answer.cryptogram, eci: answer.eci };
  }

  private async transition(
    providerTokenId: string,
    action: 'suspend' | 'resume' | 'delete',
  ): Promise<ProviderNetworkTokenStatus> {
    const answer = await this.call<WireNetworkToken>('POST', `${tokenPath(providerTokenId)}/${action}`, {});
    return expectToken(answer).status;
  }

  private async call<T>(method: 'GET' | 'POST', path: string, body: unknown): Promise<T> {
    const answer = await callSimulator<T>(this.endpoint, method, path, body, [refusalStatus]);
    if (answer.kind === 'unknown') {
      throw new ConnectorUnavailableError(
        `${this.endpoint.name} gave no answer to ${method} ${path}`,
        true,
        undefined,
        { timedOut: answer.timedOut },
      );
    }
    return answer.body;
  }
}

const tokenPath = (providerTokenId: string): string => `/v1/network-tokens/${encodeURIComponent(providerTokenId)}`;

const isRefusal = (answer: unknown): answer is WireNetworkTokenRefusal =>
  typeof answer === 'object' && answer !== null && typeof (answer as { error?: unknown }).error === 'string';

const malformed = (what: string) =>
  new ConnectorRequestRejectedError(`network token service answered a malformed ${what}`);

function expectToken(answer: unknown): WireNetworkToken {
  const token = answer as Partial<WireNetworkToken> | null;
  const statuses: readonly unknown[] = ['active', 'suspended', 'deleted'];
  if (
    typeof token?.id !== 'string' ||
    typeof token.token !== 'string' ||
    typeof token.expiration_date !== 'string' ||
    !statuses.includes(token.status)
  ) {
    throw malformed('token');
  }
  return token as WireNetworkToken;
}
