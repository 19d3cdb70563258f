export * from './transactions-service';
export * from './transactions-relay';
export { loadVaultKey } from './vault/card-vault';
