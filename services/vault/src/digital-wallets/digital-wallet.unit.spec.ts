/** The digital wallet and provider-claim deciders: given their events, when a command, then the events or the refusal. */
import type { DigitalWalletCommand, DigitalWalletEvent } from './digital-wallet';
import { digitalWalletDecider } from './digital-wallet';
import {
  digitalWalletProviderClaim,
  DigitalWalletProviderTaken,
  type DigitalWalletProviderClaimCommand,
  type DigitalWalletProviderClaimEvent,
} from './digital-wallet-provider-claim';

const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';
const id = '6f1c1b9e-2f0c-4c55-9a43-6f3a0c7d1e01';
const key = { keyId: 'thumbprint-1', sealed: 'sealed-1' };
const settings = {
  merchantName: 'Shop',
  merchantDisplayName: null,
  merchantUrl: null,
  merchantCountryCode: 'US',
  domainNames: ['shop.example'],
};

type Register = Extract<DigitalWalletCommand, { type: 'RegisterDigitalWallet' }>['data'];
const register = (overrides: Partial<Register> = {}): DigitalWalletCommand => ({
  type: 'RegisterDigitalWallet',
  data: {
    id,
    merchantAccountId: 'shop-a',
    provider: 'paze',
    ...settings,
    acceptTermsAndConditions: true,
    decryptionKey: key,
    ...overrides,
  },
  metadata: { now },
});
const update = (changes: Record<string, unknown>, merchantAccountId = 'shop-a'): DigitalWalletCommand => ({
  type: 'UpdateDigitalWallet',
  data: { merchantAccountId, changes },
  metadata: { now: later },
});
const remove = (merchantAccountId = 'shop-a'): DigitalWalletCommand => ({
  type: 'DeleteDigitalWallet',
  data: { merchantAccountId },
  metadata: { now: later },
});

const given = (events: readonly DigitalWalletEvent[]) => ({
  when: (command: DigitalWalletCommand) =>
    digitalWalletDecider.decide(
      command,
      events.reduce(digitalWalletDecider.evolve, digitalWalletDecider.initialState()),
    ),
});
const refusal = (code: string, field?: string) =>
  expect.objectContaining({ code, ...(field ? { details: [expect.objectContaining({ field })] } : {}) });

describe('when no wallet exists', () => {
  it('registers a Paze wallet with its sealed key', () =>
    expect(given([]).when(register())).toEqual([
      {
        type: 'DigitalWalletRegistered',
        data: { id, merchantAccountId: 'shop-a', provider: 'paze', ...settings, decryptionKey: key, at: now },
      },
    ]));

  it('registers the other providers without a key', () =>
    expect(given([]).when(register({ provider: 'apple', decryptionKey: null }))[0]?.data).toMatchObject({
      provider: 'apple',
      decryptionKey: null,
    }));

  it('refuses unaccepted terms, a Paze wallet without a key, and a key for another provider (naming the field)', () => {
    expect(() => given([]).when(register({ acceptTermsAndConditions: false }))).toThrow(
      refusal('terms_and_conditions_not_accepted', 'accept_terms_and_conditions'),
    );
    expect(() => given([]).when(register({ decryptionKey: null }))).toThrow(
      refusal('decryption_key_required', 'decryption_key'),
    );
    expect(() => given([]).when(register({ provider: 'google' }))).toThrow(
      refusal('decryption_key_not_supported', 'decryption_key'),
    );
  });

  it('is not found for updates and deletes', () => {
    expect(() => given([]).when(update({ merchantName: 'x' }))).toThrow(refusal('digital_wallet_not_found'));
    expect(() => given([]).when(remove())).toThrow(refusal('digital_wallet_not_found'));
  });
});

describe('when the wallet exists', () => {
  const registered = given([]).when(register());

  it('refuses to register it again', () =>
    expect(() => given(registered).when(register())).toThrow(refusal('digital_wallet_exists')));

  it('records only the fields that change', () =>
    expect(
      given(registered).when(
        update({
          merchantName: 'Shop',
          merchantUrl: 'https://shop.example',
          domainNames: ['shop.example', 'pay.shop.example'],
        }),
      ),
    ).toEqual([
      {
        type: 'DigitalWalletUpdated',
        data: {
          id,
          merchantAccountId: 'shop-a',
          merchantUrl: 'https://shop.example',
          domainNames: ['shop.example', 'pay.shop.example'],
          at: later,
        },
      },
    ]));

  it('records nothing when nothing changes (the same key included)', () =>
    expect(
      given(registered).when(
        update({
          merchantName: 'Shop',
          domainNames: ['shop.example'],
          decryptionKey: { keyId: 'thumbprint-1', sealed: 'resealed' },
        }),
      ),
    ).toEqual([]));

  it('rotates the key, and clears a field with null', () =>
    expect(
      given(registered).when(
        update({ merchantCountryCode: null, decryptionKey: { keyId: 'thumbprint-2', sealed: 'sealed-2' } }),
      )[0]?.data,
    ).toEqual({
      id,
      merchantAccountId: 'shop-a',
      merchantCountryCode: null,
      decryptionKey: { keyId: 'thumbprint-2', sealed: 'sealed-2' },
      at: later,
    }));

  it('folds updates into its state', () => {
    const rotated = [
      ...registered,
      ...given(registered).when(update({ decryptionKey: { keyId: 'thumbprint-2', sealed: 'sealed-2' } })),
    ];
    expect(given(rotated).when(update({ decryptionKey: { keyId: 'thumbprint-2', sealed: 'again' } }))).toEqual([]);
  });

  it('does not exist under another merchant account', () => {
    expect(() => given(registered).when(update({ merchantName: 'x' }, 'shop-b'))).toThrow(
      refusal('digital_wallet_not_found'),
    );
    expect(() => given(registered).when(remove('shop-b'))).toThrow(refusal('digital_wallet_not_found'));
  });

  it('refuses a key for a wallet of another provider', () => {
    const apple = given([]).when(register({ provider: 'apple', decryptionKey: null }));
    expect(() => given(apple).when(update({ decryptionKey: key }))).toThrow(
      refusal('decryption_key_not_supported', 'decryption_key'),
    );
  });

  it('is deleted once, with its provider; then gone', () => {
    const deleted = given(registered).when(remove());
    expect(deleted).toEqual([
      { type: 'DigitalWalletDeleted', data: { id, merchantAccountId: 'shop-a', provider: 'paze', at: later } },
    ]);
    expect(() => given([...registered, ...deleted]).when(remove())).toThrow(refusal('digital_wallet_not_found'));
    expect(() => given([...registered, ...deleted]).when(update({ merchantName: 'x' }))).toThrow(
      refusal('digital_wallet_not_found'),
    );
  });
});

describe('the provider claim', () => {
  const data = { merchantAccountId: 'shop-a', provider: 'paze' as const };
  const claim = (digitalWalletId: string, replacing?: string): DigitalWalletProviderClaimCommand => ({
    type: 'ClaimDigitalWalletProvider',
    data: { ...data, digitalWalletId, ...(replacing ? { replacing } : {}) },
    metadata: { now },
  });
  const release = (digitalWalletId: string): DigitalWalletProviderClaimCommand => ({
    type: 'ReleaseDigitalWalletProvider',
    data: { ...data, digitalWalletId },
    metadata: { now: later },
  });
  const claimGiven = (events: readonly DigitalWalletProviderClaimEvent[]) => ({
    when: (command: DigitalWalletProviderClaimCommand) =>
      digitalWalletProviderClaim.decide(
        command,
        events.reduce(digitalWalletProviderClaim.evolve, digitalWalletProviderClaim.initialState()),
      ),
  });
  const held = claimGiven([]).when(claim('w1'));

  it('is taken when free, and again by its holder without a new event', () => {
    expect(held).toEqual([{ type: 'DigitalWalletProviderClaimed', data: { ...data, digitalWalletId: 'w1', at: now } }]);
    expect(claimGiven(held).when(claim('w1'))).toEqual([]);
  });

  it('refuses another wallet, naming the holder', () => {
    expect(() => claimGiven(held).when(claim('w2'))).toThrow(DigitalWalletProviderTaken);
    expect(() => claimGiven(held).when(claim('w2'))).toThrow(
      expect.objectContaining({ code: 'digital_wallet_provider_taken', holderId: 'w1' }),
    );
  });

  it('is handed over from a holder found deleted', () =>
    expect(claimGiven(held).when(claim('w2', 'w1'))).toEqual([
      { type: 'DigitalWalletProviderClaimed', data: { ...data, digitalWalletId: 'w2', at: now } },
    ]));

  it('is released by its holder only; then free for another wallet', () => {
    expect(claimGiven(held).when(release('w2'))).toEqual([]);
    const released = [...held, ...claimGiven(held).when(release('w1'))];
    expect(released[1]).toEqual({
      type: 'DigitalWalletProviderReleased',
      data: { ...data, digitalWalletId: 'w1', at: later },
    });
    expect(claimGiven(released).when(claim('w2'))[0]?.data).toMatchObject({ digitalWalletId: 'w2' });
  });
});
