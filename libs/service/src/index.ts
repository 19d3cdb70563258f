export * from './service-host';
export * from './domain-errors';
export * from './keys';
export * from './retention';
export * from './keyed-queue';
