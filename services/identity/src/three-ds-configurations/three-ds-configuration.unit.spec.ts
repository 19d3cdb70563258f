import {
  threeDsConfiguration,
  type ThreeDsConfigurationCommand,
  type ThreeDsConfigurationEvent,
  type ThreeDsProfile,
} from './three-ds-configuration';

const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';
const id = '6f1c1b9e-2f0c-4c55-9a43-6f3a0c7d1e01';

const profile: ThreeDsProfile = {
  merchantAcquirerBin: '516327',
  merchantAcquirerId: '123456789012345',
  merchantName: 'Shop 1',
  merchantCountryCode: '840',
  merchantCategoryCode: '5411',
  merchantUrl: 'https://shop.example',
  scheme: 'visa',
  currency: 'USD',
  metadata: { region: 'us' },
};

const create = (overrides: Partial<ThreeDsProfile> = {}): ThreeDsConfigurationCommand => ({
  type: 'CreateThreeDsConfiguration',
  data: { id, merchantAccountId: 'shop-a', ...profile, ...overrides },
  metadata: { now },
});
const update = (merchantAccountId: string, changes: Partial<ThreeDsProfile>): ThreeDsConfigurationCommand => ({
  type: 'UpdateThreeDsConfiguration',
  data: { merchantAccountId, changes },
  metadata: { now: later },
});
const remove = (merchantAccountId: string): ThreeDsConfigurationCommand => ({
  type: 'DeleteThreeDsConfiguration',
  data: { merchantAccountId },
  metadata: { now: later },
});

const given = (events: ThreeDsConfigurationEvent[]) => ({
  when: (command: ThreeDsConfigurationCommand) =>
    threeDsConfiguration.decide(
      command,
      events.reduce(threeDsConfiguration.evolve, threeDsConfiguration.initialState()),
    ),
});

describe('when no configuration exists', () => {
  it('creates it for its merchant account', () =>
    expect(given([]).when(create())).toEqual([
      { type: 'ThreeDsConfigurationCreated', data: { id, merchantAccountId: 'shop-a', ...profile, at: now } },
    ]));

  it('creates one for any currency and scheme', () =>
    expect(given([]).when(create({ currency: null, scheme: null }))[0]?.data).toMatchObject({
      currency: null,
      scheme: null,
    }));

  it('refuses blank profile fields and a malformed currency, naming each field', () =>
    expect(() => given([]).when(create({ merchantName: ' ', merchantUrl: '', currency: 'usd' }))).toThrow(
      expect.objectContaining({
        code: 'invalid_three_ds_configuration',
        details: [
          expect.objectContaining({ field: 'merchant_name' }),
          expect.objectContaining({ field: 'merchant_url' }),
          expect.objectContaining({ field: 'currency' }),
        ],
      }),
    ));

  it('is not found for updates and deletes', () => {
    expect(() => given([]).when(update('shop-a', { merchantName: 'x' }))).toThrow(
      expect.objectContaining({ code: 'three_ds_configuration_not_found' }),
    );
    expect(() => given([]).when(remove('shop-a'))).toThrow(
      expect.objectContaining({ code: 'three_ds_configuration_not_found' }),
    );
  });
});

describe('when the configuration exists', () => {
  const created = given([]).when(create()) as ThreeDsConfigurationEvent[];

  it('refuses to create it again', () =>
    expect(() => given(created).when(create())).toThrow(
      expect.objectContaining({ code: 'three_ds_configuration_exists' }),
    ));

  it('records only the fields that change; null clears the currency', () =>
    expect(given(created).when(update('shop-a', { merchantName: 'Shop A', currency: null, metadata: {} }))).toEqual([
      {
        type: 'ThreeDsConfigurationUpdated',
        data: { id, merchantAccountId: 'shop-a', merchantName: 'Shop A', currency: null, metadata: {}, at: later },
      },
    ]));

  it('refuses a blank field on update', () =>
    expect(() => given(created).when(update('shop-a', { merchantCategoryCode: '' }))).toThrow(
      expect.objectContaining({ code: 'invalid_three_ds_configuration' }),
    ));

  it('deletes it', () =>
    expect(given(created).when(remove('shop-a'))).toEqual([
      { type: 'ThreeDsConfigurationDeleted', data: { id, merchantAccountId: 'shop-a', at: later } },
    ]));

  it('does not exist under another merchant account', () => {
    expect(() => given(created).when(update('shop-b', { merchantName: 'x' }))).toThrow(
      expect.objectContaining({ code: 'three_ds_configuration_not_found' }),
    );
    expect(() => given(created).when(remove('shop-b'))).toThrow(
      expect.objectContaining({ code: 'three_ds_configuration_not_found' }),
    );
  });
});

describe('when the configuration was deleted', () => {
  const deleted: ThreeDsConfigurationEvent[] = [
    ...(given([]).when(create()) as ThreeDsConfigurationEvent[]),
    { type: 'ThreeDsConfigurationDeleted', data: { id, merchantAccountId: 'shop-a', at: later } },
  ];
  it('is not found for updates and deletes, and cannot be created again', () => {
    expect(() => given(deleted).when(update('shop-a', { merchantName: 'x' }))).toThrow(
      expect.objectContaining({ code: 'three_ds_configuration_not_found' }),
    );
    expect(() => given(deleted).when(remove('shop-a'))).toThrow(
      expect.objectContaining({ code: 'three_ds_configuration_not_found' }),
    );
    expect(() => given(deleted).when(create())).toThrow(
      expect.objectContaining({ code: 'three_ds_configuration_exists' }),
    );
  });
});
