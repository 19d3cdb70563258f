/**
 * Times every call a connector makes to its provider (`switchyard_provider_request_duration_seconds`, by payment
 * service definition and operation). The registries wrap each connector they create, so a new provider is timed
 * without a line of its own. A capability refusal is answered without calling out: it is not a provider call.
 */
import { observeProviderCall, secondsSince } from '@switchyard/metrics';
import type { Connector } from './connector';
import type { GiftCardConnector } from './gift-card';

const connectorOperations: ReadonlySet<PropertyKey> = new Set<keyof Connector>([
  'authorize',
  'capture',
  'void',
  'cancel',
  'refund',
  'incrementAuthorization',
  'sync',
]);
const giftCardOperations: ReadonlySet<PropertyKey> = new Set<keyof GiftCardConnector>([
  'balance',
  'issue',
  'activate',
  'redeem',
  'reverse',
  'refund',
]);

const isCapabilityRefusal = (answer: unknown): boolean =>
  typeof answer === 'object' && answer !== null && (answer as { reason?: unknown }).reason === 'capability_disabled';

function timed<T extends object>(target: T, definitionId: string, operations: ReadonlySet<PropertyKey>): T {
  return new Proxy(target, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== 'function') return value;
      if (!operations.has(property)) return value.bind(object);
      const operation = String(property);
      return async (...args: unknown[]) => {
        const startedAt = performance.now();
        try {
          const answer: unknown = await value.apply(object, args);
          if (!isCapabilityRefusal(answer)) observeProviderCall(definitionId, operation, secondsSince(startedAt));
          return answer;
        } catch (error) {
          observeProviderCall(definitionId, operation, secondsSince(startedAt));
          throw error;
        }
      };
    },
  });
}

export const timedConnector = (connector: Connector, definitionId: string): Connector =>
  timed(connector, definitionId, connectorOperations);

export const timedGiftCardConnector = (connector: GiftCardConnector, definitionId: string): GiftCardConnector =>
  timed(connector, definitionId, giftCardOperations);
