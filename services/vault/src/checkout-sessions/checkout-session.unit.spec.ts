/** The checkout session decider: given its events, when a command, then the events it decides or the error it throws. */
import {
  checkoutSessionDecider,
  usedCardOf,
  type CheckoutSessionCard,
  type CheckoutSessionCommand,
  type CheckoutSessionDetails,
  type CheckoutSessionEvent,
} from './checkout-session';

const id = '6f1c1b9e-2f0c-4c55-9a43-6f3a0c7d1e01';
const created = '2026-01-01T00:00:00.000Z';
const open = '2026-01-01T00:30:00.000Z';
const expiresAt = '2026-01-01T01:00:00.000Z';
const late = '2026-01-01T01:00:00.000Z';
const transactionId = '11111111-1111-4111-8111-111111111111';

const details: CheckoutSessionDetails = {
  cartItems: null,
  metadata: { order: 'A-1' },
  buyer: null,
  airline: null,
  amount: 1299,
  currency: 'USD',
  paymentServiceId: null,
};
const card = (cardId: string): CheckoutSessionCard => ({
  cardId,
  scheme: 'visa',
  bin: '411111',
  last4: '1111',
  expirationDate: '11/30',
  fingerprint: 'fp',
  cardType: 'credit',
  issuerCountry: 'US',
  issuerName: null,
});

const sessionCreated: CheckoutSessionEvent = {
  type: 'CheckoutSessionCreated',
  data: { id, merchantAccountId: 'shop-a', ...details, expiresAt, at: created },
};
const cardAttached = (cardId: string, replacedCardId: string | null = null): CheckoutSessionEvent => ({
  type: 'CheckoutSessionCardAttached',
  data: { id, merchantAccountId: 'shop-a', card: card(cardId), replacedCardId, at: open },
});
const sessionUsed: CheckoutSessionEvent = {
  type: 'CheckoutSessionUsed',
  data: { id, merchantAccountId: 'shop-a', transactionId, cardId: 'card-1', at: open },
};
const sessionDeleted: CheckoutSessionEvent = {
  type: 'CheckoutSessionDeleted',
  data: { id, merchantAccountId: 'shop-a', at: open },
};

const create = (): CheckoutSessionCommand => ({
  type: 'CreateCheckoutSession',
  data: { id, merchantAccountId: 'shop-a', details, expiresAt },
  metadata: { now: created },
});
const update = (now = open, merchantAccountId = 'shop-a'): CheckoutSessionCommand => ({
  type: 'UpdateCheckoutSession',
  data: { id, merchantAccountId, changes: { amount: 500, buyer: null }, expiresAt: '2026-01-01T02:00:00.000Z' },
  metadata: { now },
});
const remove = (merchantAccountId = 'shop-a'): CheckoutSessionCommand => ({
  type: 'DeleteCheckoutSession',
  data: { id, merchantAccountId },
  metadata: { now: late },
});
const attach = (cardId: string, now = open): CheckoutSessionCommand => ({
  type: 'AttachCard',
  data: { id, card: card(cardId) },
  metadata: { now },
});
const use = (now = open, merchantAccountId = 'shop-a'): CheckoutSessionCommand => ({
  type: 'UseCheckoutSession',
  data: { id, merchantAccountId, transactionId },
  metadata: { now },
});

const fold = (events: readonly CheckoutSessionEvent[]) =>
  events.reduce(checkoutSessionDecider.evolve, checkoutSessionDecider.initialState());
const given = (events: readonly CheckoutSessionEvent[]) => ({
  when: (command: CheckoutSessionCommand) => checkoutSessionDecider.decide(command, fold(events)),
});
const refusal = (code: string) => expect.objectContaining({ code });

describe('when no session exists', () => {
  it('creates one with its expiry and the details as given', () =>
    expect(given([]).when(create())).toEqual([
      { type: 'CheckoutSessionCreated', data: { id, merchantAccountId: 'shop-a', ...details, expiresAt, at: created } },
    ]));

  it('finds nothing to update, delete, attach to or use', () => {
    for (const command of [update(), remove(), attach('card-1'), use()])
      expect(() => given([]).when(command)).toThrow(refusal('checkout_session_not_found'));
  });
});

describe('when the session is open', () => {
  it('refuses to create it again', () =>
    expect(() => given([sessionCreated]).when(create())).toThrow(refusal('checkout_session_exists')));

  it('updates the changes given and a new expiry, which later decisions go by', () => {
    const events = given([sessionCreated]).when(update());
    expect(events).toEqual([
      {
        type: 'CheckoutSessionUpdated',
        data: {
          id,
          merchantAccountId: 'shop-a',
          changes: { amount: 500, buyer: null },
          expiresAt: '2026-01-01T02:00:00.000Z',
          at: open,
        },
      },
    ]);
    // Past the first expiry, within the new one.
    expect(given([sessionCreated, ...events, cardAttached('card-1')]).when(use(late))[0]?.type).toBe(
      'CheckoutSessionUsed',
    );
  });

  it('attaches a card, and a second one replacing the first', () => {
    expect(given([sessionCreated]).when(attach('card-1'))).toEqual([cardAttached('card-1')]);
    expect(given([sessionCreated, cardAttached('card-1')]).when(attach('card-2'))).toEqual([
      cardAttached('card-2', 'card-1'),
    ]);
  });

  it('is used by a transaction with the card attached last', () =>
    expect(given([sessionCreated, cardAttached('card-1'), cardAttached('card-2', 'card-1')]).when(use())).toEqual([
      {
        type: 'CheckoutSessionUsed',
        data: { id, merchantAccountId: 'shop-a', transactionId, cardId: 'card-2', at: open },
      },
    ]));

  it('is not used without a card', () =>
    expect(() => given([sessionCreated]).when(use())).toThrow(refusal('checkout_session_without_card')));

  it('does not exist for another merchant account; the buyer’s attach needs none', () => {
    expect(() => given([sessionCreated, cardAttached('card-1')]).when(use(open, 'shop-b'))).toThrow(
      refusal('checkout_session_not_found'),
    );
    expect(() => given([sessionCreated]).when(update(open, 'shop-b'))).toThrow(refusal('checkout_session_not_found'));
    expect(() => given([sessionCreated]).when(remove('shop-b'))).toThrow(refusal('checkout_session_not_found'));
  });

  it('is deleted', () =>
    expect(given([sessionCreated]).when(remove())).toEqual([
      { type: 'CheckoutSessionDeleted', data: { id, merchantAccountId: 'shop-a', at: late } },
    ]));
});

describe('when the session holds a stored payment method', () => {
  const stored = (methodId: string): CheckoutSessionCard => ({ ...card(methodId), storedPaymentMethod: true });
  const storedAttached = (paymentMethodId: string, replacedCardId: string | null = null): CheckoutSessionEvent => ({
    type: 'CheckoutSessionCardAttached',
    data: { id, merchantAccountId: 'shop-a', card: stored(paymentMethodId), replacedCardId, at: open },
  });
  const attachStored = (paymentMethodId: string): CheckoutSessionCommand => ({
    type: 'AttachCard',
    data: { id, card: stored(paymentMethodId) },
    metadata: { now: open },
  });
  const useToStore: CheckoutSessionCommand = {
    type: 'UseCheckoutSession',
    data: { id, merchantAccountId: 'shop-a', transactionId, forStoring: true },
    metadata: { now: open },
  };
  const holding = [sessionCreated, storedAttached('pm-1')];

  it('attaches it like a card, replacing or replaced by a card', () => {
    expect(given([sessionCreated]).when(attachStored('pm-1'))).toEqual([storedAttached('pm-1')]);
    const afterCard = given([sessionCreated, cardAttached('card-1')]).when(attachStored('pm-1'));
    expect(afterCard).toEqual([storedAttached('pm-1', 'card-1')]);
    // A stored method replaced is not the session's card to remove: named apart, so only its security code goes.
    const replacement = { card: card('card-2'), replacedCardId: null, replacedPaymentMethodId: 'pm-1', at: open };
    expect(given(holding).when(attach('card-2'))).toEqual([
      { type: 'CheckoutSessionCardAttached', data: { id, merchantAccountId: 'shop-a', ...replacement } },
    ]);
  });

  it('is used by a payment', () =>
    expect(given(holding).when(use())).toEqual([
      {
        type: 'CheckoutSessionUsed',
        data: { id, merchantAccountId: 'shop-a', transactionId, cardId: 'pm-1', at: open },
      },
    ]));

  it('is not stored again as a new payment method; the session stays usable', () => {
    expect(() => given(holding).when(useToStore)).toThrow(refusal('checkout_session_holds_payment_method'));
    expect(given([...holding, cardAttached('card-2')]).when(useToStore)[0]?.type).toBe('CheckoutSessionUsed');
  });
});

describe('when the session has expired', () => {
  it('refuses updates, cards and payments from the instant of expiry on', () => {
    for (const command of [update(late), attach('card-2', late), use(late)]) {
      expect(() => given([sessionCreated, cardAttached('card-1')]).when(command)).toThrow(
        refusal('checkout_session_expired'),
      );
    }
  });

  it('may still be deleted', () =>
    expect(given([sessionCreated]).when(remove())[0]?.type).toBe('CheckoutSessionDeleted'));
});

describe('when a transaction used the session', () => {
  const usedSession = [sessionCreated, cardAttached('card-1'), sessionUsed];

  it('pays only once, and takes no other card or change', () => {
    for (const command of [use(), attach('card-2'), update()])
      expect(() => given(usedSession).when(command)).toThrow(refusal('checkout_session_used'));
  });

  it('may be deleted, and remembers that the card is the transaction’s', () => {
    expect(given(usedSession).when(remove())[0]?.type).toBe('CheckoutSessionDeleted');
    expect(usedCardOf(fold([...usedSession, sessionDeleted]))).toBe('card-1');
    expect(usedCardOf(fold([sessionCreated, cardAttached('card-1'), sessionDeleted]))).toBeNull();
  });
});

describe('when the session was deleted', () => {
  it('is gone for every command', () => {
    for (const command of [update(), remove(), attach('card-1'), use()])
      expect(() => given([sessionCreated, sessionDeleted]).when(command)).toThrow(
        refusal('checkout_session_not_found'),
      );
    expect(() => given([sessionCreated, sessionDeleted]).when(create())).toThrow(refusal('checkout_session_exists'));
  });
});
