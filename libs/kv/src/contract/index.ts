export { keyValueContract } from './key-value.contract';
export { probeRedis } from '../redis/probe-redis';
