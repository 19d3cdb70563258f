export * from './message-bus';
export * from './redelivery';
export * from './dedupe';
export * from './in-process/in-process-broker';
export * from './in-process/in-process-message-bus';
export * from './kafka/kafka-message-bus';
