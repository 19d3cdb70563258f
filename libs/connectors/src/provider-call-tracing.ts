/**
 * A span per provider operation of a connection (`provider authorize`, `provider capture`, …): which connection,
 * our reference, the amount and currency asked, the outcome and the provider's codes. Built from named fields only,
 * so the card, the network token and everything else of the payment instrument never reach a span. The HTTP
 * requests the connector makes are its child spans (simulator-http-client.ts).
 */
import { setAttributes, tracingEnabled, withSpan } from '@switchyard/telemetry';
import type { Connector } from './connector';

const operations: ReadonlySet<PropertyKey> = new Set<keyof Connector>([
  'authorize',
  'capture',
  'void',
  'cancel',
  'refund',
  'incrementAuthorization',
  'sync',
]);

const field = (value: unknown, name: string): string | number | undefined => {
  const found = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
  return typeof found === 'string' || typeof found === 'number' ? found : undefined;
};

const requestAttributes = (request: unknown) => ({
  reference: field(request, 'reference'),
  amount: field(request, 'amount'),
  currency: field(request, 'currency'),
  provider_transaction_id: field(request, 'providerTransactionId'),
  refund_reference: field(request, 'refundReference'),
});

const answerAttributes = (answer: unknown) => ({
  outcome: field(answer, 'outcome'),
  error_code: field(answer, 'errorCode'),
  raw_response_code: field(answer, 'rawResponseCode'),
  provider_transaction_id: field(answer, 'providerTransactionId'),
});

/** The connector of a connection with its provider operations traced; itself while tracing is off. */
export function tracedConnector(connector: Connector, paymentServiceId: string): Connector {
  if (!tracingEnabled()) return connector;
  return new Proxy(connector, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== 'function') return value;
      if (!operations.has(property)) return value.bind(object);
      const operation = String(property);
      return (request: unknown) =>
        withSpan(
          `provider ${operation}`,
          {
            attributes: {
              operation,
              payment_service_id: paymentServiceId,
              payment_service_definition_id: object.definitionId,
              ...requestAttributes(request),
            },
          },
          async (span) => {
            const answer: unknown = await value.call(object, request);
            setAttributes(span, answerAttributes(answer));
            return answer;
          },
        );
    },
  });
}
