export * from './api-error';
export * from './validation';
export * from './pagination';
export * from './endpoint';
export * from './openapi';
