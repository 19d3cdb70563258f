/**
 * The resources the fuzz aims at, created through the API before it starts, so that path parameters name ids
 * that exist: a merchant account with a card connection and a `mock-gift-card` connection, transactions in
 * several states (authorized, captured with a partial refund, refunded, voided, declined, split with gift cards,
 * one whose payment service was deleted), a stored gift card, flow rules, a 3-D Secure configuration, a webhook
 * subscription with a secret and deliveries, API key pairs — and decoys of each kind that DELETE requests may remove
 * (the fixtures above stay: the fuzz keeps reaching deep into the flows).
 */
import { hs256WithPublicKey, signToken, swapPayload, tamperSignature, unsignedToken } from '@switchyard/testing';
import { TEST_PANS, type Harness } from '../../../services/standalone/src/transactions.harness';
import type { WebhookReceiver } from '../../../services/standalone/src/webhooks.receiver';
import type { KnownIssueIds } from './known-issues';

export const FUZZ_ACCOUNT = 'fuzz';
export const OTHER_ACCOUNT = 'fuzz-other';

export interface FuzzFixtures {
  readonly token: string;
  readonly hostileAuthorizations: readonly string[];
  readonly idsByName: Record<string, readonly string[]>;
  readonly deletableIdsByName: Record<string, readonly string[]>;
  readonly allIds: readonly string[];
  /** Card numbers the simulator accepts (the test cards). */
  readonly cardNumbers: readonly string[];
  /** Every gift card number the fixtures used (the fuzz sends `cardNumbers` as gift card numbers too). */
  readonly giftCardNumbers: readonly string[];
  readonly knownIssueIds: KnownIssueIds;
}

type Json = Record<string, any>;

export async function createFuzzFixtures(h: Harness, receiver: WebhookReceiver): Promise<FuzzFixtures> {
  const key = await h.fixture.service.identity.apiKeyPairs.create(
    { display_name: 'fuzz', roles: ['administrator'] },
    { kind: 'operator' },
  );
  const token = await signToken({
    kid: key.kid,
    privateKeyPem: key.private_key!,
    scopes: ['*.read', '*.write'],
    expiresIn: 4 * 3600,
  });
  const headers = (account: string | null = FUZZ_ACCOUNT) => ({
    authorization: `Bearer ${token}`,
    ...(account ? { 'x-service-merchant-account-id': account } : {}),
  });
  const call = async (
    method: 'get' | 'post' | 'put',
    path: string,
    body: unknown,
    expected: number,
    account: string | null = FUZZ_ACCOUNT,
  ): Promise<Json> => {
    const request = h.http()[method](path).set(headers(account));
    const response = await (body === undefined ? request : request.send(body as object));
    if (response.status !== expected)
      throw new Error(`${method.toUpperCase()} ${path} answered ${response.status}: ${response.text.slice(0, 500)}`);
    return response.body as Json;
  };
  const post = (path: string, body: unknown, expected = 201, account: string | null = FUZZ_ACCOUNT) =>
    call('post', path, body, expected, account);
  const get = (path: string, account: string | null = FUZZ_ACCOUNT) => call('get', path, undefined, 200, account);

  await h.createAccount(FUZZ_ACCOUNT);
  await h.createAccount(OTHER_ACCOUNT);
  const cardConnection = await h.createConnection(FUZZ_ACCOUNT);
  const decoyConnections = [
    await h.createConnection(FUZZ_ACCOUNT, { display_name: 'Decoy A', active: false }),
    await h.createConnection(FUZZ_ACCOUNT, { display_name: 'Decoy B', active: false }),
  ];
  const giftCardConnection = (
    await post('/payment-services', {
      display_name: 'Gift cards',
      payment_service_definition_id: 'mock-gift-card',
      fields: [{ key: 'merchant_id', value: 'sim-fuzz-gc' }],
      accepted_currencies: ['USD', 'EUR'],
      accepted_countries: ['US', 'DE'],
    })
  ).id as string;
  const otherConnection = await h.createConnection(OTHER_ACCOUNT);

  await h.createThreeDsConfiguration(FUZZ_ACCOUNT);
  await h.createThreeDsConfiguration(FUZZ_ACCOUNT, { scheme: 'mastercard' });
  const threeDs = ((await get(`/merchant-accounts/${FUZZ_ACCOUNT}/three-ds-configurations`, null)).items as Json[]).map(
    (item) => item.id as string,
  );

  // Rules that never match an ordinary fuzz amount.
  const rules = [
    await h.createFlowRule(FUZZ_ACCOUNT, {
      action: 'decline-early',
      conditions: [{ name: 'amount', operator: 'equal', value: 424_242 }],
    }),
    await h.createFlowRule(FUZZ_ACCOUNT, {
      action: 'skip-3ds',
      conditions: [{ name: 'amount', operator: 'equal', value: 434_343 }],
    }),
  ];

  const subscription = (await post('/webhook-subscriptions', { url: receiver.url }, 201)).id as string;
  const decoySubscription = (await post('/webhook-subscriptions', { url: `${receiver.url}/decoy`, active: false }, 201))
    .id as string;
  const secrets = [
    (await post(`/webhook-subscriptions/${subscription}/secrets`, undefined, 201)).id as string,
    (await post(`/webhook-subscriptions/${decoySubscription}/secrets`, undefined, 201)).id as string,
  ];

  // Gift card numbers the simulator has not seen; a PIN starting with 0 holds its value (05000 → 50.00).
  let serial = 7_000;
  const giftCardNumbersUsed: string[] = [];
  const giftCardNumber = () => {
    const number = `60339${String(serial++).padStart(11, '0')}`;
    giftCardNumbersUsed.push(number);
    return number;
  };
  const gift = (amount: number) => ({ number: giftCardNumber(), pin: '05000', amount });
  // The vault: buyers, stored payment methods, a checkout session with card fields, a digital wallet.
  const buyerId = (await post('/buyers', { display_name: 'Fuzz buyer', external_identifier: 'fuzz-buyer' }))
    .id as string;
  const decoyBuyer = (await post('/buyers', { display_name: 'Decoy buyer' })).id as string;
  const shippingDetails = (
    await post(`/buyers/${buyerId}/shipping-details`, { first_name: 'Fuzz', address: { country: 'US' } })
  ).id as string;
  const paymentMethod = (
    await post('/payment-methods', {
      method: 'card',
      number: '4111111111111111',
      expiration_date: '12/30',
      buyer_id: buyerId,
    })
  ).id as string;
  const decoyPaymentMethod = (
    await post('/payment-methods', { method: 'card', number: '5555555555554444', expiration_date: '12/30' })
  ).id as string;
  const checkoutSession = (await post('/checkout/sessions', {})).id as string;
  const decoySession = (await post('/checkout/sessions', { amount: 1_000, currency: 'USD' })).id as string;
  const wallet = (
    await post('/digital-wallets', {
      provider: 'google',
      merchant_name: 'Fuzz shop',
      accept_terms_and_conditions: true,
    })
  ).id as string;
  const decoyWallet = (
    await post('/digital-wallets', {
      provider: 'apple',
      merchant_name: 'Decoy shop',
      domain_names: ['fuzz.example.com'],
      accept_terms_and_conditions: true,
    })
  ).id as string;
  const storedGiftCard = (await post('/gift-cards', { number: giftCardNumber(), pin: '05000', buyer_id: buyerId }))
    .id as string;
  const decoyGiftCard = (await post('/gift-cards', { number: giftCardNumber(), pin: '05000' })).id as string;

  const authorized = await h.authorize(FUZZ_ACCOUNT, { amount: 5_000 });
  const partlyCaptured = await h.authorize(FUZZ_ACCOUNT, { amount: 5_000 });
  await post(`/transactions/${partlyCaptured.id}/capture`, { amount: 3_000, final: false }, 200, FUZZ_ACCOUNT);
  const partRefund = await post(`/transactions/${partlyCaptured.id}/refunds`, { amount: 1_000 });
  const captured = await h.authorize(FUZZ_ACCOUNT, { amount: 2_000, intent: 'capture' });
  const fullRefund = await post(`/transactions/${captured.id}/refunds/all`, {});
  const voided = await h.authorize(FUZZ_ACCOUNT, { amount: 4_000 });
  await post(`/transactions/${voided.id}/void`, undefined, 200);
  const declined = await h.authorize(FUZZ_ACCOUNT, { amount: 200_011 });
  const split = await h.authorize(FUZZ_ACCOUNT, { amount: 3_000, intent: 'capture', gift_cards: [gift(1_000)] });
  const giftOnly = await h.authorize(FUZZ_ACCOUNT, {
    amount: 1_500,
    intent: 'capture',
    gift_cards: [gift(1_000), gift(500)],
    payment_method: null,
  });
  const otherAccountTransaction = await h.authorize(OTHER_ACCOUNT, { amount: 1_234 });
  // A captured transaction whose payment service is deleted afterwards.
  const doomedConnection = await h.createConnection(FUZZ_ACCOUNT, {
    display_name: 'Deleted later',
    position: 1_000_000,
  });
  const orphaned = await h.authorize(FUZZ_ACCOUNT, {
    amount: 2_500,
    intent: 'capture',
    payment_service_id: doomedConnection,
  });
  const deleted = await h.http().delete(`/payment-services/${doomedConnection}`).set(headers());
  if (deleted.status !== 204)
    throw new Error(
      `DELETE /payment-services/${doomedConnection} answered ${deleted.status}: ${deleted.text.slice(0, 300)}`,
    );
  const redemptions = [
    ...((split.gift_card_redemptions as Json[] | undefined) ?? []),
    ...((giftOnly.gift_card_redemptions as Json[] | undefined) ?? []),
  ].map((r) => r.id as string);
  const captureIds = ((await get(`/transactions/${partlyCaptured.id}/captures`)).items as Json[]).map(
    (c) => c.id as string,
  );
  const refundIds = [
    partRefund.id as string,
    ...((fullRefund.items as Json[] | undefined) ?? []).map((r) => r.id as string),
  ];

  const deliveries = await waitForDeliveries(h, subscription, headers());

  const roleList = (await get('/roles', null)).items as Json[];
  const roles = roleList.map((role) => role.id as string);
  const integrationRole = roleList.find((role) => role.slug === 'integration')?.id as string;
  const decoyKeys: string[] = [];
  // Made by the operator: over the API only a key-manager key may (an administrator key is refused: spec rule 6).
  for (const name of ['decoy-1', 'decoy-2', 'decoy-3']) {
    decoyKeys.push(
      (
        await h.fixture.service.identity.apiKeyPairs.create(
          { display_name: name, roles: [integrationRole] },
          { kind: 'operator' },
        )
      ).id,
    );
  }

  const transactions = [authorized, partlyCaptured, captured, voided, declined, split, giftOnly, orphaned].map(
    (t) => t.id,
  );
  const idsByName: Record<string, readonly string[]> = {
    merchant_account_id: [FUZZ_ACCOUNT, OTHER_ACCOUNT, 'default'],
    payment_service_id: [cardConnection, giftCardConnection, ...decoyConnections],
    payment_service_definition_id: ['mock-card', 'mock-gift-card', 'mock-paypal'],
    transaction_id: transactions,
    capture_id: captureIds,
    refund_id: refundIds,
    rule_id: rules,
    flow: ['card-transaction'],
    gift_card_id: [storedGiftCard],
    subscription_id: [subscription, decoySubscription],
    secret_id: secrets,
    delivery_id: deliveries,
    three_ds_configuration_id: threeDs,
    api_key_pair_id: decoyKeys,
    role_id: roles,
    buyer_id: [buyerId],
    payment_method_id: [paymentMethod],
    shipping_details_id: [shippingDetails],
    session_id: [checkoutSession],
    digital_wallet_id: [wallet],
    target_id: redemptions,
  };
  const deletableIdsByName: Record<string, readonly string[]> = {
    ...idsByName,
    payment_service_id: decoyConnections,
    rule_id: [rules[1]!],
    gift_card_id: [decoyGiftCard],
    subscription_id: [decoySubscription],
    secret_id: [secrets[1]!],
    three_ds_configuration_id: [threeDs[1]!],
    buyer_id: [decoyBuyer],
    payment_method_id: [decoyPaymentMethod],
    session_id: [decoySession],
    digital_wallet_id: [decoyWallet],
  };
  const allIds = [
    ...new Set([
      ...Object.values(idsByName).flat(),
      otherConnection,
      doomedConnection,
      otherAccountTransaction.id,
      key.id,
    ]),
  ];

  const forgedKid = key.kid;
  const readOnly = await signToken({
    kid: key.kid,
    privateKeyPem: key.private_key!,
    scopes: ['*.read'],
    expiresIn: 4 * 3600,
  });
  const embed = await signToken({
    kid: key.kid,
    privateKeyPem: key.private_key!,
    scopes: ['embed'],
    expiresIn: 4 * 3600,
  });
  const expired = await signToken({ kid: key.kid, privateKeyPem: key.private_key!, iatOffset: -7_200, expiresIn: 60 });
  const notYet = await signToken({ kid: key.kid, privateKeyPem: key.private_key!, nbfOffset: 3_600, expiresIn: 7_200 });
  const noScopes = await signToken({ kid: key.kid, privateKeyPem: key.private_key!, scopes: [], expiresIn: 4 * 3600 });
  const oddScopes = await signToken({
    kid: key.kid,
    privateKeyPem: key.private_key!,
    scopes: ['admin', '*', '*.*', 'transactions.write.all'],
    expiresIn: 4 * 3600,
  });
  const hostileAuthorizations = [
    'Bearer',
    'Bearer ',
    'Basic dXNlcjpwYXNzd29yZA==',
    'Digest username="x"',
    `bearer ${token}`,
    `Bearer  ${token}  `,
    `Bearer ${token} ${token}`,
    `Token ${token}`,
    token,
    'Bearer a.b.c',
    'Bearer ...',
    'Bearer eyJhbGciOiJub25lIn0.e30.',
    `Bearer ${unsignedToken(forgedKid, ['*.read', '*.write'])}`,
    `Bearer ${hs256WithPublicKey(key.private_key!, forgedKid, ['*.read', '*.write'])}`,
    `Bearer ${tamperSignature(token)}`,
    `Bearer ${swapPayload(token, { scopes: ['*.read', '*.write', 'embed'], exp: 9_999_999_999 })}`,
    `Bearer ${token.split('.').slice(0, 2).join('.')}`,
    `Bearer ${token}.extra`,
    `Bearer ${readOnly}`,
    `Bearer ${embed}`,
    `Bearer ${expired}`,
    `Bearer ${notYet}`,
    `Bearer ${noScopes}`,
    `Bearer ${oddScopes}`,
    `Bearer ${'a'.repeat(9_000)}`,
    `Bearer ${Buffer.from('{"alg":"ES512","kid":"../../etc/passwd"}').toString('base64url')}.${Buffer.from('{}').toString('base64url')}.AAAA`,
    `Bearer ${Buffer.from(`{"alg":"ES512","kid":${JSON.stringify('x'.repeat(5_000))}}`).toString('base64url')}.e30.AAAA`,
    `Bearer ${Buffer.from('{"alg":"ES512","kid":{"$ne":null}}').toString('base64url')}.e30.AAAA`,
    `Bearer ${Buffer.from('[]').toString('base64url')}.${Buffer.from('[]').toString('base64url')}.`,
    `Bearer ${Buffer.from('\u00ff\u00fe').toString('base64url')}.e30.e30`,
  ];

  return {
    token,
    hostileAuthorizations,
    idsByName,
    deletableIdsByName,
    allIds,
    cardNumbers: TEST_PANS,
    giftCardNumbers: giftCardNumbersUsed,
    knownIssueIds: {
      giftCardServiceId: giftCardConnection,
      giftCardOnlyTransactionId: giftOnly.id,
      orphanedTransactionId: orphaned.id,
    },
  };
}

async function waitForDeliveries(h: Harness, subscription: string, headers: Record<string, string>): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const response = await h.http().get(`/webhook-subscriptions/${subscription}/deliveries`).set(headers);
    const ids = ((response.body.items as Json[] | undefined) ?? []).map((d) => d.id as string);
    if (ids.length > 0) return ids.slice(0, 5);
    if (Date.now() > deadline)
      throw new Error(`no webhook delivery within 10 s: ${response.status} ${response.text.slice(0, 300)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
