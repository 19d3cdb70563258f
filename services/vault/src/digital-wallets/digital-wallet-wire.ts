/** Digital wallets as the API shows them (`DigitalWallet`): a Paze wallet's key by its thumbprint only. */
import type { DigitalWallet } from '@switchyard/contracts';
import type { DigitalWalletView } from './digital-wallets.read-model';

export function toDigitalWallet(wallet: DigitalWalletView): DigitalWallet {
  return {
    type: 'digital-wallet',
    id: wallet.id,
    merchant_account_id: wallet.merchantAccountId,
    provider: wallet.provider,
    merchant_name: wallet.merchantName,
    merchant_display_name: wallet.merchantDisplayName,
    merchant_url: wallet.merchantUrl,
    merchant_country_code: wallet.merchantCountryCode,
    domain_names: [...wallet.domainNames],
    // No Apple Pay certificate management yet.
    active_certificate_count: 0,
    pending_certificate_count: 0,
    expired_certificate_count: 0,
    fields: wallet.decryptionKeyId !== null ? { decryption_key_id: wallet.decryptionKeyId } : null,
    created_at: wallet.createdAt,
    updated_at: wallet.updatedAt,
  };
}
