import { ApiError } from '@switchyard/api';
import { threeDsConfigurationPatterns } from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import { ThreeDsConfigurationCache } from './three-ds-configuration-cache';

/** Identity as the cache sees it: each account's configurations, each ask counted, an answer held back on demand. */
function identity() {
  const configurations = new Map<string, { id: string }[]>();
  const asked: string[] = [];
  let failNext: Error | null = null;
  let holdNext: Promise<void> | null = null;
  const rpc: RpcClient = {
    call: async <T>(pattern: string, payload: unknown): Promise<T> => {
      expect(pattern).toBe(threeDsConfigurationPatterns.list);
      const account = (payload as { merchant_account_id: string }).merchant_account_id;
      asked.push(account);
      const answer = { items: [...(configurations.get(account) ?? [])] };
      if (holdNext) {
        const hold = holdNext;
        holdNext = null;
        await hold;
      }
      if (failNext) {
        const error = failNext;
        failNext = null;
        throw error;
      }
      if (!configurations.has(account)) throw ApiError.notFound('no such merchant account');
      return answer as T;
    },
  } as RpcClient;
  return {
    rpc,
    asked,
    configurations,
    failNextWith: (error: Error) => void (failNext = error),
    holdNextUntil: (until: Promise<void>) => void (holdNext = until),
  };
}

it('asks identity once per account and answers from memory until the entry is too old', async () => {
  const id = identity();
  id.configurations.set('a', [{ id: 'c1' }]);
  let now = 0;
  const cache = new ThreeDsConfigurationCache(id.rpc, 1_000, () => now);

  expect(await cache.list('a')).toEqual([{ id: 'c1' }]);
  expect(await cache.list('a')).toEqual([{ id: 'c1' }]);
  expect(id.asked).toEqual(['a']);

  id.configurations.set('a', [{ id: 'c1' }, { id: 'c2' }]);
  now = 999;
  expect(await cache.list('a')).toEqual([{ id: 'c1' }]);
  now = 1_000;
  expect(await cache.list('a')).toEqual([{ id: 'c1' }, { id: 'c2' }]);
  expect(id.asked).toEqual(['a', 'a']);
});

it("forgets an account on forget() and on identity's 3-D Secure configuration events, for that account only", async () => {
  const id = identity();
  id.configurations.set('a', [{ id: 'c1' }]);
  id.configurations.set('b', [{ id: 'c9' }]);
  const cache = new ThreeDsConfigurationCache(id.rpc);
  await cache.list('a');
  await cache.list('b');

  id.configurations.set('a', []);
  cache.observe({ type: 'ApiKeyPairUpdated', data: { id: 'k', merchantAccountId: 'a' } });
  expect(await cache.list('a')).toEqual([{ id: 'c1' }]);

  for (const type of ['ThreeDsConfigurationCreated', 'ThreeDsConfigurationUpdated', 'ThreeDsConfigurationDeleted']) {
    id.configurations.set('a', [{ id: type }]);
    cache.observe({ type, data: { id: 'c1', merchantAccountId: 'a', at: '2026-11-27T00:00:00Z' } });
    expect(await cache.list('a')).toEqual([{ id: type }]);
  }
  id.configurations.set('a', [{ id: 'after-forget' }]);
  cache.forget('a');
  expect(await cache.list('a')).toEqual([{ id: 'after-forget' }]);
  expect(await cache.list('b')).toEqual([{ id: 'c9' }]);
  expect(id.asked.filter((account) => account === 'b')).toHaveLength(1);

  // An event that does not say which account: everything is asked again.
  id.configurations.set('b', []);
  cache.observe({ type: 'ThreeDsConfigurationDeleted', data: {} });
  expect(await cache.list('b')).toEqual([]);
});

it('keeps no failed answer, answers none for an account identity does not know, and keeps no answer asked before a forget', async () => {
  const id = identity();
  const cache = new ThreeDsConfigurationCache(id.rpc);
  expect(await cache.list('unknown')).toEqual([]);

  id.configurations.set('a', [{ id: 'c1' }]);
  id.failNextWith(ApiError.badGateway(new Error('identity is down')));
  await expect(cache.list('a')).rejects.toMatchObject({ status: 502 });
  expect(await cache.list('a')).toEqual([{ id: 'c1' }]);

  // Asked before a change, answered after it: the answer is the caller's, not the cache's.
  cache.forget('a');
  let release!: () => void;
  id.holdNextUntil(new Promise<void>((resolve) => (release = resolve)));
  const before = cache.list('a');
  id.configurations.set('a', [{ id: 'c2' }]);
  cache.forget('a');
  release();
  expect(await before).toEqual([{ id: 'c1' }]);
  expect(await cache.list('a')).toEqual([{ id: 'c2' }]);
});
