export * from './subscription-directory';
