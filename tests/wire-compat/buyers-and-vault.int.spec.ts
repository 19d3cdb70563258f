/**
 * The vault's records through the existing client (`@gr4vy/sdk` 1.10.18): buyers with their shipping details, payment
 * methods and gift cards; stored payment methods and their network tokens (with cryptograms); gift cards and their
 * balances; digital wallets. Every answer passes the client's own schemas; its pagination walks our cursors.
 */
import type { Gr4vy } from '@gr4vy/sdk';
import { Error400 } from '@gr4vy/sdk/models/errors/error400.js';
import { Error404 } from '@gr4vy/sdk/models/errors/error404.js';
import { HTTPValidationError } from '@gr4vy/sdk/models/errors/httpvalidationerror.js';
import { CLIENT_TEST_CARD, startWireRuntime, walkPages, type WireRuntime } from './wire-client';

let w: WireRuntime;
let client: Gr4vy;
const account = 'wire-vault';

beforeAll(async () => {
  w = await startWireRuntime('buyers-and-vault');
  await w.client().merchantAccounts.create({ id: account, displayName: 'Vault' });
  // The client has no `network_tokens_enabled` on merchant accounts (ours does): set it on the wire.
  const enabled = await fetch(`${w.baseUrl}/merchant-accounts/${account}`, {
    method: 'PUT',
    headers: { ...w.harness.headers(), 'content-type': 'application/json' },
    body: JSON.stringify({ network_tokens_enabled: true }),
  });
  expect(enabled.status).toBe(200);
  client = w.client(account);
});
afterAll(() => w?.stop());

const billingDetails = {
  firstName: 'Ada',
  lastName: 'Lovelace',
  emailAddress: 'ada@example.com',
  phoneNumber: '+442071838750',
  address: { city: 'London', country: 'GB', postalCode: 'N1 9GU', line1: '10 Example Street' },
  taxId: { value: 'GB123456789', kind: 'gb.vat' as const },
};

describe('buyers', () => {
  it('create, get, update, list (walked page by page, searched, by external identifier) and delete', async () => {
    const created = [];
    for (const name of ['Ada', 'Grace', 'Alan']) {
      created.push(
        await client.buyers.create({
          displayName: name,
          externalIdentifier: `buyer-${name.toLowerCase()}`,
          billingDetails,
        }),
      );
    }
    const ada = created[0]!;
    expect(ada).toMatchObject({
      merchantAccountId: account,
      displayName: 'Ada',
      externalIdentifier: 'buyer-ada',
      billingDetails: { firstName: 'Ada', taxId: { kind: 'gb.vat' } },
    });
    expect(await client.buyers.get(ada.id!)).toEqual(ada);
    const updated = await client.buyers.update({ displayName: 'Ada L.', accountNumber: 'acct-1' }, ada.id!);
    expect(updated).toMatchObject({
      id: ada.id,
      displayName: 'Ada L.',
      accountNumber: 'acct-1',
      externalIdentifier: 'buyer-ada',
    });

    const walked = await walkPages(await client.buyers.list({ limit: 2 }));
    expect(walked.pages).toBe(2);
    expect(walked.items.map((buyer) => buyer.id).sort()).toEqual(created.map((buyer) => buyer.id).sort());
    expect(
      (await client.buyers.list({ externalIdentifier: 'buyer-grace' })).result.items.map((buyer) => buyer.displayName),
    ).toEqual(['Grace']);
    expect((await client.buyers.list({ search: 'Alan' })).result.items.map((buyer) => buyer.displayName)).toEqual([
      'Alan',
    ]);

    await client.buyers.delete(created[2]!.id!);
    await expect(client.buyers.get(created[2]!.id!)).rejects.toBeInstanceOf(Error404);
  });

  it('shipping details: create, list, get, update, delete', async () => {
    const buyer = await client.buyers.create({ displayName: 'Shipper' });
    const address = { city: 'Paris', country: 'FR', postalCode: '75001', line1: '1 Rue de Rivoli' };
    const created = await client.buyers.shippingDetails.create(
      { firstName: 'Sam', lastName: 'Shipper', emailAddress: 'sam@example.com', address },
      buyer.id!,
    );
    expect(created).toMatchObject({ buyerId: buyer.id, firstName: 'Sam', address: { city: 'Paris' } });
    expect((await client.buyers.shippingDetails.list(buyer.id!)).items.map((details) => details.id)).toEqual([
      created.id,
    ]);
    expect(await client.buyers.shippingDetails.get(buyer.id!, created.id!)).toEqual(created);
    const updated = await client.buyers.shippingDetails.update({ phoneNumber: '+33142000000' }, buyer.id!, created.id!);
    expect(updated).toMatchObject({ id: created.id, phoneNumber: '+33142000000', firstName: 'Sam' });
    await client.buyers.shippingDetails.delete(buyer.id!, created.id!);
    expect((await client.buyers.shippingDetails.list(buyer.id!)).items).toEqual([]);
  });

  it('refuses a malformed body with the client’s 422 model, naming the field', async () => {
    const refused = client.buyers.create({ displayName: 'x'.repeat(1001) });
    await expect(refused).rejects.toBeInstanceOf(HTTPValidationError);
    await expect(refused).rejects.toMatchObject({ detail: [{ loc: ['body', 'display_name'] }] });
  });
});

describe('payment methods', () => {
  it('create (card, checkout session), get, list (walked, filtered), the buyer’s list, and delete', async () => {
    const buyer = await client.buyers.create({ displayName: 'Card holder', externalIdentifier: 'holder-1' });
    const card = await client.paymentMethods.create({
      method: 'card',
      ...CLIENT_TEST_CARD,
      buyerId: buyer.id!,
      externalIdentifier: 'pm-1',
    });
    expect(card).toMatchObject({
      method: 'card',
      status: 'succeeded',
      label: '1111',
      scheme: 'visa',
      expirationDate: '11/30',
      buyer: { id: buyer.id },
    });
    const other = await client.paymentMethods.create({
      method: 'card',
      number: '5555555555554444',
      expirationDate: '10/29',
      buyerExternalIdentifier: 'holder-1',
    });
    const session = await client.checkoutSessions.create();
    const attached = await fetch(`${w.baseUrl}/checkout/sessions/${session.id}/fields`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ payment_method: { method: 'card', number: '378282246310005', expiration_date: '09/29' } }),
    });
    expect(attached.status).toBe(204);
    const fromSession = await client.paymentMethods.create({ method: 'checkout-session', id: session.id });
    expect(fromSession).toMatchObject({ method: 'card', scheme: 'amex', label: '0005' });

    expect(await client.paymentMethods.get(card.id)).toEqual(card);
    const walked = await walkPages(await client.paymentMethods.list({ limit: 1 }));
    expect(walked.pages).toBe(3);
    expect(walked.items.map((method) => method.id).sort()).toEqual([card.id, other.id, fromSession.id].sort());
    expect((await client.paymentMethods.list({ buyerId: buyer.id! })).result.items).toHaveLength(2);
    expect(
      (await client.paymentMethods.list({ externalIdentifier: 'pm-1' })).result.items.map((method) => method.id),
    ).toEqual([card.id]);
    expect(
      (await client.paymentMethods.list({ status: ['succeeded'], buyerExternalIdentifier: 'holder-1' })).result.items,
    ).toHaveLength(2);
    const ofBuyer = await client.buyers.paymentMethods.list({ buyerId: buyer.id! });
    expect(ofBuyer.items.map((method) => method.id).sort()).toEqual([card.id, other.id].sort());

    await client.paymentMethods.delete(other.id);
    await expect(client.paymentMethods.get(other.id)).rejects.toBeInstanceOf(Error404);
  });

  it('network tokens: create, list, cryptogram, suspend, resume, delete', async () => {
    const card = await client.paymentMethods.create({ method: 'card', ...CLIENT_TEST_CARD });
    const token = await client.paymentMethods.networkTokens.create(
      { merchantInitiated: false, isSubsequentPayment: false },
      card.id,
    );
    expect(token).toMatchObject({
      paymentMethodId: card.id,
      status: 'active',
      expirationDate: expect.stringMatching(/^\d{2}\/\d{2}$/),
    });
    expect(token.token).not.toBe(CLIENT_TEST_CARD.number);
    expect((await client.paymentMethods.networkTokens.list(card.id)).items.map((item) => item.id)).toEqual([token.id]);
    const cryptogram = await client.paymentMethods.networkTokens.cryptogram.create(
      { merchantInitiated: false },
      card.id,
      token.id,
    );
    expect(cryptogram.cryptogram).toMatch(/^[A-Za-z0-9+/]{27}=$/);
    expect(await client.paymentMethods.networkTokens.suspend(card.id, token.id)).toMatchObject({
      id: token.id,
      status: 'suspended',
    });
    await expect(
      client.paymentMethods.networkTokens.cryptogram.create({ merchantInitiated: false }, card.id, token.id),
    ).rejects.toBeInstanceOf(Error400);
    expect(await client.paymentMethods.networkTokens.resume(card.id, token.id)).toMatchObject({
      id: token.id,
      status: 'active',
    });
    await client.paymentMethods.networkTokens.delete(card.id, token.id);
    expect((await client.paymentMethods.networkTokens.list(card.id)).items.map((item) => item.status)).not.toContain(
      'active',
    );
  });
});

describe('gift cards', () => {
  it('create, get, list (walked), balances (stored and by number), the buyer’s list, and delete', async () => {
    await client.paymentServices.create({
      displayName: 'Gift cards',
      paymentServiceDefinitionId: 'mock-gift-card',
      fields: [{ key: 'merchant_id', value: 'wire' }],
      acceptedCurrencies: ['USD'],
      acceptedCountries: ['US'],
    });
    const buyer = await client.buyers.create({ displayName: 'Gifted' });
    const first = await client.giftCards.create({ number: '6060601234567890', pin: '05000', buyerId: buyer.id! });
    expect(first).toMatchObject({ merchantAccountId: account, bin: '606060', last4: '7890', buyer: { id: buyer.id } });
    const second = await client.giftCards.create({ number: '6060601234567891', pin: '02500' });
    expect(await client.giftCards.get(first.id)).toEqual(first);

    const walked = await walkPages(await client.giftCards.list({ limit: 1 }));
    expect(walked.pages).toBe(2);
    expect(walked.items.map((card) => card.id).sort()).toEqual([first.id, second.id].sort());
    const balances = await client.giftCards.balances.list({
      items: [{ id: first.id }, { number: '6060609999999999', pin: '01000' }],
    });
    expect(balances.items).toEqual([
      expect.objectContaining({ id: first.id, balance: 5000, last4: '7890' }),
      expect.objectContaining({ balance: 1000, last4: '9999' }),
    ]);
    expect((await client.buyers.giftCards.list(undefined, buyer.id!)).items.map((card) => card.id)).toEqual([first.id]);
    await client.giftCards.delete(second.id);
    await expect(client.giftCards.get(second.id)).rejects.toBeInstanceOf(Error404);
  });
});

describe('digital wallets', () => {
  it('create, get, list, update and delete', async () => {
    const wallet = await client.digitalWallets.create({
      provider: 'apple',
      merchantName: 'Wire Shop',
      merchantUrl: 'https://shop.example',
      merchantCountryCode: 'US',
      domainNames: ['shop.example'],
      acceptTermsAndConditions: true,
    });
    expect(wallet).toMatchObject({
      provider: 'apple',
      merchantName: 'Wire Shop',
      domainNames: ['shop.example'],
      merchantAccountId: account,
    });
    expect(await client.digitalWallets.get(wallet.id)).toEqual(wallet);
    expect((await client.digitalWallets.list()).items.map((item) => item.id)).toEqual([wallet.id]);
    const updated = await client.digitalWallets.update(
      { merchantDisplayName: 'Wire', domainNames: ['shop.example', 'www.shop.example'] },
      wallet.id,
    );
    expect(updated).toMatchObject({ merchantDisplayName: 'Wire', domainNames: ['shop.example', 'www.shop.example'] });
    await client.digitalWallets.delete(wallet.id);
    await expect(client.digitalWallets.get(wallet.id)).rejects.toBeInstanceOf(Error404);
  });

  it('never answered a card number', () => {
    expect(w.harness.leaks).toEqual([]);
  });
});
