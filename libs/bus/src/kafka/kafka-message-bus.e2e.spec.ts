import { kafkaAvailability, messageBusContract } from '../contract';
import { KafkaDeadLetterLog } from './kafka-dead-letter-log';
import { KafkaMessageBus, kafkaBrokersFromEnv, type KafkaMessageBusOptions } from './kafka-message-bus';

const brokers = kafkaBrokersFromEnv();
const client = (options: Partial<KafkaMessageBusOptions> = {}) => async () =>
  new KafkaMessageBus({
    brokers,
    clientId: 'bus-contract',
    onHandlerFailure: () => undefined,
    onDeadLetter: () => undefined,
    redelivery: { initialDelayMs: 50, maxAttempts: 3 },
    ...options,
  });
const contractOptions = { deadLetterLog: async () => new KafkaDeadLetterLog({ brokers, clientId: 'bus-contract-cli' }) };

// An async describe rather than a top-level await, which the repository's CommonJS tsconfig refuses.
describe('Kafka adapter', async () => {
  const availability = await kafkaAvailability(brokers);
  // Topics as the services get them (the broker's num.partitions, 1 on the dev broker) ...
  messageBusContract(`KafkaMessageBus at ${brokers.join(',')}`, client(), availability, contractOptions);
  // ... and with 3 partitions: keys spread over partitions, and two members of a group really share them.
  messageBusContract(`KafkaMessageBus at ${brokers.join(',')}, 3 partitions per topic`, client({ topicPartitions: 3 }), availability, contractOptions);
});
