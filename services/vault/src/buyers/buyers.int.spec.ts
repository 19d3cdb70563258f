/**
 * The buyers slice over a real store and read model: create, read, list, update, delete, shipping details, the
 * read model rebuilt from the log, `resolve` for other slices, the delete hook, and the external identifier's
 * uniqueness — across two processes on one store, and after crashes that left a claim behind.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from '@switchyard/api';
import type { BuyerCreateInput } from '@switchyard/contracts';
import type { EventStore, NewEvent } from '@switchyard/eventstore';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { ServiceHost } from '@switchyard/service';
import { externalIdentifierClaimStream } from './buyer-external-identifier';
import { buyerStream } from './buyer';
import { Buyers } from './buyers.slice';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';

const shopA = { merchant_account_id: 'shop-a' };
const shopB = { merchant_account_id: 'shop-b' };

interface Process {
  storage: ServiceStorage;
  host: ServiceHost;
  buyers: Buyers;
  deleted: string[];
}

let dir: string;
let main: Process;
let others: Process[];
let clock = Date.parse('2026-01-01T00:00:00.000Z');
let onDeleteFailure: Error | null;

/** A transactions process on the test's data directory: its own connection, host, read model and delete hook. */
async function open(wrap: (store: EventStore) => EventStore = (store) => store): Promise<Process> {
  const storage = openServiceStorage('transactions', { dataDir: dir });
  const host = new ServiceHost({ store: wrap(storage.store), db: storage.db, now: () => new Date((clock += 1000)) });
  const deleted: string[] = [];
  const buyers = new Buyers(host.context, {
    onDelete: async (merchantAccountId, buyerId) => {
      if (onDeleteFailure) throw onDeleteFailure;
      deleted.push(`${merchantAccountId}/${buyerId}`);
    },
  });
  host.add(buyers);
  await host.catchUp();
  return { storage, host, buyers, deleted };
}

beforeEach(async () => {
  dir = createTestDataDir('buyers');
  onDeleteFailure = null;
  main = await open();
  others = [];
});
afterEach(async () => {
  for (const process of [main, ...others]) {
    await process.host.stop();
    await process.storage.close();
  }
  removeTestDataDir(dir);
});

const create = (body: BuyerCreateInput = {}, scope = shopA, on = main) => on.buyers.create({ ...scope, body });

const rejection = async (promise: Promise<unknown> | (() => unknown)): Promise<ApiError> => {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
};

const streamEvents = async (streamId: string) =>
  (await main.storage.store.readStream(streamId)).map(({ type, data }) => ({ type, data }));

const billing = {
  first_name: 'Ada',
  last_name: 'Lovelace',
  email_address: 'ada@example.com',
  phone_number: '+441234567890',
  address: { city: 'London', country: 'GB', postal_code: 'N1 9GU', line1: '1 Analytical Row' },
  tax_id: { value: 'GB123456789', kind: 'gb.vat' as const },
};
const storedAddress = {
  city: 'London',
  country: 'GB',
  postal_code: 'N1 9GU',
  state: null,
  state_code: null,
  house_number_or_name: null,
  line1: '1 Analytical Row',
  line2: null,
  organization: null,
};

describe('a buyer', () => {
  it('is created with every field, stored normalised, and read back', async () => {
    const buyer = await create({
      display_name: 'Ada Lovelace',
      external_identifier: 'cust-1',
      billing_details: billing,
      account_number: 'ACC-1',
    });
    expect(buyer).toEqual({
      type: 'buyer',
      id: expect.any(String),
      merchant_account_id: 'shop-a',
      display_name: 'Ada Lovelace',
      external_identifier: 'cust-1',
      billing_details: { ...billing, address: storedAddress },
      account_number: 'ACC-1',
      created_at: expect.any(String),
      updated_at: buyer.created_at,
    });
    expect(main.buyers.get({ ...shopA, buyer_id: buyer.id })).toEqual(buyer);
    expect(await streamEvents(buyerStream(buyer.id))).toEqual([
      {
        type: 'BuyerCreated',
        data: {
          id: buyer.id,
          merchantAccountId: 'shop-a',
          displayName: 'Ada Lovelace',
          externalIdentifier: 'cust-1',
          billingDetails: { ...billing, address: storedAddress },
          accountNumber: 'ACC-1',
          at: buyer.created_at,
        },
      },
    ]);
  });

  it('does not exist under another merchant account', async () => {
    const buyer = await create({ display_name: 'Ada' });
    expect((await rejection(() => main.buyers.get({ ...shopB, buyer_id: buyer.id }))).status).toBe(404);
    expect(
      (await rejection(main.buyers.update({ ...shopB, buyer_id: buyer.id, body: { display_name: 'x' } }))).status,
    ).toBe(404);
    expect((await rejection(main.buyers.delete({ ...shopB, buyer_id: buyer.id }))).status).toBe(404);
    expect(main.buyers.find('shop-b', buyer.id)).toBeNull();
    expect(main.buyers.list({ ...shopB, limit: 20 }).items).toEqual([]);
  });

  it('changes only the fields sent; null clears; the event holds what changed', async () => {
    const buyer = await create({
      display_name: 'Ada',
      external_identifier: 'cust-1',
      billing_details: billing,
      account_number: 'ACC-1',
    });
    const updated = await main.buyers.update({
      ...shopA,
      buyer_id: buyer.id,
      body: { display_name: 'Ada L.', account_number: null, external_identifier: 'cust-1' },
    });
    expect(updated).toEqual({ ...buyer, display_name: 'Ada L.', account_number: null, updated_at: expect.any(String) });
    expect(updated.updated_at > buyer.updated_at).toBe(true);
    const events = await streamEvents(buyerStream(buyer.id));
    expect(events[1]).toEqual({
      type: 'BuyerUpdated',
      data: {
        id: buyer.id,
        merchantAccountId: 'shop-a',
        displayName: 'Ada L.',
        accountNumber: null,
        at: updated.updated_at,
      },
    });

    // Billing details are replaced as a whole.
    const replaced = await main.buyers.update({
      ...shopA,
      buyer_id: buyer.id,
      body: { billing_details: { email_address: 'lovelace@example.com' } },
    });
    expect(replaced.billing_details).toEqual({
      first_name: null,
      last_name: null,
      email_address: 'lovelace@example.com',
      phone_number: null,
      address: null,
      tax_id: null,
    });
    const cleared = await main.buyers.update({
      ...shopA,
      buyer_id: buyer.id,
      body: { billing_details: null, display_name: null },
    });
    expect(cleared).toMatchObject({ billing_details: null, display_name: null, external_identifier: 'cust-1' });

    // Nothing changed: nothing appended, updated_at stays.
    const before = (await streamEvents(buyerStream(buyer.id))).length;
    expect(await main.buyers.update({ ...shopA, buyer_id: buyer.id, body: { display_name: null } })).toEqual(cleared);
    expect(await main.buyers.update({ ...shopA, buyer_id: buyer.id, body: {} })).toEqual(cleared);
    expect(await streamEvents(buyerStream(buyer.id))).toHaveLength(before);
  });

  it('is deleted after the delete hook ran, with its shipping details; then everything on it is a 404', async () => {
    const buyer = await create({ display_name: 'Ada', external_identifier: 'cust-1' });
    const shipping = await main.buyers.createShippingDetails({
      ...shopA,
      buyer_id: buyer.id,
      body: { first_name: 'Ada' },
    });
    await main.buyers.delete({ ...shopA, buyer_id: buyer.id });
    expect(main.deleted).toEqual([`shop-a/${buyer.id}`]);
    const types = (await streamEvents(buyerStream(buyer.id))).map((event) => event.type);
    expect(types).toEqual(['BuyerCreated', 'ShippingDetailsAdded', 'BuyerDeleted']);

    const ref = { ...shopA, buyer_id: buyer.id };
    expect((await rejection(() => main.buyers.get(ref))).status).toBe(404);
    expect((await rejection(main.buyers.update({ ...ref, body: { display_name: 'x' } }))).status).toBe(404);
    expect((await rejection(main.buyers.delete(ref))).status).toBe(404);
    expect((await rejection(() => main.buyers.listShippingDetails(ref))).status).toBe(404);
    expect(
      (await rejection(() => main.buyers.getShippingDetails({ ...ref, shipping_details_id: shipping.id }))).status,
    ).toBe(404);
    expect((await rejection(main.buyers.createShippingDetails({ ...ref, body: {} }))).status).toBe(404);
    expect(main.buyers.find('shop-a', buyer.id)).toBeNull();
    expect(main.buyers.findByExternalIdentifier('shop-a', 'cust-1')).toBeNull();
    expect(main.storage.db.prepare('SELECT count(*) AS n FROM buyer_shipping_details').get()).toEqual({ n: 0 });
    expect(main.deleted).toHaveLength(1);
  });

  it('stays when the delete hook fails (a 500); the retry deletes it', async () => {
    const buyer = await create({ external_identifier: 'cust-1' });
    onDeleteFailure = new Error('payment methods unreachable');
    const failed = await rejection(main.buyers.delete({ ...shopA, buyer_id: buyer.id }));
    expect(failed.status).toBe(500);
    expect(failed.message).toBe('Request could not be processed');
    expect(main.buyers.get({ ...shopA, buyer_id: buyer.id })).toEqual(buyer);
    expect((await rejection(create({ external_identifier: 'cust-1' }))).status).toBe(409);

    onDeleteFailure = null;
    await main.buyers.delete({ ...shopA, buyer_id: buyer.id });
    expect(main.deleted).toEqual([`shop-a/${buyer.id}`]);
    expect((await streamEvents(buyerStream(buyer.id))).map((event) => event.type)).toEqual([
      'BuyerCreated',
      'BuyerDeleted',
    ]);
  });
});

describe('listing', () => {
  it('pages newest first and filters by exact external identifier or a case-insensitive search', async () => {
    const made = [];
    for (const [display_name, external_identifier] of [
      ['Zoë Ångström', 'ext-ZOE'],
      ['Ada Lovelace', 'cust-ada'],
      ['Grace Hopper', null],
      ['Alan Turing', 'CUST-turing'],
      [null, 'zoe-2'],
    ] as const) {
      made.push(await create({ display_name, external_identifier }));
    }
    const ids = (items: readonly { id: string }[]) => items.map((item) => item.id);
    const newestFirst = ids([...made].reverse());

    const first = main.buyers.list({ ...shopA, limit: 2 });
    expect(ids(first.items)).toEqual(newestFirst.slice(0, 2));
    expect(first.previous_cursor).toBeNull();
    const second = main.buyers.list({ ...shopA, limit: 2, cursor: first.next_cursor });
    expect(ids(second.items)).toEqual(newestFirst.slice(2, 4));
    const third = main.buyers.list({ ...shopA, limit: 2, cursor: second.next_cursor });
    expect(ids(third.items)).toEqual(newestFirst.slice(4));
    expect(third.next_cursor).toBeNull();
    expect(ids(main.buyers.list({ ...shopA, limit: 2, cursor: third.previous_cursor }).items)).toEqual(
      newestFirst.slice(2, 4),
    );

    expect(ids(main.buyers.list({ ...shopA, limit: 20, external_identifier: 'cust-ada' }).items)).toEqual([
      made[1]!.id,
    ]);
    expect(main.buyers.list({ ...shopA, limit: 20, external_identifier: 'CUST-ADA' }).items).toEqual([]); // exact
    expect(ids(main.buyers.list({ ...shopA, limit: 20, search: 'cust' }).items)).toEqual([made[3]!.id, made[1]!.id]);
    expect(ids(main.buyers.list({ ...shopA, limit: 20, search: 'ZOË' }).items)).toEqual([made[0]!.id]);
    expect(ids(main.buyers.list({ ...shopA, limit: 20, search: 'zoe' }).items)).toEqual([made[4]!.id, made[0]!.id]);
    expect(ids(main.buyers.list({ ...shopA, limit: 20, search: 'hopp' }).items)).toEqual([made[2]!.id]);
    expect(ids(main.buyers.list({ ...shopA, limit: 20, search: '%' }).items)).toEqual([]); // no wildcards
    expect(ids(main.buyers.list({ ...shopA, limit: 20, search: 'a', external_identifier: 'cust-ada' }).items)).toEqual([
      made[1]!.id,
    ]);
  });
});

describe('shipping details', () => {
  it('are added, read, listed oldest first, changed field by field and removed', async () => {
    const buyer = await create({ display_name: 'Ada' });
    const ref = { ...shopA, buyer_id: buyer.id };
    const home = await main.buyers.createShippingDetails({
      ...ref,
      body: { first_name: 'Ada', address: { line1: '1 Analytical Row', country: 'GB' } },
    });
    expect(home).toEqual({
      type: 'shipping-details',
      id: expect.any(String),
      buyer_id: buyer.id,
      first_name: 'Ada',
      last_name: null,
      email_address: null,
      phone_number: null,
      address: { ...storedAddress, city: null, postal_code: null },
    });
    const work = await main.buyers.createShippingDetails({ ...ref, body: { last_name: 'Lovelace' } });
    expect(main.buyers.listShippingDetails(ref)).toEqual({ items: [home, work] });

    const changed = await main.buyers.updateShippingDetails({
      ...ref,
      shipping_details_id: home.id,
      body: { first_name: null, phone_number: '+441234567890' },
    });
    expect(changed).toEqual({ ...home, first_name: null, phone_number: '+441234567890' });
    const events = await streamEvents(buyerStream(buyer.id));
    expect(events.at(-1)).toEqual({
      type: 'ShippingDetailsUpdated',
      data: {
        buyerId: buyer.id,
        merchantAccountId: 'shop-a',
        shippingDetailsId: home.id,
        first_name: null,
        phone_number: '+441234567890',
        at: expect.any(String),
      },
    });

    await main.buyers.deleteShippingDetails({ ...ref, shipping_details_id: home.id });
    expect(main.buyers.listShippingDetails(ref)).toEqual({ items: [work] });
    expect(
      (await rejection(() => main.buyers.getShippingDetails({ ...ref, shipping_details_id: home.id }))).status,
    ).toBe(404);
    expect(
      (await rejection(main.buyers.updateShippingDetails({ ...ref, shipping_details_id: home.id, body: {} }))).status,
    ).toBe(404);
    expect((await rejection(main.buyers.deleteShippingDetails({ ...ref, shipping_details_id: home.id }))).status).toBe(
      404,
    );
  });

  it('are reachable only under their own buyer and merchant account', async () => {
    const ada = await create({ display_name: 'Ada' });
    const grace = await create({ display_name: 'Grace' });
    const shipping = await main.buyers.createShippingDetails({
      ...shopA,
      buyer_id: ada.id,
      body: { first_name: 'Ada' },
    });
    const underGrace = { ...shopA, buyer_id: grace.id, shipping_details_id: shipping.id };
    expect((await rejection(() => main.buyers.getShippingDetails(underGrace))).status).toBe(404);
    expect(
      (await rejection(main.buyers.updateShippingDetails({ ...underGrace, body: { first_name: 'x' } }))).status,
    ).toBe(404);
    expect((await rejection(main.buyers.deleteShippingDetails(underGrace))).status).toBe(404);
    expect(
      (
        await rejection(() =>
          main.buyers.getShippingDetails({ ...shopB, buyer_id: ada.id, shipping_details_id: shipping.id }),
        )
      ).status,
    ).toBe(404);
    expect(main.buyers.getShippingDetails({ ...shopA, buyer_id: ada.id, shipping_details_id: shipping.id })).toEqual(
      shipping,
    );
  });
});

describe('the read model', () => {
  it('is rebuilt from the events alone into the same rows', async () => {
    const ada = await create({ display_name: 'Ada', external_identifier: 'cust-1', billing_details: billing });
    const grace = await create({ display_name: 'Grace', external_identifier: 'cust-2' });
    const gone = await create({ display_name: 'Gone', external_identifier: 'cust-3' });
    await main.buyers.update({
      ...shopA,
      buyer_id: ada.id,
      body: { external_identifier: 'cust-9', account_number: 'ACC' },
    });
    const shipping = await main.buyers.createShippingDetails({
      ...shopA,
      buyer_id: grace.id,
      body: { first_name: 'Grace' },
    });
    await main.buyers.updateShippingDetails({
      ...shopA,
      buyer_id: grace.id,
      shipping_details_id: shipping.id,
      body: { last_name: 'Hopper' },
    });
    await main.buyers.createShippingDetails({ ...shopA, buyer_id: gone.id, body: {} });
    await main.buyers.delete({ ...shopA, buyer_id: gone.id });

    const rows = () => ({
      buyers: main.storage.db.prepare('SELECT * FROM buyers ORDER BY id').all(),
      shipping: main.storage.db.prepare('SELECT * FROM buyer_shipping_details ORDER BY id').all(),
    });
    const before = rows();
    expect(before.buyers).toHaveLength(2);
    expect(before.shipping).toHaveLength(1);
    main.storage.db.exec(
      "DELETE FROM buyers; DELETE FROM buyer_shipping_details; DELETE FROM checkpoints WHERE name = 'projection:buyers'",
    );
    expect(rows().buyers).toHaveLength(0);
    await main.host.catchUp();
    expect(rows()).toEqual(before);
  });
});

describe('resolve (for other slices)', () => {
  it('finds the buyer by id or external identifier, null when none is named', async () => {
    const buyer = await create({ external_identifier: 'cust-1' });
    const view = main.buyers.find('shop-a', buyer.id);
    expect(view).toMatchObject({ id: buyer.id, merchantAccountId: 'shop-a', externalIdentifier: 'cust-1' });
    expect(main.buyers.resolve('shop-a', { buyer_id: buyer.id }, '/buyer_id')).toEqual(view);
    expect(
      main.buyers.resolve(
        'shop-a',
        { buyer_external_identifier: 'cust-1', buyer_id: null },
        '/buyer_external_identifier',
      ),
    ).toEqual(view);
    expect(main.buyers.resolve('shop-a', {}, '')).toBeNull();
    expect(main.buyers.resolve('shop-a', { buyer_id: null, buyer_external_identifier: null }, '')).toBeNull();
  });

  it('refuses an unknown buyer, another account’s, or both fields, with the detail at the pointer', async () => {
    const buyer = await create({ external_identifier: 'cust-1' });
    const unknown = await rejection(() =>
      main.buyers.resolve('shop-a', { buyer_id: randomUUID() }, '/payment_method/buyer_id'),
    );
    expect(unknown).toMatchObject({
      status: 400,
      code: 'bad_request',
      details: [
        expect.objectContaining({ location: 'body', pointer: '/payment_method/buyer_id', type: 'buyer_not_found' }),
      ],
    });
    const otherAccount = await rejection(() =>
      main.buyers.resolve('shop-b', { buyer_external_identifier: 'cust-1' }, '/buyer_external_identifier'),
    );
    expect(otherAccount.details).toEqual([
      expect.objectContaining({ pointer: '/buyer_external_identifier', type: 'buyer_not_found' }),
    ]);
    const both = await rejection(() =>
      main.buyers.resolve('shop-a', { buyer_id: buyer.id, buyer_external_identifier: 'cust-1' }, '/buyer_id'),
    );
    expect(both).toMatchObject({
      status: 400,
      details: [expect.objectContaining({ pointer: '/buyer_id', type: 'mutually_exclusive' })],
    });
  });
});

describe('the external identifier', () => {
  it('is unique per merchant account: a second buyer is a 409 naming the holder', async () => {
    const first = await create({ external_identifier: 'cust-1' });
    const second = await rejection(create({ external_identifier: 'cust-1', display_name: 'Other' }));
    expect(second).toMatchObject({ status: 409, code: 'duplicate_record', resourceId: first.id });
    expect(second.message).toMatch(/cust-1/);
    expect(second.toBody()).toMatchObject({
      resource_id: first.id,
      details: [expect.objectContaining({ pointer: '/external_identifier' })],
    });
    await create({ external_identifier: 'cust-1' }, shopB); // another account's buyers are apart

    const other = await create({ external_identifier: 'cust-2' });
    const taken = await rejection(
      main.buyers.update({ ...shopA, buyer_id: other.id, body: { external_identifier: 'cust-1' } }),
    );
    expect(taken).toMatchObject({ status: 409, resourceId: first.id });
    expect(main.buyers.get({ ...shopA, buyer_id: other.id }).external_identifier).toBe('cust-2');
    expect(main.buyers.list({ ...shopA, limit: 20 }).items).toHaveLength(2);
  });

  it('is free again once its buyer changes it, clears it or is deleted', async () => {
    const ada = await create({ external_identifier: 'cust-1' });
    await main.buyers.update({ ...shopA, buyer_id: ada.id, body: { external_identifier: 'cust-2' } });
    const reuse = await create({ external_identifier: 'cust-1' });
    expect((await rejection(create({ external_identifier: 'cust-2' }))).resourceId).toBe(ada.id);

    await main.buyers.update({ ...shopA, buyer_id: ada.id, body: { external_identifier: null } });
    const second = await create({ external_identifier: 'cust-2' });
    await main.buyers.delete({ ...shopA, buyer_id: reuse.id });
    await create({ external_identifier: 'cust-1' });
    // And back: the buyer who dropped an identifier may take a free one again.
    await main.buyers.delete({ ...shopA, buyer_id: second.id });
    expect(
      (await main.buyers.update({ ...shopA, buyer_id: ada.id, body: { external_identifier: 'cust-2' } }))
        .external_identifier,
    ).toBe('cust-2');
  });

  it('holds when two processes create buyers with it at once: one 201, one 409', async () => {
    const other = await open();
    others.push(other);
    for (let round = 0; round < 5; round += 1) {
      const value = `race-${round}`;
      const results = await Promise.allSettled([
        create({ external_identifier: value }),
        create({ external_identifier: value }, shopA, other),
      ]);
      const created = results.filter((result) => result.status === 'fulfilled');
      const refused = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as ApiError] : []));
      expect(created).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(refused[0]).toMatchObject({ status: 409, code: 'duplicate_record' });
      await main.host.catchUp();
      expect(main.buyers.list({ ...shopA, limit: 20, external_identifier: value }).items).toHaveLength(1);
    }
  });

  it('holds when a create and an update race for it, and when two updates do', async () => {
    const other = await open();
    others.push(other);
    for (let round = 0; round < 5; round += 1) {
      const value = `race-${round}`;
      const [ada, grace] = [
        await create({ external_identifier: `ada-${round}` }),
        await create({ external_identifier: `grace-${round}` }),
      ];
      const results = await Promise.allSettled([
        main.buyers.update({ ...shopA, buyer_id: ada.id, body: { external_identifier: value } }),
        other.buyers.update({ ...shopA, buyer_id: grace.id, body: { external_identifier: value } }),
        create({ external_identifier: value }, shopA, round % 2 === 0 ? main : other),
      ]);
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
      await main.host.catchUp();
      expect(main.buyers.list({ ...shopA, limit: 100, external_identifier: value }).items).toHaveLength(1);
      // The losers kept their own identifiers.
      const holders = main.buyers.list({ ...shopA, limit: 100 }).items.map((buyer) => buyer.external_identifier);
      expect(new Set(holders).size).toBe(holders.length);
    }
  });

  it('stays claimed by its buyer while two processes flip the buyer between two identifiers', async () => {
    const other = await open();
    others.push(other);
    const ada = await create({ external_identifier: 'flip-a' });
    const ref = { ...shopA, buyer_id: ada.id };
    const holder = (value: string) =>
      main.storage.store.readStream(externalIdentifierClaimStream('shop-a', value)).then((events) => {
        const last = events.at(-1);
        return last?.type === 'BuyerExternalIdentifierClaimed' ? (last.data as { buyerId: string }).buyerId : null;
      });
    for (let round = 0; round < 10; round += 1) {
      // Conflicts may refuse some of them (409 "retry"); none may leave the buyer's identifier unclaimed.
      await Promise.allSettled([
        main.buyers.update({ ...ref, body: { external_identifier: 'flip-b' } }),
        other.buyers.update({ ...ref, body: { external_identifier: 'flip-a' } }),
        main.buyers.update({ ...ref, body: { external_identifier: 'flip-a' } }),
        other.buyers.update({ ...ref, body: { external_identifier: 'flip-b' } }),
      ]);
      await main.host.catchUp();
      const current = main.buyers.get(ref).external_identifier!;
      expect(await holder(current)).toBe(ada.id);
      expect((await rejection(create({ external_identifier: current }))).resourceId).toBe(ada.id);
    }
  });

  it('stays claimed when the buyer takes it back while its release is under way', async () => {
    // Process 1 holds its release of cust-a just before the append, until process 2 has taken cust-a back.
    let holdRelease: Promise<void> | null = null;
    let releaseHeld!: () => void;
    let released!: () => void;
    const releaseReached = new Promise<void>((resolve) => (released = resolve));
    const held = (store: EventStore): EventStore =>
      new Proxy(store, {
        get(target, property, receiver) {
          if (property !== 'append') return Reflect.get(target, property, receiver) as unknown;
          return async (
            streamId: string,
            events: readonly NewEvent[],
            options: Parameters<EventStore['append']>[2],
          ) => {
            if (
              holdRelease &&
              streamId === externalIdentifierClaimStream('shop-a', 'cust-a') &&
              events[0]?.type === 'BuyerExternalIdentifierReleased'
            ) {
              released();
              await holdRelease;
            }
            return target.append(streamId, events, options);
          };
        },
      });
    const first = await open(held);
    const second = await open();
    others.push(first, second);
    const ada = await create({ external_identifier: 'cust-a' }, shopA, first);
    holdRelease = new Promise((resolve) => (releaseHeld = resolve));

    const moving = first.buyers.update({ ...shopA, buyer_id: ada.id, body: { external_identifier: 'cust-b' } });
    await releaseReached; // cust-b is set, cust-a fenced, its release not yet appended
    const back = await second.buyers.update({ ...shopA, buyer_id: ada.id, body: { external_identifier: 'cust-a' } });
    expect(back.external_identifier).toBe('cust-a');
    releaseHeld();
    await moving;

    const holder = (await streamEvents(externalIdentifierClaimStream('shop-a', 'cust-a'))).at(-1);
    expect(holder).toMatchObject({ type: 'BuyerExternalIdentifierClaimed', data: { buyerId: ada.id } });
    expect((await rejection(create({ external_identifier: 'cust-a' }))).resourceId).toBe(ada.id);
    await create({ external_identifier: 'cust-b' }); // released by the second change
  });

  it('left claimed by a create that died before its buyer was stored is taken over, and that stream closed', async () => {
    const orphan = randomUUID();
    await main.storage.store.append(
      externalIdentifierClaimStream('shop-a', 'cust-1'),
      [
        {
          type: 'BuyerExternalIdentifierClaimed',
          data: {
            merchantAccountId: 'shop-a',
            externalIdentifier: 'cust-1',
            buyerId: orphan,
            at: '2026-01-01T00:00:00.000Z',
          },
        },
      ],
      { expectedRevision: 'no_stream' },
    );
    const buyer = await create({ external_identifier: 'cust-1' });
    expect(buyer.external_identifier).toBe('cust-1');
    expect((await streamEvents(buyerStream(orphan))).map((event) => event.type)).toEqual([
      'ExternalIdentifierClaimFenced',
    ]);
    expect(
      (await streamEvents(externalIdentifierClaimStream('shop-a', 'cust-1'))).map((event) => [
        event.type,
        (event.data as { buyerId: string }).buyerId,
      ]),
    ).toEqual([
      ['BuyerExternalIdentifierClaimed', orphan],
      ['BuyerExternalIdentifierReleased', orphan],
      ['BuyerExternalIdentifierClaimed', buyer.id],
    ]);
  });

  it('left claimed by a change or a delete that died before releasing it is taken over', async () => {
    const claimStream = externalIdentifierClaimStream('shop-a', 'cust-1');
    const ada = await create({ external_identifier: 'cust-1' });
    // A change that stopped after its event: the buyer moved on to cust-2, its claim on cust-1 was never released.
    await main.storage.store.append(
      buyerStream(ada.id),
      [
        {
          type: 'BuyerUpdated',
          data: {
            id: ada.id,
            merchantAccountId: 'shop-a',
            externalIdentifier: 'cust-2',
            at: '2026-01-02T00:00:00.000Z',
          },
        },
      ],
      {
        expectedRevision: 0,
      },
    );
    await main.storage.store.append(
      externalIdentifierClaimStream('shop-a', 'cust-2'),
      [
        {
          type: 'BuyerExternalIdentifierClaimed',
          data: {
            merchantAccountId: 'shop-a',
            externalIdentifier: 'cust-2',
            buyerId: ada.id,
            at: '2026-01-02T00:00:00.000Z',
          },
        },
      ],
      { expectedRevision: 'no_stream' },
    );
    const grace = await create({ external_identifier: 'cust-1' });
    expect((await streamEvents(claimStream)).at(-1)?.data).toMatchObject({ buyerId: grace.id });
    expect((await rejection(create({ external_identifier: 'cust-2' }))).resourceId).toBe(ada.id); // in use: never taken

    // A delete that stopped after `BuyerDeleted`.
    await main.storage.store.append(
      buyerStream(grace.id),
      [
        {
          type: 'BuyerDeleted',
          data: {
            id: grace.id,
            merchantAccountId: 'shop-a',
            externalIdentifier: 'cust-1',
            at: '2026-01-03T00:00:00.000Z',
          },
        },
      ],
      {
        expectedRevision: 0,
      },
    );
    const third = await create({ external_identifier: 'cust-1' });
    expect((await streamEvents(claimStream)).at(-1)?.data).toMatchObject({ buyerId: third.id });
  });
});
