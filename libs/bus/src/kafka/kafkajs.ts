import type * as KafkaJs from 'kafkajs';

/**
 * kafkajs, loaded by the first Kafka client of the process: the embedded runtime, whose bus is in process, never loads
 * it (143 modules, about 18 MB; docs/performance.md, Start-up and memory). Node caches it after the first call.
 */
export function kafkajs(): typeof KafkaJs {
  return require('kafkajs') as typeof KafkaJs;
}
