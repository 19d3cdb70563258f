export * from './rpc';
export * from './in-process-rpc';
export * from './tcp-rpc';
export * from './routing-rpc';
