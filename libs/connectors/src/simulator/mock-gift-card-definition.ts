import { hostOf } from '../provider-fetch';
import type { GiftCardServiceDefinition } from '../gift-card';
import { MockGiftCardConnector, type MockGiftCardConfig } from './mock-gift-card-connector';

/**
 * The simulator's gift card provider (Gr4vy's `mock-gift-card`): outcomes follow the card's PIN (docs/simulator.md).
 */
export const mockGiftCardDefinition: GiftCardServiceDefinition<MockGiftCardConfig> = {
  id: 'mock-gift-card',
  displayName: 'Gift card simulator',
  hosts: (config) => [hostOf(config.baseUrl)],
  create: (config) => new MockGiftCardConnector(config, mockGiftCardDefinition),
};
