export * from './rpc';
export * from './in-process-rpc';
export * from './message-port-rpc';
export * from './routing-rpc';
export * from './rpc-services';
export * from './rpc-credentials';
export * from './merchant-accounts-over-rpc';
export * from './call-until-answered';
// RPC over TCP (NestJS microservices: Nest's core and rxjs) is `@switchyard/rpc/src/tcp-rpc`, imported by the
// distributed runtime's processes: a thread that only calls in process or over a MessagePort (the vault's, in the
// embedded runtime) never loads Nest (docs/performance.md, Start-up and memory).
