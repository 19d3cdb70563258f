/**
 * Issue 9, item 1 acceptance on the embedded runtime (in-memory limiter), over real HTTP: an embed token gets 50
 * requests a minute across POST /gift-cards/balances, POST /gift-cards and POST /transactions together, then 429
 * with Retry-After; another embed token is unaffected; a server-to-server token does 500 requests unthrottled; a
 * checkout session gets 50 on its fields (POST and PUT) and card details together, counted per session id. The limit is the setting's
 * (ENUMERATION_RATE_LIMIT_PER_MINUTE, 50). See enumeration-limit.support.ts for how "the 51st" is asserted.
 */
import { randomUUID } from 'node:crypto';
import { signToken } from '@switchyard/testing';
import { card, startHarness, type Harness } from '../../services/standalone/src/transactions.harness';
import {
  expectLimited,
  expectNeverLimited,
  fetchAnswer,
  LIMIT,
  sendUntilRefused,
  type Answer,
} from './enumeration-limit.support';

const account = 'edge';
let h: Harness;
let integration: { kid: string; privateKeyPem: string };

beforeAll(async () => {
  h = await startHarness('enumeration-limit', { env: { ENUMERATION_RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
  await h.createAccount(account);
  await h.createConnection(account);
  // The integration role grants `embed`: its server mints embed tokens for the browser.
  const key = await h.fixture.service.identity.apiKeyPairs.create(
    { display_name: 'shop backend', roles: ['integration'] },
    { kind: 'operator' },
  );
  integration = { kid: key.kid, privateKeyPem: key.private_key! };
});
afterAll(() => h?.stop());

const embedToken = () => signToken({ ...integration, scopes: ['embed'], expiresIn: 600 });
const serverToken = () =>
  signToken({
    ...integration,
    scopes: ['transactions.write', 'gift-cards.read', 'gift-cards.write', 'checkout-sessions.write'],
    expiresIn: 600,
  });

const post = (label: string, path: string, token: string | null, body: unknown, method = 'POST'): Promise<Answer> =>
  fetchAnswer(label, `${h.baseUrl}${path}`, {
    method,
    headers: {
      'content-type': 'application/json',
      'x-service-merchant-account-id': account,
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });

const giftCard = { number: '7000001234567890123', pin: '1234' };

/** The three endpoints in turn; the first transaction is a real card payment, the others name an unknown session. */
const acrossTheThree =
  (token: string) =>
  (index: number): Promise<Answer> => {
    switch (index % 3) {
      case 0:
        return post('balances', '/gift-cards/balances', token, { items: [giftCard] });
      case 1:
        return post('gift-cards', '/gift-cards', token, giftCard);
      default:
        return post('transactions', '/transactions', token, {
          amount: 1299,
          currency: 'USD',
          payment_method: index === 2 ? card() : { method: 'checkout-session', id: randomUUID() },
        });
    }
  };

describe('an embed token', () => {
  it('gets 50 requests across the three endpoints together; the 51st is 429 with Retry-After', async () => {
    const token = await embedToken();
    const run = await sendUntilRefused(acrossTheThree(token), { refusals: 3 });
    expectLimited(run);
    // The endpoints answered for themselves until then: a payment, and refusals of their own (no gift card service, unknown session).
    expect(run.answers[2]!.status).toBe(201);
    expect(new Set(run.answers.slice(0, LIMIT).map((answer) => answer.status))).toEqual(new Set([201, 400]));
    // Each of the three endpoints refuses once the token's one bucket is empty.
    expect(new Set(run.answers.filter((answer) => answer.status === 429).map((answer) => answer.label))).toEqual(
      new Set(['balances', 'gift-cards', 'transactions']),
    );
  });

  it('does not touch a second embed token of the same key', async () => {
    const first = await embedToken();
    const second = await embedToken();
    expectLimited(await sendUntilRefused(acrossTheThree(first)));
    expectLimited(await sendUntilRefused(acrossTheThree(second)));
  });
});

describe('a server-to-server token', () => {
  it('does 500 requests across the three endpoints, never throttled', async () => {
    const token = await serverToken();
    const answers: Answer[] = [];
    for (let index = 0; index < 500; index += 1) answers.push(await acrossTheThree(token)(index + 3));
    expectNeverLimited(answers);
    expect(answers).toHaveLength(500);
  });
});

describe('a checkout session', () => {
  const newSession = async (): Promise<string> => {
    const created = await post('create session', '/checkout/sessions', await serverToken(), {});
    expect(created.status).toBe(201);
    return (created.body as { id: string }).id;
  };
  /** From the secure fields in the buyer's browser, without a token: fields by POST and PUT, and the card details lookup. */
  const fieldsOf =
    (session: string) =>
    (index: number): Promise<Answer> => {
      switch (index % 3) {
        case 0:
          return post('fields POST', `/checkout/sessions/${session}/fields`, null, {
            payment_method: card({ security_code: undefined }),
          });
        case 1:
          return post(
            'fields PUT',
            `/checkout/sessions/${session}/fields`,
            null,
            { payment_method: card({ security_code: undefined }) },
            'PUT',
          );
        default:
          return fetchAnswer('card details', `${h.baseUrl}/checkout/sessions/${session}/card-details?bin=411111`, {});
      }
    };

  it('gets 50 requests (fields by POST and PUT, card details) together, without a token; the 51st is 429', async () => {
    const session = await newSession();
    const run = await sendUntilRefused(fieldsOf(session), { refusals: 3 });
    expectLimited(run);
    expect(new Set(run.answers.slice(0, LIMIT).map((answer) => answer.status))).toEqual(new Set([204, 200]));
    expect(new Set(run.answers.filter((answer) => answer.status === 429).map((answer) => answer.label))).toEqual(
      new Set(['fields POST', 'fields PUT', 'card details']),
    );
  });

  it('is counted per session id: another session, and the embed tokens, are apart', async () => {
    const session = await newSession();
    expectLimited(await sendUntilRefused(fieldsOf(session)));
    const other = await newSession();
    expect((await fieldsOf(other)(0)).status).toBe(204);
    // The session's bucket is not an embed token's: a fresh token still has its whole burst.
    expectLimited(await sendUntilRefused(acrossTheThree(await embedToken())));
  });
});
