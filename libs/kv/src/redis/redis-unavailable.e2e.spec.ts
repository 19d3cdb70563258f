import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeWithInfra } from '@switchyard/testing';
import { KeyValueUnavailableError, type KeyValueStore } from '../key-value-store';
import { probeRedis } from './probe-redis';
import { RedisKeyValueStore, defaultRedisUrl } from './redis-key-value-store';

// What keeps the gateway up when Redis is down: every call fails fast with a retriable error instead of hanging,
// and the store comes back by itself. Nothing here reads a clock. "Fast" is shown by order: with nothing
// listening, the store's own timeout is set far beyond the test's (30 s), so only a call that fails at once lets
// the test finish; a call to a frozen Redis must fail while Redis is still frozen.

/** Longer than any test may run: a call that waited for it would fail the test by its timeout instead. */
const NEVER_MS = 10 * 60_000;

const operations: ReadonlyArray<readonly [string, (store: KeyValueStore) => Promise<unknown>]> = [
  ['get', (store) => store.get('k')],
  ['set', (store) => store.set('k', 'v', { ttlMs: 1_000 })],
  ['set ifAbsent', (store) => store.set('k', 'v', { ifAbsent: true })],
  ['compareAndSet', (store) => store.compareAndSet('k', null, 'v')],
  ['increment', (store) => store.increment('k')],
  ['increment with ttl', (store) => store.increment('k', { ttlMs: 1_000 })],
  ['ttl', (store) => store.ttl('k')],
  ['delete', (store) => store.delete('k')],
  ['ping', (store) => store.ping()],
];

async function expectUnavailable(call: Promise<unknown>): Promise<void> {
  const error = await call.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  expect(error).toBeInstanceOf(KeyValueUnavailableError);
  expect(error).toMatchObject({ type: 'key_value_unavailable', retriable: true });
}

describe('RedisKeyValueStore with nothing listening', () => {
  const stores: RedisKeyValueStore[] = [];
  const storeAtClosedPort = (): RedisKeyValueStore => {
    const store = new RedisKeyValueStore({ url: 'redis://127.0.0.1:1', timeoutMs: NEVER_MS });
    stores.push(store);
    return store;
  };
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
  });

  it.each(operations)('rejects %s right after start-up, fast and retriable', async (_, operation) => {
    await expectUnavailable(operation(storeAtClosedPort()));
  });

  describe('a few reconnection attempts in', () => {
    let store: RedisKeyValueStore;
    beforeAll(async () => {
      store = storeAtClosedPort();
      await sleep(250);
    });

    it.each(operations)('rejects %s, fast and retriable', async (_, operation) => {
      await expectUnavailable(operation(store));
    });
  });

  it('names the connection failure in the error', async () => {
    const error = await storeAtClosedPort()
      .get('k')
      .catch((rejection: unknown) => rejection);
    expect((error as Error).message).toMatch(/ECONNREFUSED/);
  });
});

describe('RedisKeyValueStore against a server that accepts connections but never answers', () => {
  const silent = net.createServer(() => undefined);
  const sockets = new Set<net.Socket>();
  silent.on('connection', (socket) => sockets.add(socket));
  let store: RedisKeyValueStore;

  beforeAll(async () => {
    await new Promise<void>((listening) => silent.listen(0, '127.0.0.1', listening));
    store = new RedisKeyValueStore({ url: `redis://127.0.0.1:${(silent.address() as net.AddressInfo).port}` });
  });
  afterAll(async () => {
    await store?.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((closed) => silent.close(closed));
  });

  it('rejects a call within the timeout, retriable', async () => {
    await expectUnavailable(store.set('k', 'v'));
    await expectUnavailable(store.ping());
  });
});

/**
 * Stands between the store and the real Redis, so a test can take Redis away (`stop`), bring it back (`start`), or
 * make it stop answering without closing anything (`freeze`, as a stopped process or a stalled network would).
 */
class RedisProxy {
  private server: net.Server | undefined;
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  private frozen = false;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target);
      const pair = { client, upstream };
      this.pairs.add(pair);
      const drop = (): void => {
        client.destroy();
        upstream.destroy();
        this.pairs.delete(pair);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      upstream.pipe(client);
      if (!this.frozen) client.pipe(upstream);
    });
    await new Promise<void>((listening) => server.listen(this.port, '127.0.0.1', listening));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
    if (server) await new Promise((closed) => server.close(closed));
  }

  /** Requests are held, not lost: they reach Redis, in order, on `thaw`. */
  freeze(): void {
    this.frozen = true;
    for (const { client, upstream } of this.pairs) {
      client.unpipe(upstream);
      client.pause();
    }
  }

  thaw(): void {
    this.frozen = false;
    for (const { client, upstream } of this.pairs) client.pipe(upstream);
  }
}

describe('RedisKeyValueStore when Redis goes away and comes back', async () => {
  const availability = await probeRedis();
  describeWithInfra('through a proxy to the real Redis', availability, () => {
    const redisUrl = new URL(defaultRedisUrl());
    const proxy = new RedisProxy({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
    let store: RedisKeyValueStore;
    const key = `kv-unavailable:${process.pid}:${Date.now()}`;

    beforeAll(async () => {
      await proxy.start();
      const viaProxy = new URL(redisUrl);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      store = new RedisKeyValueStore({ url: viaProxy.toString(), keyPrefix: 'switchyard-test:' });
    });
    afterAll(async () => {
      proxy.thaw();
      await store?.delete(`${key}:a`).catch(() => undefined);
      await store?.delete(`${key}:b`).catch(() => undefined);
      await store?.close();
      await proxy.stop();
    });

    /** Pings until one succeeds, with no call to reconnect: true once it does (the bound is a guard, not a measure). */
    const recovers = async (): Promise<boolean> => {
      for (let ping = 0; ping < 1_000; ping++) {
        if (
          await store.ping().then(
            () => true,
            () => false,
          )
        )
          return true;
        await sleep(20);
      }
      return false;
    };

    it('fails fast while Redis is away and recovers by itself once it is back', async () => {
      await store.set(`${key}:a`, 'kept');
      await proxy.stop();
      for (const [, operation] of operations) await expectUnavailable(operation(store));

      await proxy.start();
      expect(await recovers()).toBe(true);
      expect(await store.get(`${key}:a`)).toBe('kept');
    });

    it('times a call out when Redis stops answering, and answers correctly once it resumes', async () => {
      await store.set(`${key}:a`, 'A');
      await store.set(`${key}:b`, 'B');
      proxy.freeze();
      // Redis stays frozen until the call has failed: it cannot have waited for Redis to answer.
      await expectUnavailable(store.get(`${key}:a`));

      proxy.thaw();
      // The late reply to the timed-out call must not be taken for the answer to the next one.
      expect(await recovers()).toBe(true);
      expect(await store.get(`${key}:b`)).toBe('B');
      expect(await store.get(`${key}:a`)).toBe('A');
    });
  });
});
