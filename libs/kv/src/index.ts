export * from './key-value-store';
export { InMemoryKeyValueStore, type InMemoryKeyValueStoreOptions } from './memory/in-memory-key-value-store';
export { RedisKeyValueStore, defaultRedisUrl, type RedisKeyValueStoreOptions } from './redis/redis-key-value-store';
export * from './rate-limiter';
export { InMemoryRateLimiter, type InMemoryRateLimiterOptions } from './memory/in-memory-rate-limiter';
export { RedisRateLimiter, type RedisRateLimiterOptions } from './redis/redis-rate-limiter';
export { FallbackRateLimiter, type FallbackRateLimiterOptions } from './fallback-rate-limiter';
