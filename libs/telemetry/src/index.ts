export * from './request-context';
export * from './tracing';
export * from './propagation';
export * from './rpc';
