/**
 * The gift cards process's side of its couplings with the transactions process (distributed runtime): the merchant
 * accounts' gift card services (the connections are the transactions service's; the connector is built here, from the
 * connection's definition and fields) and the key hand-over at start. Both over `giftCardDirectoryPatterns`, which
 * rpc-services lets only this service call.
 */
import type { GiftCardLegacyKeys } from '@switchyard/vault';
import { ApiError } from '@switchyard/api';
import { giftCardServiceRegistry, type GiftCardConnector, type MockGiftCardConfig } from '@switchyard/connectors';
import {
  giftCardDirectoryPatterns,
  type ActiveGiftCardServiceWire,
  type GiftCardKeysWire,
  type GiftCardServiceRefWire,
} from '@switchyard/contracts';
import { callUntilAnswered, type CallUntilAnsweredOptions, type RpcClient } from '@switchyard/rpc';
import type { GiftCardServiceRef } from './gift-card';
import type { GiftCardServiceDirectory } from './gift-cards.slice';

/** Where the gift card providers are (MOCK_CARD_URL, MOCK_CARD_TIMEOUT_MS): the simulator serves `mock-gift-card`. */
export interface GiftCardProviderSettings {
  readonly mockCard?: { readonly baseUrl: string; readonly timeoutMs?: number };
}

const refOf = (wire: GiftCardServiceRefWire): GiftCardServiceRef => ({
  id: wire.id,
  definitionId: wire.definition_id,
  displayName: wire.display_name,
});

/** The transactions process's gift card services, each connector built here and rebuilt when its connection changed. */
export function giftCardServicesOverRpc(rpc: RpcClient, providers: GiftCardProviderSettings): GiftCardServiceDirectory {
  const connectors = new Map<string, { readonly updatedAt: string; readonly connector: GiftCardConnector }>();
  const connectorOf = (active: ActiveGiftCardServiceWire): GiftCardConnector => {
    const cached = connectors.get(active.service.id);
    if (cached && cached.updatedAt === active.updated_at) return cached.connector;
    const connector = giftCardConnectorFor(active, providers);
    connectors.set(active.service.id, { updatedAt: active.updated_at, connector });
    return connector;
  };
  return {
    async activeGiftCardService(merchantAccountId) {
      const active = await rpc.call<ActiveGiftCardServiceWire | null>(giftCardDirectoryPatterns.activeService, {
        merchant_account_id: merchantAccountId,
      });
      return active ? { service: refOf(active.service), connector: connectorOf(active) } : null;
    },
    async serviceRef(merchantAccountId, id) {
      const ref = await rpc.call<GiftCardServiceRefWire | null>(giftCardDirectoryPatterns.serviceRef, {
        merchant_account_id: merchantAccountId,
        id,
      });
      return ref ? refOf(ref) : null;
    },
    async giftCardService(merchantAccountId, id) {
      const found = await rpc.call<ActiveGiftCardServiceWire | null>(giftCardDirectoryPatterns.service, {
        merchant_account_id: merchantAccountId,
        id,
      });
      return found ? { service: refOf(found.service), connector: connectorOf(found) } : null;
    },
  };
}

/** A gift card connection's connector, as the transactions service builds it (`ProviderConnectors.giftCardConnectorFor`). */
export function giftCardConnectorFor(
  active: ActiveGiftCardServiceWire,
  providers: GiftCardProviderSettings,
): GiftCardConnector {
  const definitionId = active.service.definition_id;
  const definition = giftCardServiceRegistry.get(definitionId);
  if (!definition)
    throw ApiError.badGateway(new Error(`no gift card service for payment service definition ${definitionId}`));
  switch (definitionId) {
    // The gift card routes live in the same simulator process as the card ones.
    case 'mock-gift-card': {
      const simulator = providers.mockCard;
      if (!simulator) throw ApiError.badGateway(new Error('the mock-card simulator is not configured (MOCK_CARD_URL)'));
      const config: MockGiftCardConfig = {
        baseUrl: simulator.baseUrl,
        merchantId: active.fields.merchant_id ?? active.merchant_account_id,
        ...(simulator.timeoutMs !== undefined ? { timeoutMs: simulator.timeoutMs } : {}),
      };
      return definition.create(config as never);
    }
    default:
      throw ApiError.badGateway(new Error(`payment service definition ${definitionId} has no configuration`));
  }
}

/** The keys the transactions process hands over (`giftCardDirectoryPatterns.keys`): never log them. */
export interface GiftCardKeys {
  readonly legacyKeys: GiftCardLegacyKeys;
  readonly fingerprintKey: Buffer;
}

/**
 * The key hand-over: asks the transactions process for the keys, again every `retryMs` until it answers (it may start
 * after this one). A refusal (a certificate the transactions process does not admit) is not retried.
 */
export async function giftCardKeysOverRpc(rpc: RpcClient, options: CallUntilAnsweredOptions): Promise<GiftCardKeys> {
  const keys = await callUntilAnswered<GiftCardKeysWire>(rpc, giftCardDirectoryPatterns.keys, {}, options);
  return {
    legacyKeys: {
      secret: Buffer.from(keys.legacy_secret_key, 'base64'),
      responses: Buffer.from(keys.legacy_response_key, 'base64'),
    },
    fingerprintKey: Buffer.from(keys.fingerprint_key, 'base64'),
  };
}
