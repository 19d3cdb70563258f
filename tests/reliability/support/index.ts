/** Shared helpers of the reliability suites (crash, fault): see each file. */
export * from './crash-loop';
export * from './crash-report';
export * from './distributed-processes';
export * from './http-api';
export * from './load';
export * from './provider';
export * from './random';
export * from './relayed-events';
export * from './results';
export * from './standalone-process';
export * from './verify';
export * from './webhooks';
