export * from './infra';
export * from './tokens';
export * from './probes';
export * from './processes';
export * from './expectations';
export * from './artifacts';
export * from './rpc-credentials';
export * from './card-data';
