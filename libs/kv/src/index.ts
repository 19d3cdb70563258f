export * from './key-value-store';
export { InMemoryKeyValueStore, type InMemoryKeyValueStoreOptions } from './memory/in-memory-key-value-store';
export { RedisKeyValueStore, defaultRedisUrl, type RedisKeyValueStoreOptions } from './redis/redis-key-value-store';
