import { DomainError } from '@switchyard/decider';
import {
  defaultMerchantAccountSettings,
  merchantAccount,
  type MerchantAccountCommand,
  type MerchantAccountEvent,
} from './merchant-account';

const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';

type CreateCommand = Extract<MerchantAccountCommand, { type: 'CreateMerchantAccount' }>;
const create = (data: Partial<CreateCommand['data']> = {}): CreateCommand => ({
  type: 'CreateMerchantAccount',
  data: { id: 'shop-1', displayName: 'Shop 1', ...data },
  metadata: { now },
});
const update = (
  data: Extract<MerchantAccountCommand, { type: 'UpdateMerchantAccount' }>['data'],
): MerchantAccountCommand => ({
  type: 'UpdateMerchantAccount',
  data,
  metadata: { now: later },
});

const given = (events: MerchantAccountEvent[]) => ({
  when: (command: MerchantAccountCommand) =>
    merchantAccount.decide(command, events.reduce(merchantAccount.evolve, merchantAccount.initialState())),
});

describe('when no merchant account exists', () => {
  it('creates it with the default settings', () =>
    expect(given([]).when(create())).toEqual([
      {
        type: 'MerchantAccountCreated',
        data: { id: 'shop-1', displayName: 'Shop 1', settings: defaultMerchantAccountSettings, at: now },
      },
    ]));

  it('creates it with the settings given, the rest defaulted', () => {
    const [event] = given([]).when(
      create({
        settings: { overCaptureAmount: 500, visaNetworkTokensRequestorId: 'req-1', asyncNetworkTokensEnabled: true },
      }),
    );
    expect(event?.type === 'MerchantAccountCreated' && event.data.settings).toEqual({
      ...defaultMerchantAccountSettings,
      overCaptureAmount: 500,
      visaNetworkTokensRequestorId: 'req-1',
      asyncNetworkTokensEnabled: true,
    });
  });

  it('has multiple captures off by default', () =>
    expect(defaultMerchantAccountSettings.multipleCapturesEnabled).toBe(false));

  it('has network tokens off and no Discover ids by default', () =>
    expect(defaultMerchantAccountSettings).toMatchObject({
      networkTokensEnabled: false,
      discoverNetworkTokensRequestorId: null,
      discoverNetworkTokensAppId: null,
    }));

  it('creates it with network tokens enabled and the Discover ids', () => {
    const settings = {
      networkTokensEnabled: true,
      discoverNetworkTokensRequestorId: 'disc-req',
      discoverNetworkTokensAppId: 'disc-app',
    };
    const [event] = given([]).when(create({ settings }));
    expect(event?.type === 'MerchantAccountCreated' && event.data.settings).toEqual({
      ...defaultMerchantAccountSettings,
      ...settings,
    });
  });

  it('refuses a network tokens switch that is not a boolean, naming the field', () =>
    expect(() => given([]).when(create({ settings: { networkTokensEnabled: 'on' as unknown as boolean } }))).toThrow(
      expect.objectContaining({
        code: 'invalid_merchant_account',
        details: [expect.objectContaining({ field: 'network_tokens_enabled' })],
      }),
    ));

  it('creates it with multiple captures enabled', () => {
    const [event] = given([]).when(create({ settings: { multipleCapturesEnabled: true } }));
    expect(event?.type === 'MerchantAccountCreated' && event.data.settings).toEqual({
      ...defaultMerchantAccountSettings,
      multipleCapturesEnabled: true,
    });
  });

  it('takes a setting given as undefined as not given', () => {
    const [event] = given([]).when(create({ settings: { multipleCapturesEnabled: undefined } }));
    expect(event?.type === 'MerchantAccountCreated' && event.data.settings).toEqual(defaultMerchantAccountSettings);
  });

  it('refuses a multiple captures switch that is not a boolean, naming the field', () =>
    expect(() => given([]).when(create({ settings: { multipleCapturesEnabled: null as unknown as boolean } }))).toThrow(
      expect.objectContaining({
        code: 'invalid_merchant_account',
        details: [expect.objectContaining({ field: 'multiple_captures_enabled' })],
      }),
    ));

  it('refuses an id outside the pattern, naming the field', () =>
    expect(() => given([]).when(create({ id: 'Shop_1' }))).toThrow(
      expect.objectContaining({
        code: 'invalid_merchant_account',
        details: [expect.objectContaining({ field: 'id' })],
      }),
    ));

  it('refuses a blank display name', () =>
    expect(() => given([]).when(create({ displayName: '  ' }))).toThrow(DomainError));

  it('refuses a negative over-capture limit', () =>
    expect(() => given([]).when(create({ settings: { overCapturePercentage: -1 } }))).toThrow(
      expect.objectContaining({
        code: 'invalid_merchant_account',
        details: [expect.objectContaining({ field: 'over_capture_percentage' })],
      }),
    ));

  it('cannot update it', () =>
    expect(() => given([]).when(update({ displayName: 'x' }))).toThrow(
      expect.objectContaining({ code: 'merchant_account_not_found' }),
    ));
});

describe('when the merchant account exists', () => {
  const created = given([]).when(create()) as MerchantAccountEvent[];

  it('refuses to create it again', () =>
    expect(() => given(created).when(create())).toThrow(expect.objectContaining({ code: 'merchant_account_exists' })));

  it('records only the fields that change; null clears a setting', () =>
    expect(
      given(created).when(
        update({
          displayName: 'Shop One',
          overCaptureAmount: null,
          accountUpdaterEnabled: true,
          visaNetworkTokensAppId: undefined,
        }),
      ),
    ).toEqual([
      {
        type: 'MerchantAccountUpdated',
        data: {
          id: 'shop-1',
          displayName: 'Shop One',
          overCaptureAmount: null,
          accountUpdaterEnabled: true,
          at: later,
        },
      },
    ]));

  it('toggles multiple captures on and off', () => {
    const enabled = given(created).when(update({ multipleCapturesEnabled: true }));
    expect(enabled).toEqual([
      { type: 'MerchantAccountUpdated', data: { id: 'shop-1', multipleCapturesEnabled: true, at: later } },
    ]);
    expect(given([...created, ...enabled]).when(update({ multipleCapturesEnabled: false }))).toEqual([
      { type: 'MerchantAccountUpdated', data: { id: 'shop-1', multipleCapturesEnabled: false, at: later } },
    ]);
  });

  it('turns network tokens on and sets, then clears, the Discover ids', () => {
    expect(
      given(created).when(
        update({
          networkTokensEnabled: true,
          discoverNetworkTokensRequestorId: 'disc-req',
          discoverNetworkTokensAppId: 'disc-app',
        }),
      ),
    ).toEqual([
      {
        type: 'MerchantAccountUpdated',
        data: {
          id: 'shop-1',
          networkTokensEnabled: true,
          discoverNetworkTokensRequestorId: 'disc-req',
          discoverNetworkTokensAppId: 'disc-app',
          at: later,
        },
      },
    ]);
    expect(given(created).when(update({ discoverNetworkTokensAppId: null }))).toEqual([
      { type: 'MerchantAccountUpdated', data: { id: 'shop-1', discoverNetworkTokensAppId: null, at: later } },
    ]);
    expect(() => given(created).when(update({ networkTokensEnabled: null as unknown as boolean }))).toThrow(
      expect.objectContaining({ details: [expect.objectContaining({ field: 'network_tokens_enabled' })] }),
    );
  });

  it('refuses a multiple captures switch that is not a boolean', () =>
    expect(() => given(created).when(update({ multipleCapturesEnabled: 'yes' as unknown as boolean }))).toThrow(
      expect.objectContaining({
        code: 'invalid_merchant_account',
        details: [expect.objectContaining({ field: 'multiple_captures_enabled' })],
      }),
    ));

  it('refuses a blank display name or a fractional over-capture amount', () => {
    expect(() => given(created).when(update({ displayName: '' }))).toThrow(
      expect.objectContaining({ code: 'invalid_merchant_account' }),
    );
    expect(() => given(created).when(update({ overCaptureAmount: 1.5 }))).toThrow(
      expect.objectContaining({ code: 'invalid_merchant_account' }),
    );
  });
});

describe('when the merchant account was created before settings existed', () => {
  const legacy: MerchantAccountEvent[] = [
    { type: 'MerchantAccountCreated', data: { id: 'default', displayName: 'Default', at: now } },
  ];
  it('is updated like any other', () =>
    expect(given(legacy).when(update({ overCapturePercentage: 10 }))).toHaveLength(1));
});
