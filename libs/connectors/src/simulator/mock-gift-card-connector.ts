/**
 * The `mock-gift-card` connector: the GiftCardConnector port over real HTTP to the simulator's gift card provider
 * (`/v1/gift-cards/...`, simulator-gift-cards.ts). Business failures are values; unreachable, 5xx and no answer
 * within `timeoutMs` throw a retriable ConnectorUnavailableError (every call is safe to repeat: the money-moving ones
 * are idempotent by reference); 4xx and answers that break the protocol throw ConnectorRequestRejectedError.
 */
import { ConnectorRequestRejectedError, ConnectorUnavailableError } from '../connector-errors';
import type {
  GiftCardBalance,
  GiftCardConnector,
  GiftCardCredentials,
  GiftCardFailure,
  GiftCardIssued,
  GiftCardRedeemed,
  GiftCardRefunded,
  GiftCardReversed,
  GiftCardServiceDefinition,
} from '../gift-card';
import type { ProviderFetch } from '../provider-fetch';
import { callSimulator, type SimulatorEndpoint } from './simulator-http-client';
import {
  merchantIdHeader,
  type WireGiftCardActivateRequest,
  type WireGiftCardBalance,
  type WireGiftCardBalanceRequest,
  type WireGiftCardFailure,
  type WireGiftCardIssued,
  type WireGiftCardIssueRequest,
  type WireGiftCardRedeemed,
  type WireGiftCardRedeemRequest,
  type WireGiftCardRefunded,
  type WireGiftCardRefundRequest,
  type WireGiftCardReversal,
} from './simulator-wire';

export interface MockGiftCardConfig {
  /** The simulator's base URL, e.g. http://127.0.0.1:4010 */
  readonly baseUrl: string;
  /** Any value; sent as `x-mock-card-merchant-id`, which outages match. */
  readonly merchantId: string;
  /** Per-request timeout. Default 10 s. */
  readonly timeoutMs?: number;
  /** How the simulator is called; default the global fetch. */
  readonly fetch?: ProviderFetch;
}

/** What an answer must carry, by field: the `typeof` its value may have (`|`: either; `null` for null). */
type Shape = Readonly<Record<string, string>>;

const failureShape: Shape = { error_code: 'string', raw_error_code: 'string', raw_error_message: 'string' };

const balanceShape: Shape = { balance: 'number', currency: 'string', expires_at: 'string|null' };

export class MockGiftCardConnector implements GiftCardConnector {
  readonly definitionId: string;
  private readonly endpoint: SimulatorEndpoint;

  constructor(config: MockGiftCardConfig, definition: Pick<GiftCardServiceDefinition, 'id'>) {
    this.definitionId = definition.id;
    this.endpoint = {
      name: definition.id,
      baseUrl: config.baseUrl,
      timeoutMs: config.timeoutMs ?? 10_000,
      headers: { [merchantIdHeader]: config.merchantId },
      ...(config.fetch ? { fetch: config.fetch } : {}),
    };
  }

  async balance(card: GiftCardCredentials): Promise<GiftCardBalance | GiftCardFailure> {
    const body: WireGiftCardBalanceRequest = credentials(card);
    const answer = await this.call<WireGiftCardBalance>('/v1/gift-cards/balance', body, balanceShape);
    return answer.status === 'failed' ? toFailure(answer) : toBalance(answer);
  }

  async issue(request: {
    readonly reference: string;
    readonly theme: string;
    readonly amount: number;
    readonly currency: string;
  }): Promise<GiftCardIssued | GiftCardFailure> {
    const body: WireGiftCardIssueRequest = {
      reference: request.reference,
      theme: request.theme,
      amount: request.amount,
      currency: request.currency,
    };
    const answer = await this.call<WireGiftCardIssued>('/v1/gift-cards/issue', body, {
      ...balanceShape,
      number: 'string',
      pin: 'string',
    });
    return answer.status === 'failed'
      ? toFailure(answer)
      : { ...toBalance(answer), number: answer.number, pin: answer.pin };
  }

  async activate(request: {
    readonly reference: string;
    readonly card: GiftCardCredentials;
    readonly amount?: number;
    readonly currency: string;
  }): Promise<GiftCardBalance | GiftCardFailure> {
    const body: WireGiftCardActivateRequest = {
      reference: request.reference,
      ...credentials(request.card),
      ...(request.amount !== undefined && { amount: request.amount }),
      currency: request.currency,
    };
    const answer = await this.call<WireGiftCardBalance>('/v1/gift-cards/activate', body, balanceShape);
    return answer.status === 'failed' ? toFailure(answer) : toBalance(answer);
  }

  async redeem(request: {
    readonly reference: string;
    readonly card: GiftCardCredentials;
    readonly amount: number;
    readonly currency: string;
  }): Promise<GiftCardRedeemed | GiftCardFailure> {
    const body: WireGiftCardRedeemRequest = {
      reference: request.reference,
      ...credentials(request.card),
      amount: request.amount,
      currency: request.currency,
    };
    const answer = await this.call<WireGiftCardRedeemed>('/v1/gift-cards/redemptions', body, {
      redemption_id: 'string',
      balance: 'number',
    });
    return answer.status === 'failed'
      ? toFailure(answer)
      : { outcome: 'succeeded', providerRedemptionId: answer.redemption_id, balance: answer.balance };
  }

  async reverse(request: { readonly reference: string }): Promise<GiftCardReversed | GiftCardFailure> {
    const answer = await this.call<WireGiftCardReversal>(
      `${redemptionPath(request.reference)}/reversal`,
      {},
      { reversed: 'boolean' },
    );
    return answer.status === 'failed' ? toFailure(answer) : { outcome: 'succeeded', reversed: answer.reversed };
  }

  async refund(request: {
    readonly reference: string;
    readonly redemptionReference: string;
    readonly amount: number;
    readonly currency: string;
  }): Promise<GiftCardRefunded | GiftCardFailure> {
    const body: WireGiftCardRefundRequest = {
      reference: request.reference,
      amount: request.amount,
      currency: request.currency,
    };
    const answer = await this.call<WireGiftCardRefunded>(
      `${redemptionPath(request.redemptionReference)}/refunds`,
      body,
      { refund_id: 'string' },
    );
    return answer.status === 'failed'
      ? toFailure(answer)
      : { outcome: 'succeeded', providerRefundId: answer.refund_id };
  }

  /** One POST; the answer is a failure, or a success carrying every field of `shape`, else the protocol is broken. */
  private async call<T extends { readonly status: 'succeeded' }>(
    path: string,
    body: object,
    shape: Shape,
  ): Promise<T | WireGiftCardFailure> {
    const answer = await callSimulator<unknown>(this.endpoint, 'POST', path, body);
    if (answer.kind === 'unknown')
      throw new ConnectorUnavailableError(`${this.endpoint.name} gave no answer to POST ${path}`, true, undefined, {
        timedOut: answer.timedOut,
      });
    const value = (typeof answer.body === 'object' && answer.body !== null ? answer.body : {}) as Record<
      string,
      unknown
    >;
    const broken = (what: string) =>
      new ConnectorRequestRejectedError(`${this.endpoint.name} answered POST ${path} without ${what}`, answer.status);
    if (value.status !== 'succeeded' && value.status !== 'failed') throw broken('status succeeded or failed');
    const wrong = Object.entries(value.status === 'failed' ? failureShape : shape).filter(
      ([field, type]) => !type.split('|').includes(value[field] === null ? 'null' : typeof value[field]),
    );
    if (wrong.length > 0) throw broken(wrong.map(([field, type]) => `${field} (${type})`).join(', '));
    return value as unknown as T | WireGiftCardFailure;
  }
}

const redemptionPath = (reference: string): string => `/v1/gift-cards/redemptions/${encodeURIComponent(reference)}`;

const credentials = (card: GiftCardCredentials): WireGiftCardBalanceRequest => ({
  number: card.number,
  ...(card.pin !== undefined && { pin: card.pin }),
});

const toBalance = (answer: WireGiftCardBalance): GiftCardBalance => ({
  outcome: 'succeeded',
  balance: answer.balance,
  currency: answer.currency,
  expiresAt: answer.expires_at,
});

const toFailure = (answer: WireGiftCardFailure): GiftCardFailure => ({
  outcome: 'failed',
  errorCode: answer.error_code,
  rawErrorCode: answer.raw_error_code,
  rawErrorMessage: answer.raw_error_message,
});
