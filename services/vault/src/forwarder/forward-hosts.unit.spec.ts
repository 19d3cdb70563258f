/**
 * The vault's own list of hosts a card may be forwarded to: the providers' hosts as their definitions name them, the
 * vault's settings that name a provider, the operator's VAULT_FORWARD_HOSTS and loopback; nothing else, whatever a
 * caller declares.
 */
import { connectorRegistry } from '@switchyard/connectors';
import { forwardHosts } from './forward-hosts';

describe('forwardHosts', () => {
  const defaults = forwardHosts({ definitions: connectorRegistry.list() });

  it("allows the providers' own hosts: Adyen's test and live checkout, Stripe's API", () => {
    expect(defaults('checkout-test.adyen.com')).toBe(true);
    expect(defaults('1797a841fbb37ca7-AdyenDemo-checkout-live.adyenpayments.com')).toBe(true);
    expect(defaults('api.stripe.com')).toBe(true);
  });

  it('refuses any other host, a look-alike of a provider, or a provider host with another port', () => {
    for (const host of [
      'evil.example',
      'checkout-test.adyen.com.evil.example',
      'a.b-checkout-live.adyenpayments.com',
      'api.stripe.com:8443',
      'apistripe.com',
      '10.0.0.5:4010',
      '128.0.0.1',
    ])
      expect(defaults(host), host).toBe(false);
  });

  it('allows loopback, on any port', () => {
    for (const host of ['127.0.0.1:4010', '127.1.2.3', 'localhost:8080', '[::1]:9000'])
      expect(defaults(host), host).toBe(true);
  });

  it("adds the hosts of the vault's settings and of VAULT_FORWARD_HOSTS, with * for one label's characters", () => {
    const configured = forwardHosts({
      definitions: connectorRegistry.list(),
      settingsUrls: ['http://simulator:4010', undefined],
      configured: ' adyen-proxy.corp.example:8443 , *.psp.example',
    });
    expect(configured('simulator:4010')).toBe(true);
    expect(configured('simulator:4011')).toBe(false);
    expect(configured('adyen-proxy.corp.example:8443')).toBe(true);
    expect(configured('adyen-proxy.corp.example')).toBe(false);
    expect(configured('eu.psp.example')).toBe(true);
    expect(configured('a.eu.psp.example')).toBe(false);
    expect(configured('api.stripe.com')).toBe(true);
  });
});
