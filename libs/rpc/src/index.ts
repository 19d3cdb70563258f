export * from './rpc';
export * from './in-process-rpc';
export * from './tcp-rpc';
export * from './routing-rpc';
export * from './rpc-services';
export * from './rpc-credentials';
export * from './merchant-accounts-over-rpc';
export * from './call-until-answered';
