import type { Availability } from '@switchyard/testing';
import { Redis } from 'ioredis';
import { defaultRedisUrl } from './redis-key-value-store';

/**
 * Whether a Redis answers PING at `url` within `timeoutMs`, for suites that need one. Independent of the
 * adapter under test, so a broken adapter fails its suite instead of skipping it.
 */
export async function probeRedis(url: string = defaultRedisUrl(), timeoutMs = 500): Promise<Availability> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  let connectionError: Error | undefined;
  client.on('error', (error: Error) => {
    connectionError = error; // more telling than the "Connection is closed." that connect() rejects with
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([client.connect().then(() => client.ping()), deadline]);
    return { available: true };
  } catch (error) {
    const detail = connectionError?.message ?? (error instanceof Error ? error.message : String(error));
    return {
      available: false,
      reason: `no Redis answering at ${redacted(url)} (${detail}); start one there or point REDIS_URL at one`,
    };
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}

function redacted(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable REDIS_URL)';
  }
}
