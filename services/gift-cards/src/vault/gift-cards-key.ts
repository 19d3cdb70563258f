import { loadOrCreateKey } from '@switchyard/service';

/**
 * The gift cards service's key (its vault's number/PIN ciphertexts and sealed answers): `GIFT_CARDS_KEY`, else
 * `DATA_DIR/gift-cards.key` (created 0600 on first start), else — neither given — a random key for tests that keep
 * nothing.
 */
export function loadGiftCardsKey(options: { configured?: string | undefined; dataDir?: string }): Buffer {
  return loadOrCreateKey({
    ...(options.configured !== undefined ? { configured: options.configured } : {}),
    ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
    fileName: 'gift-cards.key',
    settingName: 'GIFT_CARDS_KEY',
  });
}
