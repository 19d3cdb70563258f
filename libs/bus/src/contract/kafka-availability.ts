import type { Availability } from '@switchyard/testing';
import { KafkaMessageBus } from '../kafka/kafka-message-bus';

/**
 * Whether a Kafka broker answers at `brokers`, for `describeWithInfra`. Bounded: one connection attempt with
 * no kafkajs retries, given up after `timeoutMs`, so an absent broker costs a suite a few seconds at most.
 */
export async function kafkaAvailability(brokers: readonly string[], timeoutMs = 2_500): Promise<Availability> {
  const probe = new KafkaMessageBus({
    brokers,
    clientId: 'switchyard-kafka-probe',
    retries: 0,
    connectionTimeoutMs: timeoutMs,
    pingTimeoutMs: timeoutMs,
    logLevel: 'nothing',
  });
  try {
    await probe.ping();
    return { available: true };
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return {
      available: false,
      reason: `Kafka unreachable at ${brokers.join(',')} (set KAFKA_BROKERS, or start one with: bash scripts/kafka.sh start): ${why}`,
    };
  } finally {
    await probe.close();
  }
}
