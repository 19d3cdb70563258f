export * from './scopes';
export * from './keys';
export * from './token-verifier';
export * from './verified-token-cache';
export * from './signature-pool';
