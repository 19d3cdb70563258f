/**
 * TRUSTED_PROXIES: none by default; addresses, CIDR ranges and proxy-addr's named ranges; anything else stops start-up.
 */
import { loadSettings } from './index';

it('trusts no proxy by default', () => {
  expect(loadSettings({}).TRUSTED_PROXIES).toEqual([]);
  expect(loadSettings({ TRUSTED_PROXIES: '' }).TRUSTED_PROXIES).toEqual([]);
});

it('reads addresses, CIDR ranges and named ranges, comma-separated', () => {
  expect(loadSettings({ TRUSTED_PROXIES: '10.0.0.0/8, 192.168.1.4,fd00::/8 ,loopback' }).TRUSTED_PROXIES).toEqual([
    '10.0.0.0/8',
    '192.168.1.4',
    'fd00::/8',
    'loopback',
  ]);
});

it('stops start-up on anything else, naming the setting', () => {
  for (const value of ['true', '*', '10.0.0.0/33', 'proxy.internal', '10.0.0.1/8/2']) {
    expect(() => loadSettings({ TRUSTED_PROXIES: value })).toThrow(/TRUSTED_PROXIES/);
  }
});
