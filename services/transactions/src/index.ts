export * from './transactions-service';
export * from './transactions-relay';
