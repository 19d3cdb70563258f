/**
 * The simulator's gift card provider (`/v1/gift-cards/...`, the `mock-gift-card` connector): an in-memory ledger of
 * cards keyed by number. A card first seen gets its balance from its PIN (`giftCardOutcomeForPin`); after that the
 * ledger decides. Redemptions, reversals, refunds, issues and activations are idempotent by our reference.
 * docs/simulator.md "Gift cards".
 */
import { randomInt } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { HttpFailure, readBody, requireAmount, requireCurrency, requireText, type RouteAnswer } from './simulator-http';
import {
  giftCardExpiredNumberSuffix,
  giftCardFailure,
  giftCardOutcomeForPin,
  type GiftCardFailureOutcome,
} from './simulator-values';
import type {
  WireGiftCardActivateRequest,
  WireGiftCardBalance,
  WireGiftCardBalanceRequest,
  WireGiftCardFailure,
  WireGiftCardIssued,
  WireGiftCardIssueRequest,
  WireGiftCardLedgerCard,
  WireGiftCardLedgerRedemption,
  WireGiftCardRedeemed,
  WireGiftCardRedeemRequest,
  WireGiftCardRefunded,
  WireGiftCardRefundRequest,
  WireGiftCardReversal,
} from './simulator-wire';

/** Ours: a card first seen where no request names a currency (a balance check) holds US dollars. */
export const giftCardDefaultCurrency = 'USD';

interface StoredGiftCard {
  readonly number: string;
  /** The PIN the card was first seen with; every later request must give the same (undefined: none). */
  readonly pin: string | undefined;
  readonly currency: string;
  balance: number;
}

interface StoredRedemption {
  readonly reference: string;
  readonly number: string;
  readonly redemptionId: string | null;
  readonly amount: number;
  readonly currency: string;
  status: WireGiftCardLedgerRedemption['status'];
  refundedAmount: number;
  readonly refunds: { readonly reference: string; readonly refund_id: string; readonly amount: number }[];
}

/**
 * Ours: the first request with a reference is answered and remembered; the same reference with the same values
 * answers the same again (moving nothing), with other values it is a 409 `reference_conflict`.
 */
class AnswersByReference<Answer> {
  private readonly answers = new Map<string, { readonly values: string; readonly answer: Answer }>();

  answer(reference: string, values: readonly unknown[], first: () => Answer): Answer {
    const key = JSON.stringify(values);
    const seen = this.answers.get(reference);
    if (seen !== undefined) {
      if (seen.values !== key)
        throw new HttpFailure(409, 'reference_conflict', `reference ${reference} was used with other values`);
      return seen.answer;
    }
    const answer = first();
    this.answers.set(reference, { values: key, answer });
    return answer;
  }
}

const toWireFailure = (failure: GiftCardFailureOutcome): WireGiftCardFailure => ({
  status: 'failed',
  error_code: failure.errorCode,
  raw_error_code: failure.rawErrorCode,
  raw_error_message: failure.rawErrorMessage,
});

const failed = (...args: Parameters<typeof giftCardFailure>): WireGiftCardFailure =>
  toWireFailure(giftCardFailure(...args));

const balanceOf = (card: StoredGiftCard): WireGiftCardBalance => ({
  status: 'succeeded',
  balance: card.balance,
  currency: card.currency,
  expires_at: null,
});

const randomDigits = (count: number): string => Array.from({ length: count }, () => String(randomInt(10))).join('');

export class SimulatorGiftCards {
  private readonly cards = new Map<string, StoredGiftCard>();
  /** Every redemption asked for, failed ones included, by our reference. */
  private readonly redemptions = new Map<string, StoredRedemption>();
  /** References reversed before any redemption reached us: a redemption arriving later with one is refused. */
  private readonly reversedUnseen = new Set<string>();
  private readonly issues = new AnswersByReference<WireGiftCardIssued>();
  private readonly activations = new AnswersByReference<WireGiftCardBalance | WireGiftCardFailure>();
  private readonly redemptionAnswers = new AnswersByReference<WireGiftCardRedeemed | WireGiftCardFailure>();
  private readonly refundAnswers = new AnswersByReference<WireGiftCardRefunded | WireGiftCardFailure>();

  /** `refuse`: throws while the caller's merchant id is down (outages apply to every POST). */
  constructor(
    private readonly newId: (prefix: string) => string,
    private readonly refuse: (request: IncomingMessage, body: unknown) => void,
  ) {}

  /** `segments`: the path after `/v1/gift-cards`. */
  async route(
    request: IncomingMessage,
    [collection, reference, action]: readonly (string | undefined)[],
  ): Promise<RouteAnswer> {
    const method = request.method ?? 'GET';
    if (method === 'GET' && collection === 'cards' && reference !== undefined && action === undefined) {
      const card = this.ledgerCard(reference);
      if (card === undefined) throw new HttpFailure(404, 'not_found', `no gift card ${reference}`);
      return { status: 200, body: card };
    }
    if (method !== 'POST') throw new HttpFailure(404, 'not_found', `no route ${method} ${request.url ?? ''}`);
    const body = await readBody(request);
    this.refuse(request, body);
    const answer = (value: unknown): RouteAnswer => ({ status: 200, body: value });
    if (reference === undefined) {
      if (collection === 'balance') return answer(this.balance(body as WireGiftCardBalanceRequest));
      if (collection === 'issue') return answer(this.issue(body as WireGiftCardIssueRequest));
      if (collection === 'activate') return answer(this.activate(body as WireGiftCardActivateRequest));
      if (collection === 'redemptions') return answer(this.redeem(body as WireGiftCardRedeemRequest));
    } else if (collection === 'redemptions') {
      if (action === 'reversal') return answer(this.reverse(reference));
      if (action === 'refunds') return answer(this.refund(reference, body as WireGiftCardRefundRequest));
    }
    throw new HttpFailure(404, 'not_found', `no route ${method} ${request.url ?? ''}`);
  }

  /** The ledger of one card, as `GET /v1/gift-cards/cards/{number}` shows it; undefined for a card never seen. */
  ledgerCard(number: string): WireGiftCardLedgerCard | undefined {
    const card = this.cards.get(number);
    if (card === undefined) return undefined;
    return {
      number: card.number,
      balance: card.balance,
      currency: card.currency,
      expires_at: null,
      redemptions: [...this.redemptions.values()]
        .filter((r) => r.number === card.number)
        .map((r) => ({
          reference: r.reference,
          redemption_id: r.redemptionId,
          amount: r.amount,
          currency: r.currency,
          status: r.status,
          refunded_amount: r.refundedAmount,
          refunds: r.refunds.map((refund) => ({ ...refund })),
        })),
    };
  }

  private balance(body: WireGiftCardBalanceRequest): WireGiftCardBalance | WireGiftCardFailure {
    requireText(body, ['number']);
    const card = this.cardFor(body.number, body.pin, giftCardDefaultCurrency);
    return 'status' in card ? card : balanceOf(card);
  }

  /** Ours: a virtual card's number is 16–19 random digits, never ending in 0000 (expired); its PIN starts with 0. */
  private issue(body: WireGiftCardIssueRequest): WireGiftCardIssued {
    requireText(body, ['reference', 'theme']);
    requireAmount(body.amount);
    requireCurrency(body.currency);
    return this.issues.answer(body.reference, [body.theme, body.amount, body.currency], () => {
      let number: string;
      do number = randomDigits(randomInt(16, 20));
      while (number.endsWith(giftCardExpiredNumberSuffix) || this.cards.has(number));
      const pin = `0${randomDigits(7)}`;
      const card: StoredGiftCard = { number, pin, currency: body.currency, balance: body.amount };
      this.cards.set(number, card);
      return { ...balanceOf(card), number, pin };
    });
  }

  /** Loads a card with `amount` (when given) in `currency`; the card's currency must match. */
  private activate(body: WireGiftCardActivateRequest): WireGiftCardBalance | WireGiftCardFailure {
    requireText(body, ['reference', 'number']);
    if (body.amount !== undefined) requireAmount(body.amount);
    requireCurrency(body.currency);
    return this.activations.answer(body.reference, [body.number, body.pin, body.amount, body.currency], () => {
      const card = this.cardFor(body.number, body.pin, body.currency);
      if ('status' in card) return card;
      if (card.currency !== body.currency) return failed('incorrect_currency');
      card.balance += body.amount ?? 0;
      return balanceOf(card);
    });
  }

  /**
   * Debits the card. A reference reversed before it arrived is refused with operation_canceled, so reversing every
   * unfinished redemption after a crash also stops one still on its way.
   */
  private redeem(body: WireGiftCardRedeemRequest): WireGiftCardRedeemed | WireGiftCardFailure {
    requireText(body, ['reference', 'number']);
    requireAmount(body.amount);
    requireCurrency(body.currency);
    return this.redemptionAnswers.answer(body.reference, [body.number, body.pin, body.amount, body.currency], () => {
      const outcome = this.debit(body);
      this.redemptions.set(body.reference, {
        reference: body.reference,
        number: body.number,
        redemptionId: outcome.status === 'succeeded' ? outcome.redemption_id : null,
        amount: body.amount,
        currency: body.currency,
        status: outcome.status,
        refundedAmount: 0,
        refunds: [],
      });
      return outcome;
    });
  }

  private debit(body: WireGiftCardRedeemRequest): WireGiftCardRedeemed | WireGiftCardFailure {
    if (this.reversedUnseen.has(body.reference))
      return failed('operation_canceled', `redemption ${body.reference} was reversed before it arrived.`);
    const card = this.cardFor(body.number, body.pin, body.currency);
    if ('status' in card) return card;
    if (card.currency !== body.currency) return failed('incorrect_currency');
    if (card.balance < body.amount) return failed('insufficient_funds');
    card.balance -= body.amount;
    return { status: 'succeeded', redemption_id: this.newId('sim_gcr'), balance: card.balance };
  }

  /**
   * Puts back what a succeeded redemption still holds (its amount less what was refunded). Again: the same answer.
   * A reference never redeemed, or whose redemption failed, reverses nothing (`reversed: false`) and is remembered.
   */
  private reverse(reference: string): WireGiftCardReversal {
    const redemption = this.redemptions.get(reference);
    if (redemption === undefined) this.reversedUnseen.add(reference);
    if (redemption?.status === 'succeeded') {
      this.cardOf(redemption).balance += redemption.amount - redemption.refundedAmount;
      redemption.status = 'reversed';
    }
    return { status: 'succeeded', reversed: redemption?.status === 'reversed' };
  }

  /** Part or all of a succeeded redemption back onto its card; never more than the redemption in total. */
  private refund(
    redemptionReference: string,
    body: WireGiftCardRefundRequest,
  ): WireGiftCardRefunded | WireGiftCardFailure {
    requireText(body, ['reference']);
    requireAmount(body.amount);
    requireCurrency(body.currency);
    const redemption = this.redemptions.get(redemptionReference);
    if (redemption === undefined) throw new HttpFailure(404, 'not_found', `no redemption ${redemptionReference}`);
    return this.refundAnswers.answer(body.reference, [redemptionReference, body.amount, body.currency], () => {
      if (body.currency !== redemption.currency) return failed('incorrect_currency');
      const refundable = redemption.status === 'succeeded' ? redemption.amount - redemption.refundedAmount : 0;
      if (body.amount > refundable)
        return failed('invalid_amount', `at most ${refundable} of redemption ${redemptionReference} can be refunded.`);
      const refundId = this.newId('sim_gcf');
      this.cardOf(redemption).balance += body.amount;
      redemption.refundedAmount += body.amount;
      redemption.refunds.push({ reference: body.reference, refund_id: refundId, amount: body.amount });
      return { status: 'succeeded', refund_id: refundId };
    });
  }

  /**
   * The card a request names, or why it cannot be used: a malformed number (ours: invalid_gift_card), a number
   * ending in 0000 (ours: expired_card), a PIN other than the known card's (invalid_gift_card), or the PIN rules for a
   * card first seen, which is then created holding the PIN's balance in `currency`. Ours: a card first seen without
   * a PIN holds 0.
   */
  private cardFor(number: string, pin: string | undefined, currency: string): StoredGiftCard | WireGiftCardFailure {
    if (!/^\d{16,19}$/.test(number)) return failed('invalid_gift_card', 'a gift card number has 16 to 19 digits.');
    if (number.endsWith(giftCardExpiredNumberSuffix)) return failed('expired_card');
    const known = this.cards.get(number);
    if (known !== undefined) return known.pin === pin ? known : failed('invalid_gift_card');
    const outcome = pin === undefined ? ({ result: 'succeeded', balance: 0 } as const) : giftCardOutcomeForPin(pin);
    if (outcome.result === 'failed') return toWireFailure(outcome);
    const card: StoredGiftCard = { number, pin, currency, balance: outcome.balance };
    this.cards.set(number, card);
    return card;
  }

  private cardOf(redemption: StoredRedemption): StoredGiftCard {
    const card = this.cards.get(redemption.number);
    if (card === undefined) throw new Error(`redemption ${redemption.reference} names no known card`);
    return card;
  }
}
