export * from './message-bus.contract';
export * from './kafka-availability';
