import { buyerDecider, type BuyerCommand, type BuyerEvent } from './buyer';
import {
  externalIdentifierClaim,
  externalIdentifierClaimStream,
  type ExternalIdentifierClaimCommand,
  type ExternalIdentifierClaimEvent,
} from './buyer-external-identifier';

const now = '2026-01-01T00:00:00.000Z';
const metadata = { now };
const id = 'b1';
const details = { displayName: 'Ada', externalIdentifier: 'cust-1', billingDetails: null, accountNumber: null };
const created: BuyerEvent = { type: 'BuyerCreated', data: { id, merchantAccountId: 'shop-a', ...details, at: now } };
const given = (events: BuyerEvent[]) => ({
  when: (command: BuyerCommand) =>
    buyerDecider.decide(command, events.reduce(buyerDecider.evolve, buyerDecider.initialState())),
});
const update = (changes: object, merchantAccountId = 'shop-a'): BuyerCommand => ({
  type: 'UpdateBuyer',
  data: { merchantAccountId, changes },
  metadata,
});
const fence = (externalIdentifier: string): BuyerCommand => ({
  type: 'FenceExternalIdentifierClaim',
  data: { id, merchantAccountId: 'shop-a', externalIdentifier },
  metadata,
});

describe('when the buyer does not exist', () => {
  it('is created', () =>
    expect(
      given([]).when({ type: 'CreateBuyer', data: { id, merchantAccountId: 'shop-a', ...details }, metadata }),
    ).toEqual([created]));
  it('cannot be updated', () =>
    expect(() => given([]).when(update({ displayName: 'x' }))).toThrow(
      expect.objectContaining({ code: 'buyer_not_found' }),
    ));
  it('is closed by a fence, after which it cannot be created', () => {
    const fenced = given([]).when(fence('cust-1')) as BuyerEvent[];
    expect(fenced).toEqual([
      {
        type: 'ExternalIdentifierClaimFenced',
        data: { id, merchantAccountId: 'shop-a', externalIdentifier: 'cust-1', at: now },
      },
    ]);
    expect(() =>
      given(fenced).when({ type: 'CreateBuyer', data: { id, merchantAccountId: 'shop-a', ...details }, metadata }),
    ).toThrow(expect.objectContaining({ code: 'buyer_exists' }));
  });
});

describe('when the buyer exists', () => {
  it('records only the fields that change', () =>
    expect(
      given([created]).when(update({ displayName: 'Ada', accountNumber: 'ACC', externalIdentifier: undefined })),
    ).toEqual([{ type: 'BuyerUpdated', data: { id, merchantAccountId: 'shop-a', accountNumber: 'ACC', at: now } }]));
  it('records nothing when nothing changes', () =>
    expect(given([created]).when(update({ displayName: 'Ada', billingDetails: null }))).toEqual([]));
  it('does not exist under another merchant account', () =>
    expect(() => given([created]).when(update({}, 'shop-b'))).toThrow(
      expect.objectContaining({ code: 'buyer_not_found' }),
    ));
  it('refuses to fence the identifier it uses, and fences another', () => {
    expect(() => given([created]).when(fence('cust-1'))).toThrow(
      expect.objectContaining({ code: 'buyer_external_identifier_in_use', buyerId: id }),
    );
    expect(given([created]).when(fence('cust-0'))).toHaveLength(1);
  });
  it('names the identifier it held when deleted', () =>
    expect(given([created]).when({ type: 'DeleteBuyer', data: { merchantAccountId: 'shop-a' }, metadata })).toEqual([
      { type: 'BuyerDeleted', data: { id, merchantAccountId: 'shop-a', externalIdentifier: 'cust-1', at: now } },
    ]));
  it('changes and removes only shipping details it has', () => {
    const contact = { first_name: 'Ada', last_name: null, email_address: null, phone_number: null, address: null };
    const added = given([created]).when({
      type: 'AddShippingDetails',
      data: { merchantAccountId: 'shop-a', shippingDetailsId: 's1', details: contact },
      metadata,
    }) as BuyerEvent[];
    const history = [created, ...added];
    expect(
      given(history).when({
        type: 'UpdateShippingDetails',
        data: { merchantAccountId: 'shop-a', shippingDetailsId: 's1', changes: { first_name: 'Ada', last_name: 'L' } },
        metadata,
      }),
    ).toEqual([
      {
        type: 'ShippingDetailsUpdated',
        data: { buyerId: id, merchantAccountId: 'shop-a', shippingDetailsId: 's1', last_name: 'L', at: now },
      },
    ]);
    const remove = (shippingDetailsId: string): BuyerCommand => ({
      type: 'RemoveShippingDetails',
      data: { merchantAccountId: 'shop-a', shippingDetailsId },
      metadata,
    });
    expect(() => given(history).when(remove('s2'))).toThrow(
      expect.objectContaining({ code: 'shipping_details_not_found' }),
    );
    const removed = given(history).when(remove('s1')) as BuyerEvent[];
    expect(() => given([...history, ...removed]).when(remove('s1'))).toThrow(
      expect.objectContaining({ code: 'shipping_details_not_found' }),
    );
  });
});

describe('when the buyer is deleted', () => {
  const deleted: BuyerEvent = {
    type: 'BuyerDeleted',
    data: { id, merchantAccountId: 'shop-a', externalIdentifier: 'cust-1', at: now },
  };
  it('does not exist', () =>
    expect(() => given([created, deleted]).when(update({ displayName: 'x' }))).toThrow(
      expect.objectContaining({ code: 'buyer_not_found' }),
    ));
  it('needs no fence', () => expect(given([created, deleted]).when(fence('cust-1'))).toEqual([]));
});

describe('an external identifier claim', () => {
  const key = { merchantAccountId: 'shop-a', externalIdentifier: 'cust-1' };
  const claim = (buyerId: string): ExternalIdentifierClaimCommand => ({
    type: 'ClaimBuyerExternalIdentifier',
    data: { ...key, buyerId },
    metadata,
  });
  const claimedBy = (buyerId: string): ExternalIdentifierClaimEvent => ({
    type: 'BuyerExternalIdentifierClaimed',
    data: { ...key, buyerId, at: now },
  });
  const on = (events: ExternalIdentifierClaimEvent[]) => ({
    when: (command: ExternalIdentifierClaimCommand) =>
      externalIdentifierClaim.decide(
        command,
        events.reduce(externalIdentifierClaim.evolve, externalIdentifierClaim.initialState()),
      ),
  });

  it('is keyed by merchant account and identifier, exactly', () => {
    expect(externalIdentifierClaimStream('shop-a', 'cust-1')).toBe(externalIdentifierClaimStream('shop-a', 'cust-1'));
    expect(externalIdentifierClaimStream('shop-a', 'cust-1')).not.toBe(
      externalIdentifierClaimStream('shop-b', 'cust-1'),
    );
    expect(externalIdentifierClaimStream('shop-a', 'cust-1')).not.toBe(
      externalIdentifierClaimStream('shop-a', 'CUST-1'),
    );
  });
  it('is taken when free', () => expect(on([]).when(claim('b1'))).toEqual([claimedBy('b1')]));
  it('is refused to another buyer, naming the holder', () =>
    expect(() => on([claimedBy('b1')]).when(claim('b2'))).toThrow(expect.objectContaining({ holderId: 'b1' })));
  // Claimed again by its holder: the stream moves on, so a release decided on the older revision cannot be appended.
  it('is claimed again by its holder', () =>
    expect(on([claimedBy('b1')]).when(claim('b1'))).toEqual([claimedBy('b1')]));
  it('is taken over only from the buyer that was fenced', () => {
    const takeOver = (previousBuyerId: string): ExternalIdentifierClaimCommand => ({
      type: 'TakeOverBuyerExternalIdentifier',
      data: { ...key, buyerId: 'b2', previousBuyerId },
      metadata,
    });
    expect(on([claimedBy('b1')]).when(takeOver('b1'))).toEqual([
      { type: 'BuyerExternalIdentifierReleased', data: { ...key, buyerId: 'b1', at: now } },
      claimedBy('b2'),
    ]);
    expect(() => on([claimedBy('b3')]).when(takeOver('b1'))).toThrow(expect.objectContaining({ holderId: 'b3' }));
  });
  it('is released by its holder only', () => {
    const release = (buyerId: string): ExternalIdentifierClaimCommand => ({
      type: 'ReleaseBuyerExternalIdentifier',
      data: { ...key, buyerId },
      metadata,
    });
    expect(on([claimedBy('b1')]).when(release('b2'))).toEqual([]);
    expect(on([claimedBy('b1')]).when(release('b1'))).toEqual([
      { type: 'BuyerExternalIdentifierReleased', data: { ...key, buyerId: 'b1', at: now } },
    ]);
  });
});
