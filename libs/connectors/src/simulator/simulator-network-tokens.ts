/**
 * The simulator's token service provider (`/v1/network-tokens/...`, the `SimulatorTokenServiceProvider` adapter):
 * provisions a network token for a card, suspends, resumes and deletes it, and issues a cryptogram per payment. The
 * tokens (and the cards they stand for) live in the simulator's ledger; its card authorizations answer a token it
 * issued as they would its card (`useForAuthorization`). docs/simulator.md "Network tokens".
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AmountDecision } from './simulator-values';
import { HttpFailure, readBody, requireText, type RouteAnswer } from './simulator-http';
import type { SimulatedNetworkToken, SimulatorLedger } from './simulator-ledger';
import { withCheckDigit } from './luhn';
export { passesLuhn } from './luhn';

// ---- wire (snake_case JSON), shared with the adapter -----------------------------------------------------------

export interface WireNetworkTokenProvisionRequest {
  readonly reference: string;
  readonly card: { readonly number: string; readonly expiration_date: string };
  readonly scheme: string;
  readonly requestor_id?: string;
  readonly app_id?: string;
  readonly merchant_initiated: boolean;
  readonly is_subsequent_payment: boolean;
  readonly security_code?: string;
}

/** A token as the service shows it (201 on provision, 200 on every other answer). */
export interface WireNetworkToken {
  readonly id: string;
  readonly reference: string;
  readonly token: string;
  readonly expiration_date: string;
  readonly status: SimulatedNetworkToken['status'];
  readonly payment_account_reference: string;
  readonly scheme: string;
}

export interface WireCryptogramRequest {
  readonly merchant_initiated: boolean;
}

export interface WireCryptogram {
  readonly cryptogram: string;
  readonly eci: string;
}

/** A refusal (HTTP 422): the network will not do it for this card or token. */
export interface WireNetworkTokenRefusal {
  readonly error: NetworkTokenRefusalCode;
  readonly message: string;
}

// ---- the deterministic values (docs/simulator.md "Network tokens") ----------------------------------------------

export type NetworkTokenRefusalCode =
  | 'card_not_eligible'
  | 'missing_requestor_id'
  | 'unsupported_card_scheme'
  | 'token_not_active';

/** The networks with a token service. */
export const networkTokenSchemes = ['visa', 'mastercard', 'amex', 'discover'] as const;

/** Ours: a card number ending in these four digits is refused. */
export const networkTokenRefusalSuffixes: Readonly<Record<string, NetworkTokenRefusalCode>> = {
  '0002': 'card_not_eligible',
};

/** Ours: a card number ending in these four digits gets a token expiring 3 years after the card. */
export const networkTokenLongerExpirySuffix = '0003';

/** Discover's numbers: 6011, 65, 644–649. Its token service needs the requestor id AND the app id. */
export const isDiscoverNumber = (number: string): boolean => /^(6011|65|64[4-9])/.test(number);

/**
 * A token number: the card's first four digits (its scheme's prefix), random digits, a Luhn check digit;
 * the card's length.
 */
export function tokenNumberFor(cardNumber: string, random: (max: number) => number = randomInt): string {
  const body = Array.from({ length: cardNumber.length - 5 }, () => String(random(10))).join('');
  return withCheckDigit(`${cardNumber.slice(0, 4)}${body}`);
}

/** The token's expiry: the card's, or 3 years later for a card ending in 0003. */
export function tokenExpiryFor(cardNumber: string, cardExpiry: string): string {
  if (!cardNumber.endsWith(networkTokenLongerExpirySuffix)) return cardExpiry;
  const [month = '', year = ''] = cardExpiry.split('/');
  return `${month}/${String((Number.parseInt(year, 10) + 3) % 100).padStart(2, '0')}`;
}

/** The refusal the network answers a provision with, if any: the card's last four, its scheme, Discover's ids. */
export function provisionRefusal(request: WireNetworkTokenProvisionRequest): WireNetworkTokenRefusal | undefined {
  const number = request.card.number;
  const bySuffix = networkTokenRefusalSuffixes[number.slice(-4)];
  if (bySuffix !== undefined)
    return { error: bySuffix, message: 'the issuer does not allow network tokens for this card' };
  if (!(networkTokenSchemes as readonly string[]).includes(request.scheme)) {
    return { error: 'unsupported_card_scheme', message: `no token service for scheme ${request.scheme}` };
  }
  if (isDiscoverNumber(number) && !(request.requestor_id && request.app_id)) {
    return { error: 'missing_requestor_id', message: 'Discover needs the token requestor id and the app id' };
  }
  return undefined;
}

/** Ours: merchant-initiated 07; a buyer-initiated payment: Mastercard (5, 2) 02, every other scheme 05. */
export const cryptogramEci = (token: SimulatedNetworkToken, merchantInitiated: boolean): string =>
  merchantInitiated ? '07' : /^[25]/.test(token.token) ? '02' : '05';

/** Ours: one Payment Account Reference per card number, 29 characters (`V001` + 25). */
const paymentAccountReferenceFor = (number: string): string =>
  `V001${createHash('sha256').update(`par:${number}`).digest('hex').toUpperCase().slice(0, 25)}`;

const toWire = (t: SimulatedNetworkToken): WireNetworkToken => ({
  id: t.id,
  reference: t.reference,
  token: t.token,
  expiration_date: t.expirationDate,
  status: t.status,
  payment_account_reference: t.paymentAccountReference,
  scheme: t.scheme,
});

const refused = (refusal: WireNetworkTokenRefusal): RouteAnswer => ({ status: 422, body: refusal });

export class SimulatorNetworkTokens {
  constructor(private readonly ledger: SimulatorLedger) {}

  /** `segments`: the path after `/v1/network-tokens`. */
  async route(request: IncomingMessage, [id, action]: readonly (string | undefined)[]): Promise<RouteAnswer> {
    const method = request.method ?? 'GET';
    if (id === undefined && method === 'POST')
      return this.provision((await readBody(request)) as WireNetworkTokenProvisionRequest);
    if (id !== undefined && action === undefined && method === 'GET')
      return { status: 200, body: toWire(this.find(id)) };
    if (id !== undefined && method === 'POST') {
      const token = this.find(id);
      if (action === 'suspend') return this.transition(token, 'active', 'suspended');
      if (action === 'resume') return this.transition(token, 'suspended', 'active');
      if (action === 'delete') {
        token.status = 'deleted';
        return { status: 200, body: toWire(token) };
      }
      if (action === 'cryptograms') return this.cryptogram(token, (await readBody(request)) as WireCryptogramRequest);
    }
    throw new HttpFailure(404, 'not_found', `no route ${method} ${request.url ?? ''}`);
  }

  /**
   * How an authorization with a `network_token` instrument goes: undefined for a token this service never issued
   * (the amount table alone decides, as before); else the token's card, and a decline when the token stands in the
   * way (deleted, suspended, another expiry, a cryptogram it never issued). The use is recorded on the token.
   */
  useForAuthorization(
    instrument: { readonly token: string; readonly expiration_date: string; readonly cryptogram?: string },
    reference: string,
  ): { readonly card: SimulatedNetworkToken['card']; readonly refusal?: AmountDecision } | undefined {
    const token = [...this.ledger.networkTokens.values()].find((candidate) => candidate.token === instrument.token);
    if (token === undefined) return undefined;
    token.authorizations.push(reference);
    const decline = (errorCode: string) => ({ card: token.card, refusal: { result: 'declined', errorCode } as const });
    if (token.status === 'deleted') return decline('canceled_payment_method');
    if (token.status === 'suspended') return decline('unavailable_payment_method');
    if (instrument.expiration_date !== token.expirationDate) return decline('incorrect_expiry_date');
    if (instrument.cryptogram !== undefined && !token.cryptograms.has(instrument.cryptogram))
      return decline('suspected_fraud');
    return { card: token.card };
  }

  /** Idempotent by reference: again with the same card answers the same token (200); with another card, 409. */
  private provision(body: WireNetworkTokenProvisionRequest): RouteAnswer {
    requireText(body, ['reference', 'scheme']);
    requireText(body.card, ['number', 'expiration_date'], 'card.');
    if (!/^\d{12,19}$/.test(body.card.number))
      throw new HttpFailure(400, 'invalid_request', 'card.number must be 12 to 19 digits');
    if (!/^(0[1-9]|1[0-2])\/\d{2}$/.test(body.card.expiration_date))
      throw new HttpFailure(400, 'invalid_request', 'card.expiration_date must be MM/YY');
    if (typeof body.merchant_initiated !== 'boolean' || typeof body.is_subsequent_payment !== 'boolean') {
      throw new HttpFailure(
        400,
        'invalid_request',
        'merchant_initiated and is_subsequent_payment must be true or false',
      );
    }
    const known = [...this.ledger.networkTokens.values()].find((candidate) => candidate.reference === body.reference);
    if (known !== undefined) {
      if (known.card.number !== body.card.number)
        throw new HttpFailure(409, 'reference_conflict', `reference ${body.reference} was used for another card`);
      return { status: 200, body: toWire(known) };
    }
    const refusal = provisionRefusal(body);
    if (refusal !== undefined) return refused(refusal);

    const issued = new Set([...this.ledger.networkTokens.values()].map((t) => t.token));
    let number: string;
    do number = tokenNumberFor(body.card.number);
    while (number === body.card.number || issued.has(number));
    const token: SimulatedNetworkToken = {
      id: this.ledger.newId('sim_ntk'),
      reference: body.reference,
      token: number,
      expirationDate: tokenExpiryFor(body.card.number, body.card.expiration_date),
      paymentAccountReference: paymentAccountReferenceFor(body.card.number),
      scheme: body.scheme,
      requestorId: body.requestor_id ?? null,
      appId: body.app_id ?? null,
      card: { number: body.card.number, expirationDate: body.card.expiration_date },
      status: 'active',
      cryptograms: new Set(),
      authorizations: [],
    };
    this.ledger.addNetworkToken(token);
    return { status: 201, body: toWire(token) };
  }

  /** `from` → `to`; already `to` answers the same; a deleted token is final (409). */
  private transition(
    token: SimulatedNetworkToken,
    from: 'active' | 'suspended',
    to: 'active' | 'suspended',
  ): RouteAnswer {
    if (token.status === 'deleted') throw new HttpFailure(409, 'token_deleted', `network token ${token.id} is deleted`);
    if (token.status === from) token.status = to;
    return { status: 200, body: toWire(token) };
  }

  /** 20 random bytes, base64 (28 characters), fresh each call; only an active token gets one. */
  private cryptogram(token: SimulatedNetworkToken, body: WireCryptogramRequest): RouteAnswer {
    if (typeof body.merchant_initiated !== 'boolean')
      throw new HttpFailure(400, 'invalid_request', 'merchant_initiated must be true or false');
    if (token.status !== 'active')
      return refused({ error: 'token_not_active', message: `network token ${token.id} is ${token.status}` });
    const cryptogram = randomBytes(20).toString('base64');
    token.cryptograms.add(cryptogram);
    const answer: WireCryptogram = { cryptogram, eci: cryptogramEci(token, body.merchant_initiated) };
    return { status: 201, body: answer };
  }

  private find(id: string): SimulatedNetworkToken {
    const token = this.ledger.networkTokens.get(id);
    if (token === undefined) throw new HttpFailure(404, 'not_found', `no network token ${id}`);
    return token;
  }
}
