/**
 * The simulator's 3-D Secure directory server and ACS (`/v1/3ds/...`): an authentication's outcome is decided by
 * the card number (`threeDSecureOutcomeForCard`); a challenge is a page where the buyer authenticates or fails, after
 * which the browser is sent back to the requester's `return_url`. docs/simulator.md "3-D Secure".
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import {
  baseUrlOf,
  html,
  HttpFailure,
  readBody,
  requireAmount,
  requireCurrency,
  requireText,
  withQueryParameter,
  type RouteAnswer,
} from './simulator-http';
import { challengePage } from './simulator-pages';
import { eciForCard, threeDSecureOutcomeForCard } from './simulator-values';
import type {
  WireChallengeResult,
  WireThreeDSecureAuthentication,
  WireThreeDSecureAuthenticationRequest,
} from './simulator-wire';

const version = '2.2.0';

interface StoredAuthentication {
  authentication: WireThreeDSecureAuthentication;
  readonly request: WireThreeDSecureAuthenticationRequest;
}

export class SimulatorAcs {
  private readonly byId = new Map<string, StoredAuthentication>();
  private readonly byReference = new Map<string, StoredAuthentication>();

  constructor(private readonly newId: (prefix: string) => string) {}

  /** `segments`: the path after `/v1/3ds`. */
  async route(request: IncomingMessage, [collection, id]: readonly (string | undefined)[]): Promise<RouteAnswer> {
    const method = request.method ?? 'GET';
    if (collection === 'authentications' && id === undefined && method === 'POST') {
      return this.authenticate((await readBody(request)) as WireThreeDSecureAuthenticationRequest, baseUrlOf(request));
    }
    if (collection === 'authentications' && id !== undefined && method === 'GET')
      return { status: 200, body: this.find(id).authentication };
    if (collection === 'challenges' && id !== undefined && (method === 'GET' || method === 'POST')) {
      const stored = this.find(id);
      if (stored.authentication.trans_status !== 'C')
        throw new HttpFailure(409, 'challenge_completed', `the challenge of ${id} is already completed`);
      if (method === 'GET')
        return html(
          challengePage({
            id,
            amount: stored.request.amount,
            currency: stored.request.currency,
            merchantName: stored.request.merchant.name,
          }),
        );
      return this.complete(stored, (await readBody(request)) as WireChallengeResult);
    }
    throw new HttpFailure(404, 'not_found', `no route ${method} ${request.url ?? ''}`);
  }

  /** A repeated request for the same reference answers the authentication already made (200), not a new one. */
  private authenticate(body: WireThreeDSecureAuthenticationRequest, baseUrl: string): RouteAnswer {
    requireText(body, ['reference', 'currency', 'return_url']);
    requireAmount(body.amount);
    requireText(body.card, ['number', 'expiration_date'], 'card.');
    requireText(
      body.merchant,
      ['acquirer_bin', 'acquirer_merchant_id', 'name', 'country_code', 'category_code', 'url'],
      'merchant.',
    );
    requireCurrency(body.currency);
    if (!URL.canParse(body.return_url))
      throw new HttpFailure(400, 'invalid_request', 'return_url must be an absolute URL');

    const repeated = this.byReference.get(body.reference);
    if (repeated !== undefined) {
      const { amount, currency, card } = repeated.request;
      if (amount !== body.amount || currency !== body.currency || card.number !== body.card.number) {
        throw new HttpFailure(
          409,
          'reference_conflict',
          `reference ${body.reference} was authenticated with another amount, currency or card`,
        );
      }
      return { status: 200, body: repeated.authentication };
    }
    const id = this.newId('sim_3ds');
    const outcome = threeDSecureOutcomeForCard(body.card.number);
    const challenge = outcome.transactionStatus === 'C';
    const stored: StoredAuthentication = {
      request: body,
      authentication: {
        authentication_id: id,
        reference: body.reference,
        amount: body.amount,
        currency: body.currency,
        version,
        trans_status: outcome.transactionStatus,
        method: challenge ? 'challenge' : 'frictionless',
        challenge_url: challenge ? `${baseUrl}/v1/3ds/challenges/${id}` : null,
        ...authenticationValue(outcome.transactionStatus === 'Y', body.card.number),
        ds_transaction_id: randomUUID(),
        status_reason: outcome.statusReason ?? null,
      },
    };
    this.byId.set(id, stored);
    this.byReference.set(body.reference, stored);
    return { status: 201, body: stored.authentication };
  }

  private complete(stored: StoredAuthentication, body: WireChallengeResult): RouteAnswer {
    if (body.result !== 'Y' && body.result !== 'N')
      throw new HttpFailure(400, 'invalid_request', 'result must be Y or N');
    stored.authentication = {
      ...stored.authentication,
      trans_status: body.result,
      challenge_url: null,
      ...authenticationValue(body.result === 'Y', stored.request.card.number),
      status_reason: body.result === 'N' ? '01' : null,
    };
    const id = stored.authentication.authentication_id;
    return { status: 303, location: withQueryParameter(stored.request.return_url, 'authentication_id', id) };
  }

  private find(id: string): StoredAuthentication {
    const stored = this.byId.get(id);
    if (stored === undefined) throw new HttpFailure(404, 'not_found', `no authentication ${id}`);
    return stored;
  }
}

/** The ECI and the authentication value (CAVV / AAV: 20 random bytes) that only an authenticated cardholder gets. */
function authenticationValue(
  authenticated: boolean,
  cardNumber: string,
): Pick<WireThreeDSecureAuthentication, 'eci' | 'cavv'> {
  return authenticated
    ? { eci: eciForCard(cardNumber), cavv: randomBytes(20).toString('base64') }
    : { eci: null, cavv: null };
}
