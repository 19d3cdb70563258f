/**
 * Merchant accounts with their 3-D Secure configurations, payment service definitions, payment services (the
 * connections) and account updater jobs, through the existing client (`@gr4vy/sdk` 1.10.18). Every answer passes
 * the client's own schemas, and its pagination walks our cursors to the last page.
 */
import { Gr4vy } from '@gr4vy/sdk';
import { Error404 } from '@gr4vy/sdk/models/errors/error404.js';
import { CLIENT_TEST_CARD, OUR_MERCHANT_HEADER, startWireRuntime, walkPages, type WireRuntime } from './wire-client';

let w: WireRuntime;

beforeAll(async () => {
  w = await startWireRuntime('accounts-and-services');
});
afterAll(() => w?.stop());

describe('the merchant account header', () => {
  it('reaches the server under our name: the client’s own name selects nothing', async () => {
    // Spec wins: the header is x-service-merchant-account-id; a hook renames the client's x-gr4vy-merchant-account-id.
    const account = await w.merchantAccountWithConnection();
    const before = w.sent.length;
    const mine = await w.client(account).paymentServices.list();
    expect(mine.result.items.map((service) => service.merchantAccountId)).toEqual([account]);
    expect(w.sent.slice(before)).toEqual([
      { method: 'GET', path: '/payment-services', ourHeader: account, clientHeader: null },
    ]);

    // Without the hook the client's header name is not ours: the request is the default merchant account's.
    const unhooked = new Gr4vy({
      serverURL: w.baseUrl,
      merchantAccountId: account,
      bearerAuth: w.harness.headers().authorization!.slice('Bearer '.length),
    });
    const theirs = await unhooked.paymentServices.list();
    expect(theirs.result.items.map((service) => service.id)).not.toContain(mine.result.items[0]?.id);
    expect(theirs.result.items.every((service) => service.merchantAccountId === 'default')).toBe(true);
    expect(OUR_MERCHANT_HEADER).toBe('x-service-merchant-account-id');
  });
});

describe('merchant accounts', () => {
  it('create, get, update and list (walked page by page) answer what the client validates', async () => {
    const admin = w.client();
    const ids = ['wire-ma-1', 'wire-ma-2', 'wire-ma-3'];
    for (const id of ids) {
      const created = await admin.merchantAccounts.create({
        id,
        displayName: `Account ${id}`,
        overCaptureAmount: 500,
        visaNetworkTokensRequestorId: 'visa-req',
      });
      expect(created).toMatchObject({
        id,
        displayName: `Account ${id}`,
        accountUpdaterEnabled: false,
        overCaptureAmount: 500,
        visaNetworkTokensRequestorId: 'visa-req',
      });
    }
    expect(await admin.merchantAccounts.get('wire-ma-1')).toMatchObject({
      id: 'wire-ma-1',
      asyncNetworkTokensEnabled: false,
    });
    const updated = await admin.merchantAccounts.update(
      { displayName: 'Renamed', accountUpdaterEnabled: true },
      'wire-ma-1',
    );
    expect(updated).toMatchObject({ id: 'wire-ma-1', displayName: 'Renamed', accountUpdaterEnabled: true });

    const walked = await walkPages(await admin.merchantAccounts.list(undefined, 2));
    expect(walked.pages).toBeGreaterThan(1);
    expect(walked.items.map((account) => account.id)).toEqual(expect.arrayContaining(['default', ...ids]));
    expect(new Set(walked.items.map((account) => account.id)).size).toBe(walked.items.length);
    const searched = await admin.merchantAccounts.list(undefined, 20, 'wire-ma-2');
    expect(searched.result.items.map((account) => account.id)).toContain('wire-ma-2');
    await expect(admin.merchantAccounts.get('no-such-account')).rejects.toBeInstanceOf(Error404);
  });

  it('3-D Secure configurations: create, list (all, by currency), update, delete', async () => {
    const admin = w.client();
    await admin.merchantAccounts.create({ id: 'wire-3ds', displayName: '3DS' });
    const profile = {
      merchantAcquirerBin: '400000',
      merchantAcquirerId: 'acq-1',
      merchantName: 'Wire Shop',
      merchantCountryCode: 'GB',
      merchantCategoryCode: '5999',
      merchantUrl: 'https://shop.example',
      scheme: 'visa' as const,
      metadata: { team: 'payments' },
    };
    const usd = await admin.merchantAccounts.threeDsConfiguration.create({ ...profile, currency: 'USD' }, 'wire-3ds');
    expect(usd).toMatchObject({
      merchantAccountId: 'wire-3ds',
      scheme: 'visa',
      currency: 'USD',
      metadata: { team: 'payments' },
    });
    await admin.merchantAccounts.threeDsConfiguration.create(
      { ...profile, scheme: 'mastercard', currency: 'EUR' },
      'wire-3ds',
    );

    expect((await admin.merchantAccounts.threeDsConfiguration.list('wire-3ds')).items).toHaveLength(2);
    const euro = await admin.merchantAccounts.threeDsConfiguration.list('wire-3ds', 'EUR');
    expect(euro.items.map((configuration) => configuration.currency)).toEqual(['EUR']);
    const renamed = await admin.merchantAccounts.threeDsConfiguration.update(
      { merchantName: 'Wire Shop Ltd' },
      'wire-3ds',
      usd.id,
    );
    expect(renamed).toMatchObject({ id: usd.id, merchantName: 'Wire Shop Ltd', currency: 'USD' });
    await admin.merchantAccounts.threeDsConfiguration.delete('wire-3ds', usd.id);
    expect(
      (await admin.merchantAccounts.threeDsConfiguration.list('wire-3ds')).items.map(
        (configuration) => configuration.id,
      ),
    ).not.toContain(usd.id);
  });
});

describe('payment service definitions', () => {
  it('list (walked page by page) and get answer what the client validates', async () => {
    const client = w.client();
    const walked = await walkPages(await client.paymentServiceDefinitions.list(undefined, 1));
    expect(walked.pages).toBe(walked.items.length);
    expect(walked.items.map((definition) => definition.id)).toEqual(
      expect.arrayContaining(['mock-card', 'mock-gift-card', 'mock-paypal']),
    );
    const card = await client.paymentServiceDefinitions.get('mock-card');
    expect(card).toMatchObject({ id: 'mock-card', method: 'card', mode: 'card', fields: [{ key: 'merchant_id' }] });
    expect(card.configuration).toEqual({
      approvalUiTarget: 'any',
      approvalUiHeight: expect.stringMatching(/^\d+px$/),
      approvalUiWidth: expect.stringMatching(/^\d+px$/),
      cartItemsLimit: 249,
      cartItemsRequired: false,
      cartItemsShouldMatchAmount: false,
    });
    await expect(client.paymentServiceDefinitions.get('no-such-definition')).rejects.toBeInstanceOf(Error404);
  });
});

describe('payment services', () => {
  it('create, get, update, list (walked page by page, filtered) and delete pass the client’s validation', async () => {
    const account = 'wire-ps';
    await w.client().merchantAccounts.create({ id: account, displayName: 'Connections' });
    const client = w.client(account);
    const fields = [{ key: 'merchant_id', value: 'wire' }];
    const created = [];
    for (const name of ['Cards A', 'Cards B', 'Cards C']) {
      created.push(
        await client.paymentServices.create({
          displayName: name,
          paymentServiceDefinitionId: 'mock-card',
          fields,
          acceptedCurrencies: ['USD'],
          acceptedCountries: ['US'],
        }),
      );
    }
    expect(created[0]).toMatchObject({
      merchantAccountId: account,
      method: 'card',
      active: true,
      isDeleted: false,
      acceptedCurrencies: ['USD'],
    });
    expect(await client.paymentServices.get(created[0]!.id!)).toMatchObject({
      id: created[0]!.id,
      displayName: 'Cards A',
    });
    const updated = await client.paymentServices.update(
      { displayName: 'Cards A2', acceptedCountries: ['US', 'GB'], position: 1 },
      created[0]!.id!,
    );
    expect(updated).toMatchObject({ displayName: 'Cards A2', acceptedCountries: ['US', 'GB'] });

    const walked = await walkPages(await client.paymentServices.list({ limit: 2 }));
    expect(walked.pages).toBe(2);
    expect(walked.items.map((service) => service.id).sort()).toEqual(created.map((service) => service.id).sort());
    expect((await client.paymentServices.list({ method: 'paypal' })).result.items).toEqual([]);

    await client.paymentServices.delete(created[2]!.id!);
    expect((await client.paymentServices.list()).result.items.map((service) => service.id)).not.toContain(
      created[2]!.id,
    );
    expect((await client.paymentServices.list({ deleted: true })).result.items.map((service) => service.id)).toContain(
      created[2]!.id,
    );
  });
});

describe('account updater jobs', () => {
  it('201 with the job when a method was scheduled, 204 when none was', async () => {
    await w.client().merchantAccounts.create({ id: 'wire-au', displayName: 'Updater', accountUpdaterEnabled: true });
    const client = w.client('wire-au');
    const stored = await client.paymentMethods.create({ method: 'card', ...CLIENT_TEST_CARD });
    const job = await client.accountUpdater.jobs.create({ paymentMethodIds: [stored.id] });
    expect(job).toMatchObject({ merchantAccountId: 'wire-au', inquiries: [{ paymentMethodId: stored.id }] });
    const none = await client.accountUpdater.jobs.create({
      paymentMethodIds: ['00000000-0000-4000-8000-000000000009'],
    });
    expect(none).toBeUndefined();
  });

  it('never answered a card number', () => {
    expect(w.harness.leaks).toEqual([]);
  });
});
