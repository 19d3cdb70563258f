export * from './identity';
export * from './events';
export * from './api-key-pairs';
export * from './merchant-accounts';
export * from './transactions';
export * from './payment-services';
export * from './webhooks';
export * from './flow-rules';
