/**
 * What an embed token's pins do to a request that reached its endpoint through the `embed` scope
 * (docs/embed-tokens.md). The token's `embed` claim pins amount, currency, a buyer and metadata; its
 * `checkout_session_id` claim binds it to one checkout session. Pure functions from (claims, request) to the
 * request to use or the `ApiError` to answer; the controllers call them through the `…For(caller, …)` wrappers,
 * which leave a request alone unless the caller's matched scope is `embed` (a server-to-server token carrying an
 * `embed` claim is not pinned by it).
 *
 * - A pinned value the request contradicts: 403 `forbidden` naming the field and the pinned value, every
 *   contradiction listed in `details` (type `pinned_by_embed_token`).
 * - A pinned value the request leaves out: amount and currency cannot be (the body requires them); the pinned buyer
 *   and the pinned metadata are filled in. Metadata keys the token does not pin are a contradiction, so a pinned
 *   request always carries exactly the pinned metadata.
 * - A pinned buyer is named one way: a request naming it the other way (`buyer_external_identifier` against a
 *   pinned `buyer_id`, say) is a contradiction — telling whether both name the same buyer would need a lookup, and
 *   the request gains nothing by it. A guest `buyer` goes with a pinned external identifier (when its own
 *   `external_identifier`, if any, agrees), never with a pinned `buyer_id` (the body refuses both together).
 * - A token bound to a checkout session pays with that session only: `payment_method` must be
 *   `{method: "checkout-session", id: <the session>}`. The gift card endpoints take it as any embed token (a split
 *   payment checks and stores the buyer's gift cards in the same checkout), with its buyer pin.
 * - Stored instruments are the pinned buyer's only (issue 22, item 2). A token that pins no buyer uses no stored
 *   payment method or stored gift card and lists no buyer's gift cards (403 here, without asking anyone); with a
 *   buyer pinned, the gateway passes the pin on (`embed_buyer`, {@link embedBuyerOf}) and the transactions service
 *   refuses a stored instrument of another buyer (403), since telling whose it is takes a lookup.
 */
import { ApiError, type ErrorDetail } from '@switchyard/api';
import type { EmbedClaim, VerifiedClaims } from '@switchyard/auth';
import {
  transactionCreateSchema,
  type BuyerGiftCardListQuery,
  type EmbedBuyerPin,
  type GiftCardBalanceInput,
  type GiftCardCreateInput,
  type TransactionCreateInput,
} from '@switchyard/contracts';
import type { Caller } from './caller';

export const EMBED_SCOPE = 'embed';
export const PINNED_DETAIL_TYPE = 'pinned_by_embed_token';

type Pinned<T> = T | ApiError;

/** POST /transactions: the body checked against the pins, the pinned buyer and metadata filled in. */
export function pinTransactionBody(
  claims: VerifiedClaims,
  body: TransactionCreateInput,
): Pinned<TransactionCreateInput> {
  const embed: EmbedClaim = claims.embed ?? {};
  const problems: ErrorDetail[] = [];
  if (embed.amount !== undefined && body.amount !== embed.amount)
    problems.push(mismatch('/amount', body.amount, embed.amount));
  if (embed.currency !== undefined && body.currency !== embed.currency)
    problems.push(mismatch('/currency', body.currency, embed.currency));
  if (claims.checkoutSessionId !== undefined)
    problems.push(...sessionProblems(body.payment_method, claims.checkoutSessionId));
  // A browser checkout is the buyer's own: a merchant-initiated payment (a recurring charge, say) is the server's.
  if (body.merchant_initiated)
    problems.push(
      refused(
        '/merchant_initiated',
        'merchant_initiated payments cannot be made with an embed token: they are server-to-server',
      ),
    );
  const buyer = pinnedBuyer(embed);
  if (buyer) {
    problems.push(...buyerProblems(body, '', buyer));
    if (body.payment_method)
      problems.push(...buyerProblems(body.payment_method as BuyerNamed, '/payment_method', buyer));
    if (body.buyer && buyer.field === 'buyer_id') {
      problems.push(
        refused(
          '/buyer',
          `buyer (a guest buyer) cannot be given: this embed token is limited to the buyer with buyer_id ${buyer.value}`,
        ),
      );
    }
    const guestIdentifier = body.buyer?.external_identifier;
    if (guestIdentifier != null && buyer.field === 'buyer_external_identifier' && guestIdentifier !== buyer.value) {
      problems.push(mismatch('/buyer/external_identifier', guestIdentifier, buyer.value, 'buyer_external_identifier'));
    }
  }
  if (embed.metadata !== undefined) problems.push(...metadataProblems(body.metadata ?? {}, embed.metadata));
  if (!buyer) problems.push(...storedWithoutBuyerPin(body));
  if (problems.length > 0) return forbidden(problems);

  const filled = {
    ...(buyer && body[buyer.field] == null ? { [buyer.field]: buyer.value } : {}),
    ...(embed.metadata !== undefined && !sameEntries(body.metadata ?? {}, embed.metadata)
      ? { metadata: embed.metadata }
      : {}),
  };
  if (Object.keys(filled).length === 0) return body;
  // A filled-in value skipped the body's validation: a pin no transaction can carry (metadata over its limits, say)
  // is the token's fault, not the request's.
  const checked = transactionCreateSchema.safeParse({ ...body, ...filled });
  if (checked.success) return checked.data;
  return forbidden(
    checked.error.issues.map((issue) => {
      const pointer = `/${issue.path.map(String).join('/')}`;
      return refused(
        pointer,
        `the ${pointer.slice(1).replaceAll('/', '.')} this embed token pins cannot be used in a transaction: ${issue.message}`,
      );
    }),
  );
}

/** POST /gift-cards: stored for the pinned buyer (filled in when the body names none). */
export function pinGiftCardBody(claims: VerifiedClaims, body: GiftCardCreateInput): Pinned<GiftCardCreateInput> {
  const buyer = pinnedBuyer(claims.embed ?? {});
  if (!buyer) return body;
  const problems = buyerProblems(body, '', buyer);
  if (problems.length > 0) return forbidden(problems);
  return body[buyer.field] == null ? { ...body, [buyer.field]: buyer.value } : body;
}

/** POST /gift-cards/balances: a stored card (`{id}`) only with a buyer pinned (its owner is checked by the service). */
export function pinGiftCardBalances(claims: VerifiedClaims, body: GiftCardBalanceInput): Pinned<GiftCardBalanceInput> {
  if (pinnedBuyer(claims.embed ?? {})) return body;
  const problems = body.items.flatMap((item, index) =>
    'id' in item ? [noBuyerPin(`/items/${index}/id`, 'a stored gift card')] : [],
  );
  return problems.length > 0 ? forbidden(problems) : body;
}

/** GET /buyers/gift-cards: the pinned buyer's cards only (the query must name a buyer, so nothing is filled in). */
export function pinBuyerQuery(claims: VerifiedClaims, query: BuyerGiftCardListQuery): Pinned<BuyerGiftCardListQuery> {
  const buyer = pinnedBuyer(claims.embed ?? {});
  if (!buyer) {
    const field = query.buyer_id !== undefined ? 'buyer_id' : 'buyer_external_identifier';
    const message =
      "a buyer's gift cards cannot be listed with an embed token that pins no buyer: pin buyer_id or buyer_external_identifier in its embed claim";
    return forbidden([refused(`/${field}`, message, 'query')]);
  }
  const problems = buyerProblems(query, '', buyer, 'query');
  return problems.length > 0 ? forbidden(problems) : query;
}

/** The transaction body to use for this caller: pinned when it came in through the `embed` scope; 403 when contradicted. */
export const transactionBodyFor = (caller: Caller, body: TransactionCreateInput): TransactionCreateInput =>
  caller.scope === EMBED_SCOPE ? orThrow(pinTransactionBody(caller.claims, body)) : body;

/** The gift card to store for this caller (see {@link pinGiftCardBody}). */
export const giftCardBodyFor = (caller: Caller, body: GiftCardCreateInput): GiftCardCreateInput =>
  caller.scope === EMBED_SCOPE ? orThrow(pinGiftCardBody(caller.claims, body)) : body;

/** The buyer gift card list query for this caller (see {@link pinBuyerQuery}). */
export const buyerQueryFor = (caller: Caller, query: BuyerGiftCardListQuery): BuyerGiftCardListQuery =>
  caller.scope === EMBED_SCOPE ? orThrow(pinBuyerQuery(caller.claims, query)) : query;

/** The balance check for this caller (see {@link pinGiftCardBalances}). */
export const giftCardBalancesFor = (caller: Caller, body: GiftCardBalanceInput): GiftCardBalanceInput =>
  caller.scope === EMBED_SCOPE ? orThrow(pinGiftCardBalances(caller.claims, body)) : body;

/**
 * `{embed_buyer}` for a call through the `embed` scope: the pinned buyer whose stored instruments alone it may use
 * (null: none pinned); nothing for a server-to-server call.
 */
export function embedBuyerOf(caller: Caller): { embed_buyer?: EmbedBuyerPin } {
  if (caller.scope !== EMBED_SCOPE) return {};
  const buyer = pinnedBuyer(caller.claims.embed ?? {});
  if (!buyer) return { embed_buyer: null };
  return {
    embed_buyer: buyer.field === 'buyer_id' ? { buyer_id: buyer.value } : { buyer_external_identifier: buyer.value },
  };
}

// ---- the rules -----------------------------------------------------------------------------------------------

type BuyerField = 'buyer_id' | 'buyer_external_identifier';
/** Whatever can name a buyer: the body, a card / redirect / checkout-session payment method, a query. */
interface BuyerNamed {
  readonly buyer_id?: string | null;
  readonly buyer_external_identifier?: string | null;
}
interface PinnedBuyer {
  readonly field: BuyerField;
  readonly value: string;
}

const pinnedBuyer = (embed: EmbedClaim): PinnedBuyer | null =>
  embed.buyer_id !== undefined
    ? { field: 'buyer_id', value: embed.buyer_id }
    : embed.buyer_external_identifier !== undefined
      ? { field: 'buyer_external_identifier', value: embed.buyer_external_identifier }
      : null;

/** The buyer fields of one object of the request (the body, its payment method, a query) against the pinned buyer. */
function buyerProblems(
  named: BuyerNamed,
  at: string,
  buyer: PinnedBuyer,
  location: 'body' | 'query' = 'body',
): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  for (const field of ['buyer_id', 'buyer_external_identifier'] as const) {
    const value = named[field];
    if (value == null) continue;
    if (field === buyer.field) {
      if (value !== buyer.value) problems.push(mismatch(`${at}/${field}`, value, buyer.value, field, location));
    } else {
      const message = `${label(`${at}/${field}`)} cannot be given: this embed token is limited to the buyer with ${buyer.field} ${buyer.value}; name the buyer by ${buyer.field} or leave it out`;
      problems.push(refused(`${at}/${field}`, message, location));
    }
  }
  return problems;
}

/** Without a buyer pin, no stored payment method nor stored gift card. */
function storedWithoutBuyerPin(body: TransactionCreateInput): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  if (body.payment_method?.method === 'id') problems.push(noBuyerPin('/payment_method/id', 'a stored payment method'));
  (body.gift_cards ?? []).forEach((card, index) => {
    if ('id' in card) problems.push(noBuyerPin(`/gift_cards/${index}/id`, 'a stored gift card'));
  });
  return problems;
}

const noBuyerPin = (pointer: string, what: string): ErrorDetail =>
  refused(
    pointer,
    `${what} cannot be used with an embed token that pins no buyer: pin the buyer it belongs to (buyer_id or buyer_external_identifier)`,
  );

function sessionProblems(paymentMethod: TransactionCreateInput['payment_method'], sessionId: string): ErrorDetail[] {
  if (paymentMethod?.method === 'checkout-session' && paymentMethod.id === sessionId) return [];
  const given =
    paymentMethod == null
      ? 'no payment_method'
      : paymentMethod.method === 'checkout-session'
        ? `checkout session ${paymentMethod.id}`
        : `payment_method ${paymentMethod.method}`;
  const message = `${given} does not match the checkout session ${sessionId} this embed token is limited to: pay with {"method": "checkout-session", "id": "${sessionId}"}`;
  return [refused(paymentMethod?.method === 'checkout-session' ? '/payment_method/id' : '/payment_method', message)];
}

function metadataProblems(
  given: Readonly<Record<string, string>>,
  pinned: Readonly<Record<string, string>>,
): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  for (const [key, value] of Object.entries(given)) {
    const pointer = `/metadata/${escapePointer(key)}`;
    if (!Object.hasOwn(pinned, key)) {
      const keys = Object.keys(pinned);
      const allowed =
        keys.length > 0 ? `the metadata keys ${keys.map((name) => JSON.stringify(name)).join(', ')}` : 'no metadata';
      problems.push(
        refused(
          pointer,
          `metadata key ${JSON.stringify(key)} cannot be given: this embed token is limited to ${allowed}`,
        ),
      );
    } else if (pinned[key] !== value) {
      problems.push(
        refused(
          pointer,
          `metadata ${JSON.stringify(key)} ${JSON.stringify(value)} does not match the value ${JSON.stringify(pinned[key])} this embed token is limited to`,
        ),
      );
    }
  }
  return problems;
}

const sameEntries = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean =>
  Object.keys(a).length === Object.keys(b).length &&
  Object.entries(a).every(([key, value]) => Object.hasOwn(b, key) && b[key] === value);

// ---- the answers ---------------------------------------------------------------------------------------------

const label = (pointer: string): string => pointer.slice(1).replaceAll('/', '.');

const show = (value: string | number): string => (typeof value === 'number' ? String(value) : value);

/** `amount 1000 does not match the amount 1299 this embed token is limited to`. */
function mismatch(
  pointer: string,
  given: string | number,
  pinned: string | number,
  pinnedName = label(pointer),
  location: 'body' | 'query' = 'body',
): ErrorDetail {
  return refused(
    pointer,
    `${label(pointer)} ${show(given)} does not match the ${pinnedName} ${show(pinned)} this embed token is limited to`,
    location,
  );
}

const refused = (pointer: string, message: string, location: 'body' | 'query' = 'body'): ErrorDetail => ({
  location,
  pointer,
  message,
  type: PINNED_DETAIL_TYPE,
});

const forbidden = (problems: readonly ErrorDetail[]): ApiError =>
  new ApiError(403, problems.map((problem) => problem.message).join('; '), problems);

const escapePointer = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

function orThrow<T>(pinned: Pinned<T>): T {
  if (pinned instanceof ApiError) throw pinned;
  return pinned;
}
