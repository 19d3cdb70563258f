/**
 * Issue 6 item 2 acceptance (buyers), over HTTP on the embedded runtime: create → get → list (paging, exact external
 * identifier, search) → update (only the fields sent, null clears) → delete (204, then 404 everywhere), shipping
 * details CRUD, merchant accounts apart, 409 on a second buyer with an external identifier, 422 bodies, scopes.
 */
import { randomUUID } from 'node:crypto';
import { expectErrorBody, signToken } from '@switchyard/testing';
import { ACCOUNT_HEADER, isoWithOffset, startHarness, type Harness } from './transactions.harness';

let h: Harness;
const account = 'buyers';
const otherAccount = 'buyers-other';

beforeAll(async () => {
  h = await startHarness('buyers');
  await h.createAccount(account);
  await h.createAccount(otherAccount);
});

afterAll(() => h?.stop());

type Body = Record<string, unknown>;
const post = (url: string, body: unknown, acct = account) =>
  h
    .http()
    .post(url)
    .set(h.headers(acct))
    .send(body as object);
const put = (url: string, body: unknown, acct = account) =>
  h
    .http()
    .put(url)
    .set(h.headers(acct))
    .send(body as object);
const get = (url: string, acct = account) => h.http().get(url).set(h.headers(acct));
const del = (url: string, acct = account) => h.http().delete(url).set(h.headers(acct));

const createBuyer = async (body: Body, acct = account): Promise<Body & { id: string }> => {
  const response = await post('/buyers', body, acct);
  if (response.status !== 201) throw new Error(`POST /buyers answered ${response.status}: ${response.text}`);
  return response.body;
};

/** A token of a new API key with `roles`, carrying only `scopes`. */
async function tokenWith(roles: string[], scopes: string[]): Promise<Record<string, string>> {
  const key = await h.fixture.service.identity.apiKeyPairs.create(
    { display_name: `scopes ${scopes.join(' ')}`, roles },
    { kind: 'operator' },
  );
  const token = await signToken({ kid: key.kid, privateKeyPem: key.private_key!, scopes, expiresIn: 600 });
  return { authorization: `Bearer ${token}`, [ACCOUNT_HEADER]: account };
}

const billingDetails = {
  first_name: 'Ada',
  last_name: 'Lovelace',
  email_address: 'ada@example.com',
  phone_number: '+442071234567',
  address: { city: 'London', country: 'GB', postal_code: 'N1 9GU', line1: '1 Analytical Row' },
  tax_id: { value: 'GB123456789', kind: 'gb.vat' },
};
const fullAddress = {
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

describe('POST /buyers and GET /buyers/{buyer_id}', () => {
  it('creates a buyer (201) with billing details and reads it back', async () => {
    const response = await post('/buyers', {
      display_name: 'Ada Lovelace',
      external_identifier: 'http-ada',
      billing_details: billingDetails,
      account_number: 'ACC-7',
    }).expect(201);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual({
      type: 'buyer',
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      merchant_account_id: account,
      display_name: 'Ada Lovelace',
      external_identifier: 'http-ada',
      billing_details: { ...billingDetails, address: fullAddress },
      account_number: 'ACC-7',
      created_at: expect.stringMatching(isoWithOffset),
      updated_at: expect.stringMatching(isoWithOffset),
    });
    const read = await get(`/buyers/${response.body.id}`).expect(200);
    expect(read.body).toEqual(response.body);
  });

  it('creates a buyer from an empty body, every field null', async () => {
    const empty = await createBuyer({});
    expect(empty).toMatchObject({
      display_name: null,
      external_identifier: null,
      billing_details: null,
      account_number: null,
    });
  });

  it('answers 404 for an unknown buyer and for another merchant account’s, 422 for an id that is not a UUID', async () => {
    const buyer = await createBuyer({ display_name: 'Mine' });
    expectErrorBody((await get(`/buyers/${randomUUID()}`).expect(404)).body, 404, 'not_found');
    expectErrorBody((await get(`/buyers/${buyer.id}`, otherAccount).expect(404)).body, 404, 'not_found');
    await put(`/buyers/${buyer.id}`, { display_name: 'Theirs' }, otherAccount).expect(404);
    await del(`/buyers/${buyer.id}`, otherAccount).expect(404);
    const malformed = await get('/buyers/not-a-uuid').expect(422);
    expect(malformed.body.detail[0]).toMatchObject({ loc: ['path', 'buyer_id'] });
  });
});

describe('the external identifier', () => {
  it('is unique in the merchant account: a second buyer is 409 duplicate_record with the holder as resource_id', async () => {
    const first = await createBuyer({ external_identifier: 'http-dup' });
    const second = await post('/buyers', { external_identifier: 'http-dup', display_name: 'Again' }).expect(409);
    expect(second.body).toEqual({
      type: 'error',
      code: 'duplicate_record',
      status: 409,
      message: expect.stringContaining('http-dup'),
      details: [
        { location: 'body', pointer: '/external_identifier', message: expect.any(String), type: 'duplicate_record' },
      ],
      resource_id: first.id,
    });
    await createBuyer({ external_identifier: 'http-dup' }, otherAccount);

    const other = await createBuyer({ external_identifier: 'http-other' });
    const moved = await put(`/buyers/${other.id}`, { external_identifier: 'http-dup' }).expect(409);
    expect(moved.body.resource_id).toBe(first.id);
  });

  it('is free again after its buyer changed it or was deleted', async () => {
    const first = await createBuyer({ external_identifier: 'http-reuse' });
    await put(`/buyers/${first.id}`, { external_identifier: 'http-reuse-2' }).expect(200);
    const second = await createBuyer({ external_identifier: 'http-reuse' });
    await del(`/buyers/${second.id}`).expect(204);
    await createBuyer({ external_identifier: 'http-reuse' });
  });
});

describe('GET /buyers', () => {
  const prefix = `list-${randomUUID().slice(0, 8)}`;
  let made: (Body & { id: string })[] = [];

  beforeAll(async () => {
    made = [];
    for (const [displayName, external] of [
      ['Grace Hopper', `${prefix}-grace`],
      ['Alan Turing', `${prefix}-ALAN`],
      ['Katherine Johnson', `${prefix}-kj`],
    ]) {
      made.push(await createBuyer({ display_name: displayName, external_identifier: external }, otherAccount));
    }
  });

  it('pages newest first with limit, next_cursor and previous_cursor', async () => {
    const ids = (body: { items: { id: string }[] }) => body.items.map((item) => item.id);
    const newestFirst = made.map((buyer) => buyer.id).reverse();
    const first = (await get(`/buyers?limit=2&search=${prefix}`, otherAccount).expect(200)).body;
    expect(first).toEqual({
      items: expect.any(Array),
      limit: 2,
      next_cursor: expect.any(String),
      previous_cursor: null,
    });
    expect(ids(first)).toEqual(newestFirst.slice(0, 2));
    expect(first.items[0]).toEqual(made[2]);
    const second = (await get(`/buyers?limit=2&search=${prefix}&cursor=${first.next_cursor}`, otherAccount).expect(200))
      .body;
    expect(ids(second)).toEqual(newestFirst.slice(2));
    expect(second.next_cursor).toBeNull();
    const back = (
      await get(`/buyers?limit=2&search=${prefix}&cursor=${second.previous_cursor}`, otherAccount).expect(200)
    ).body;
    expect(ids(back)).toEqual(newestFirst.slice(0, 2));
    const all = (await get('/buyers', otherAccount).expect(200)).body;
    expect(all.limit).toBe(20);
  });

  it('filters by exact external_identifier and by search over display name and external identifier, case-insensitively', async () => {
    const ids = async (query: string) =>
      (await get(`/buyers?${query}`, otherAccount).expect(200)).body.items.map((item: { id: string }) => item.id);
    expect(await ids(`external_identifier=${prefix}-kj`)).toEqual([made[2]!.id]);
    expect(await ids(`external_identifier=${prefix}-KJ`)).toEqual([]);
    expect(await ids(`search=${prefix}-alan`)).toEqual([made[1]!.id]);
    expect(await ids('search=HOPPER')).toEqual([made[0]!.id]);
    expect(await ids(`search=${encodeURIComponent('katherine')}&external_identifier=${prefix}-grace`)).toEqual([]);
    // Another merchant account's buyers never show.
    expect((await get(`/buyers?search=${prefix}`).expect(200)).body.items).toEqual([]);
  });

  it('refuses a limit outside 1..100 and a malformed cursor (422)', async () => {
    expect((await get('/buyers?limit=0').expect(422)).body.detail[0]).toMatchObject({
      loc: ['query', 'limit'],
      type: 'greater_than_equal',
    });
    expect((await get('/buyers?limit=101').expect(422)).body.detail[0]).toMatchObject({
      loc: ['query', 'limit'],
      type: 'less_than_equal',
    });
    expect((await get('/buyers?cursor=zzz').expect(422)).body.detail[0]).toMatchObject({ loc: ['query', 'cursor'] });
  });
});

describe('PUT /buyers/{buyer_id}', () => {
  it('changes only the fields sent (200); null clears one; billing details are replaced as a whole', async () => {
    const buyer = await createBuyer({
      display_name: 'Ada',
      external_identifier: 'http-put',
      billing_details: billingDetails,
      account_number: 'ACC',
    });
    const renamed = (await put(`/buyers/${buyer.id}`, { display_name: 'Ada L.', account_number: null }).expect(200))
      .body;
    expect(renamed).toEqual({
      ...buyer,
      display_name: 'Ada L.',
      account_number: null,
      updated_at: expect.stringMatching(isoWithOffset),
    });
    const rebilled = (await put(`/buyers/${buyer.id}`, { billing_details: { first_name: 'Augusta' } }).expect(200))
      .body;
    expect(rebilled.billing_details).toEqual({
      first_name: 'Augusta',
      last_name: null,
      email_address: null,
      phone_number: null,
      address: null,
      tax_id: null,
    });
    expect((await get(`/buyers/${buyer.id}`).expect(200)).body).toEqual(rebilled);
    const unchanged = (await put(`/buyers/${buyer.id}`, {}).expect(200)).body;
    expect(unchanged).toEqual(rebilled);
  });
});

describe('DELETE /buyers/{buyer_id}', () => {
  it('answers 204 without a body; the buyer and its shipping details are gone', async () => {
    const buyer = await createBuyer({ display_name: 'Gone', external_identifier: 'http-gone' });
    const shipping = (await post(`/buyers/${buyer.id}/shipping-details`, { first_name: 'Gone' }).expect(201)).body;
    const response = await del(`/buyers/${buyer.id}`).expect(204);
    expect(response.text).toBe('');
    await get(`/buyers/${buyer.id}`).expect(404);
    await put(`/buyers/${buyer.id}`, { display_name: 'Back' }).expect(404);
    await del(`/buyers/${buyer.id}`).expect(404);
    await get(`/buyers/${buyer.id}/shipping-details`).expect(404);
    await get(`/buyers/${buyer.id}/shipping-details/${shipping.id}`).expect(404);
    await post(`/buyers/${buyer.id}/shipping-details`, {}).expect(404);
    expect((await get('/buyers?external_identifier=http-gone').expect(200)).body.items).toEqual([]);
  });
});

describe('shipping details', () => {
  it('are created (201), listed, read, changed (200) and deleted (204)', async () => {
    const buyer = await createBuyer({ display_name: 'Shipper' });
    const base = `/buyers/${buyer.id}/shipping-details`;
    expect((await get(base).expect(200)).body).toEqual({ items: [] });

    const home = (
      await post(base, {
        first_name: 'Ada',
        email_address: 'ada@example.com',
        address: { line1: '1 Analytical Row', country: 'GB' },
      }).expect(201)
    ).body;
    expect(home).toEqual({
      type: 'shipping-details',
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      buyer_id: buyer.id,
      first_name: 'Ada',
      last_name: null,
      email_address: 'ada@example.com',
      phone_number: null,
      address: { ...fullAddress, city: null, postal_code: null },
    });
    const office = (await post(base, { last_name: 'Lovelace' }).expect(201)).body;
    expect((await get(base).expect(200)).body).toEqual({ items: [home, office] });
    expect((await get(`${base}/${home.id}`).expect(200)).body).toEqual(home);

    const changed = (
      await put(`${base}/${home.id}`, { email_address: null, phone_number: '+442071234567' }).expect(200)
    ).body;
    expect(changed).toEqual({ ...home, email_address: null, phone_number: '+442071234567' });

    const deleted = await del(`${base}/${home.id}`).expect(204);
    expect(deleted.text).toBe('');
    expect((await get(base).expect(200)).body).toEqual({ items: [office] });
    expectErrorBody((await get(`${base}/${home.id}`).expect(404)).body, 404, 'not_found');
    await put(`${base}/${home.id}`, { first_name: 'x' }).expect(404);
    await del(`${base}/${home.id}`).expect(404);
  });

  it('are 404 under another buyer, another merchant account or an unknown buyer', async () => {
    const ada = await createBuyer({ display_name: 'Ada' });
    const grace = await createBuyer({ display_name: 'Grace' });
    const shipping = (await post(`/buyers/${ada.id}/shipping-details`, { first_name: 'Ada' }).expect(201)).body;
    await get(`/buyers/${grace.id}/shipping-details/${shipping.id}`).expect(404);
    await put(`/buyers/${grace.id}/shipping-details/${shipping.id}`, { first_name: 'x' }).expect(404);
    await del(`/buyers/${grace.id}/shipping-details/${shipping.id}`).expect(404);
    await get(`/buyers/${ada.id}/shipping-details/${shipping.id}`, otherAccount).expect(404);
    await get(`/buyers/${ada.id}/shipping-details`, otherAccount).expect(404);
    await get(`/buyers/${randomUUID()}/shipping-details`).expect(404);
    await post(`/buyers/${randomUUID()}/shipping-details`, {}).expect(404);
    expect((await get(`/buyers/${ada.id}/shipping-details/${shipping.id}`).expect(200)).body).toEqual(shipping);
  });
});

describe('validation (422)', () => {
  it('answers the FastAPI body naming each bad field, and stores nothing', async () => {
    const count = async () => (await get('/buyers?limit=100').expect(200)).body.items.length as number;
    const before = await count();
    const response = await post('/buyers', {
      display_name: 'x'.repeat(201),
      external_identifier: '',
      billing_details: {
        email_address: 'not-an-email',
        phone_number: '0207 123',
        address: { country: 'gb' },
        tax_id: { value: '1', kind: 'xx.vat' },
      },
      nickname: 'Ada',
    }).expect(422);
    expect(Object.keys(response.body)).toEqual(['detail']);
    const byLoc = Object.fromEntries(
      response.body.detail.map((issue: { loc: unknown[] }) => [issue.loc.join('.'), issue]),
    );
    expect(byLoc['body.display_name']).toMatchObject({
      type: 'string_too_long',
      ctx: { max_length: 200 },
      msg: expect.any(String),
    });
    expect(byLoc['body.external_identifier']).toMatchObject({ type: 'string_too_short', input: '' });
    expect(byLoc['body.billing_details.email_address']).toMatchObject({ type: 'email_parsing', input: 'not-an-email' });
    expect(byLoc['body.billing_details.phone_number']).toMatchObject({ type: 'string_pattern_mismatch' });
    expect(byLoc['body.billing_details.address.country']).toMatchObject({
      type: 'string_pattern_mismatch',
      input: 'gb',
    });
    expect(byLoc['body.billing_details.tax_id.kind']).toMatchObject({ type: 'enum', input: 'xx.vat' });
    expect(byLoc['body.nickname']).toMatchObject({ type: 'extra_forbidden' });
    for (const issue of response.body.detail)
      expect(Object.keys(issue).sort()).toEqual(['ctx', 'input', 'loc', 'msg', 'type']);
    expect(await count()).toBe(before);
  });

  it('checks updates and shipping details the same way', async () => {
    const buyer = await createBuyer({ display_name: 'Valid' });
    expect(
      (await put(`/buyers/${buyer.id}`, { external_identifier: 'y'.repeat(201) }).expect(422)).body.detail[0],
    ).toMatchObject({
      loc: ['body', 'external_identifier'],
      type: 'string_too_long',
    });
    expect(
      (await post(`/buyers/${buyer.id}/shipping-details`, { address: { country: 'GBR' } }).expect(422)).body.detail[0],
    ).toMatchObject({
      loc: ['body', 'address', 'country'],
    });
    expect(
      (await post(`/buyers/${buyer.id}/shipping-details`, { tax_id: { value: '1', kind: 'gb.vat' } }).expect(422)).body
        .detail[0],
    ).toMatchObject({
      loc: ['body', 'tax_id'],
      type: 'extra_forbidden',
    });
    expect((await get(`/buyers/${buyer.id}`).expect(200)).body).toEqual(buyer);
  });
});

describe('scopes', () => {
  it('reads need buyers.read, writes buyers.write (403 otherwise)', async () => {
    const buyer = await createBuyer({ display_name: 'Scoped' });
    const reader = await tokenWith(['administrator'], ['buyers.read']);
    await h.http().get('/buyers').set(reader).expect(200);
    await h.http().get(`/buyers/${buyer.id}`).set(reader).expect(200);
    await h.http().get(`/buyers/${buyer.id}/shipping-details`).set(reader).expect(200);
    expectErrorBody((await h.http().post('/buyers').set(reader).send({}).expect(403)).body, 403, 'forbidden');
    await h.http().put(`/buyers/${buyer.id}`).set(reader).send({}).expect(403);
    await h.http().delete(`/buyers/${buyer.id}`).set(reader).expect(403);
    await h.http().post(`/buyers/${buyer.id}/shipping-details`).set(reader).send({}).expect(403);

    const stranger = await tokenWith(['administrator'], ['gift-cards.read']);
    await h.http().get('/buyers').set(stranger).expect(403);
    await h.http().get(`/buyers/${buyer.id}/shipping-details`).set(stranger).expect(403);

    // The token's scope must also be granted by the key's roles: the analyst reads buyers but does not write them.
    const analyst = await tokenWith(['analyst'], ['buyers.read', 'buyers.write']);
    await h.http().get('/buyers').set(analyst).expect(200);
    await h.http().post('/buyers').set(analyst).send({}).expect(403);

    const writer = await tokenWith(['integration'], ['buyers.write']);
    await h.http().post('/buyers').set(writer).send({ display_name: 'By integration' }).expect(201);
    await h.http().get('/buyers').set(writer).expect(403);
  });
});

describe('OpenAPI', () => {
  it('documents the buyer endpoints under the Buyers tag', async () => {
    const document = (await h.http().get('/openapi.json').expect(200)).body;
    expect(document.paths['/buyers'].post).toMatchObject({ operationId: 'create_buyer', tags: ['Buyers'] });
    expect(Object.keys(document.paths['/buyers/{buyer_id}']).sort()).toEqual(['delete', 'get', 'put']);
    expect(Object.keys(document.paths['/buyers/{buyer_id}/shipping-details/{shipping_details_id}']).sort()).toEqual([
      'delete',
      'get',
      'put',
    ]);
    expect(document.components.schemas.Buyer).toBeDefined();
    expect(document.components.schemas.ShippingDetailsCreate).toBeDefined();
  });
});
