export * from './service-host';
export * from './domain-errors';
