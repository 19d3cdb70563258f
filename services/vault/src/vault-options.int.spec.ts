/**
 * The vault's settings as `vaultOptionsFrom` reads them: the forwarder's own list of hosts comes from the vault's
 * settings (VAULT_FORWARD_HOSTS, MOCK_CARD_URL, THREE_DS_DIRECTORY_URL), never from a caller.
 */
import { loadSettings } from '@switchyard/config';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';
import { vaultOptionsFrom } from './vault-options';

let dir: string;
beforeEach(() => {
  dir = createTestDataDir('vault-options');
});
afterEach(() => removeTestDataDir(dir));

it("the forwarder's hosts: the providers', the simulator's and directory's settings, VAULT_FORWARD_HOSTS and loopback", () => {
  const { forwardHosts } = vaultOptionsFrom(
    loadSettings({
      DATA_DIR: dir,
      MOCK_CARD_URL: 'http://simulator:4010',
      THREE_DS_DIRECTORY_URL: 'https://directory.example/3ds',
      VAULT_FORWARD_HOSTS: 'adyen-proxy.corp.example:8443',
    }),
  );
  for (const host of [
    'simulator:4010',
    'directory.example',
    'adyen-proxy.corp.example:8443',
    'checkout-test.adyen.com',
    'api.stripe.com',
    '127.0.0.1:9999',
  ])
    expect(forwardHosts(host), host).toBe(true);
  for (const host of ['evil.example', 'simulator:4011', 'adyen-proxy.corp.example'])
    expect(forwardHosts(host), host).toBe(false);
});

it('refuses a VAULT_FORWARD_HOSTS that is not a list of host[:port] patterns', () => {
  expect(() => loadSettings({ DATA_DIR: dir, VAULT_FORWARD_HOSTS: 'https://x.example/path' })).toThrow(
    /VAULT_FORWARD_HOSTS/,
  );
});
