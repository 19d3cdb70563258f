/**
 * Adyen's standard webhooks as our notifications, on bodies shaped like the Webhooks-v1 document's examples: one
 * request may hold several NotificationRequestItems (every one verified before any is read), and a modification's
 * `merchantReference` is the payment's own reference ("Your reference to uniquely identify the payment"), so a
 * capture or refund is named by Adyen's pspReference of it — our operation id only when the reference carries one.
 */
import { hmacValidator, type Types } from '@adyen/api-library';
import { NotificationRejectedError } from '../connector-errors';
import { parseAdyenNotification } from './adyen-notification';

const hmacKey = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
const merchantAccount = 'SwitchyardShop';
const verification = { hmacKey, merchantAccount };

type Item = Types.notification.NotificationRequestItem;

function item(overrides: Partial<Item>): Item {
  const unsigned = {
    amount: { currency: 'EUR', value: 4_000 },
    eventCode: 'AUTHORISATION' as Item['eventCode'],
    eventDate: '2026-11-26T10:00:00+00:00',
    merchantAccountCode: merchantAccount,
    merchantReference: 'tx-1',
    paymentMethod: 'visa',
    pspReference: 'PAYMENT000000001',
    reason: '',
    success: 'true' as Item['success'],
    ...overrides,
  };
  return { ...unsigned, additionalData: { hmacSignature: new hmacValidator().calculateHmac(unsigned, hmacKey) } };
}

const body = (...items: Item[]) =>
  JSON.stringify({
    live: 'false',
    notificationItems: items.map((NotificationRequestItem) => ({ NotificationRequestItem })),
  });

describe('an Adyen notification request', () => {
  it('with one item is that item, verified', () => {
    expect(parseAdyenNotification(body(item({})), {}, verification)).toEqual([
      expect.objectContaining({
        type: 'authorization',
        status: 'authorized',
        reference: 'tx-1',
        providerTransactionId: 'PAYMENT000000001',
        amount: 4_000,
      }),
    ]);
  });

  it('with several items is every item, in order', () => {
    const capture = item({
      eventCode: 'CAPTURE' as Item['eventCode'],
      pspReference: 'CAPTURE000000001',
      originalReference: 'PAYMENT000000001',
    });
    const refund = item({
      eventCode: 'REFUND' as Item['eventCode'],
      pspReference: 'REFUND0000000001',
      originalReference: 'PAYMENT000000001',
      amount: { currency: 'EUR', value: 1_000 },
    });
    expect(parseAdyenNotification(body(item({}), capture, refund), {}, verification)).toEqual([
      expect.objectContaining({ type: 'authorization', providerEventId: 'AUTHORISATION:PAYMENT000000001:true' }),
      expect.objectContaining({
        type: 'capture',
        providerCaptureId: 'CAPTURE000000001',
        providerEventId: 'CAPTURE:CAPTURE000000001:true',
      }),
      expect.objectContaining({
        type: 'refund',
        providerRefundId: 'REFUND0000000001',
        providerEventId: 'REFUND:REFUND0000000001:true',
      }),
    ]);
  });

  it('is refused whole when any of its items does not verify', () => {
    const forged = {
      ...item({
        eventCode: 'CAPTURE' as Item['eventCode'],
        pspReference: 'CAPTURE000000001',
        originalReference: 'PAYMENT000000001',
      }),
      success: 'false' as Item['success'],
    };
    expect(() => parseAdyenNotification(body(item({}), forged), {}, verification)).toThrow(
      expect.objectContaining({ reason: 'bad_signature' }) as Error,
    );
  });

  it('without items is malformed', () => {
    expect(() =>
      parseAdyenNotification(JSON.stringify({ live: 'false', notificationItems: [] }), {}, verification),
    ).toThrow(NotificationRejectedError);
    expect(() => parseAdyenNotification('{"live":"false"}', {}, verification)).toThrow(
      expect.objectContaining({ reason: 'malformed_body' }) as Error,
    );
  });

  it("skips items of another merchant account of the company, keeping this account's", () => {
    const other = item({ merchantAccountCode: 'SwitchyardOther', pspReference: 'PAYMENT000000002' });
    expect(parseAdyenNotification(body(other, item({})), {}, verification)).toEqual([
      expect.objectContaining({ providerTransactionId: 'PAYMENT000000001' }),
    ]);
  });
});

describe("a modification's item, with the payment's merchantReference (as Webhooks-v1 describes it)", () => {
  it('names a capture by its pspReference and the payment by originalReference', () => {
    const capture = item({
      eventCode: 'CAPTURE' as Item['eventCode'],
      pspReference: 'CAPTURE000000001',
      originalReference: 'PAYMENT000000001',
      merchantReference: 'tx-1',
    });
    const [parsed] = parseAdyenNotification(body(capture), {}, verification);
    expect(parsed).toEqual(
      expect.objectContaining({
        type: 'capture',
        reference: 'tx-1',
        providerTransactionId: 'PAYMENT000000001',
        providerCaptureId: 'CAPTURE000000001',
        status: 'succeeded',
        amount: 4_000,
      }),
    );
    expect(parsed).not.toHaveProperty('captureReference');
  });

  it('names a refund by its pspReference: a refund of ours is found by it', () => {
    const refund = item({
      eventCode: 'REFUND' as Item['eventCode'],
      pspReference: 'REFUND0000000001',
      originalReference: 'PAYMENT000000001',
      merchantReference: 'tx-1',
      amount: { currency: 'EUR', value: 1_000 },
    });
    const [parsed] = parseAdyenNotification(body(refund), {}, verification);
    expect(parsed).toEqual(
      expect.objectContaining({
        type: 'refund',
        reference: 'tx-1',
        providerRefundId: 'REFUND0000000001',
        status: 'succeeded',
        amount: 1_000,
      }),
    );
    expect(parsed).not.toHaveProperty('refundReference');
  });

  it('still takes our operation id where the reference carries one', () => {
    const capture = item({
      eventCode: 'CAPTURE' as Item['eventCode'],
      pspReference: 'CAPTURE000000001',
      originalReference: 'PAYMENT000000001',
      merchantReference: 'tx-1/c/capture-1',
    });
    const refund = item({
      eventCode: 'REFUND' as Item['eventCode'],
      pspReference: 'REFUND0000000001',
      originalReference: 'PAYMENT000000001',
      merchantReference: 'tx-1/r/refund-1',
    });
    expect(parseAdyenNotification(body(capture, refund), {}, verification)).toEqual([
      expect.objectContaining({ type: 'capture', reference: 'tx-1', captureReference: 'capture-1' }),
      expect.objectContaining({ type: 'refund', reference: 'tx-1', refundReference: 'refund-1' }),
    ]);
  });

  it('a cancellation is the void of the payment it names', () => {
    const cancellation = item({
      eventCode: 'CANCELLATION' as Item['eventCode'],
      pspReference: 'CANCEL0000000001',
      originalReference: 'PAYMENT000000001',
      merchantReference: 'tx-1',
    });
    expect(parseAdyenNotification(body(cancellation), {}, verification)).toEqual([
      expect.objectContaining({
        type: 'void',
        reference: 'tx-1',
        providerTransactionId: 'PAYMENT000000001',
        status: 'succeeded',
      }),
    ]);
  });
});
