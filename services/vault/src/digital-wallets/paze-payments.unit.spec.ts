/**
 * Without Paze's signing keys (production, PAZE_SIGNING_KEYS unset) no payload is trusted: each one is refused with
 * its own code, while everything else about the payment is checked as usual.
 */
import { generateKeyPairSync } from 'node:crypto';
import { ApiError } from '@switchyard/api';
import type { DigitalWalletView } from './digital-wallets.read-model';
import { PazePayments, type PazeConnection } from './paze-payments';

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const wallets = {
  pazeKeyFor: () => ({
    wallet: { id: 'w', merchantCountryCode: 'US' } as unknown as DigitalWalletView,
    key: privateKey,
  }),
};
const connection = {
  id: 'c',
  method: 'card',
  acceptedCountries: ['US'],
  networkTokensEnabled: true,
  effectiveCapabilities: { networkTokens: true },
} satisfies PazeConnection;

it('refuses every Paze payload when there are no signing keys to verify it against', async () => {
  const paze = new PazePayments(wallets, () => new Date(), null);
  const refusal = await paze
    .open('m', 'a.b.c', { currency: 'USD', connections: [connection] })
    .catch((error: unknown) => error);
  expect(refusal).toBeInstanceOf(ApiError);
  expect((refusal as ApiError).toBody()).toMatchObject({
    status: 400,
    details: [{ pointer: '/payment_method/token', type: 'paze_signing_keys_not_configured' }],
  });
});
