/**
 * The distributed runtime: the gateway and the identity service as separate OS processes, talking over NestJS
 * TCP (request/reply), Kafka (identity.events, which the gateway's key cache follows) and Redis (the shared cache
 * of verified tokens). The operator CLI writes a key into identity's store; the gateway serves it.
 */
import { kafkajs } from '@switchyard/bus/src/kafka/kafkajs';
import { describeWithInfra, kafkaBrokersForTests, runCli, signToken, waitFor } from '@switchyard/testing';
import { distributedInfrastructure, startDistributedRuntime, type DistributedRuntime } from './distributed.fixture';

// kafkajs as the services run it: without its idle check loop (libs/bus/src/kafka/kafkajs.ts).
const { Kafka, logLevel } = kafkajs();

const infrastructure = await distributedInfrastructure();

describeWithInfra(
  'distributed runtime: gateway, identity, transactions and webhooks as separate processes',
  infrastructure,
  () => {
    let runtime: DistributedRuntime;
    let baseUrl: string;
    let secondUrl: string;
    let env: Record<string, string>;

    beforeAll(async () => {
      runtime = await startDistributedRuntime({ name: 'distributed' });
      ({ baseUrl, secondUrl } = runtime);
      env = { ...runtime.env };
    });

    afterAll(() => runtime?.stop());

    it('reports every adapter on /readyz', async () => {
      const body = await (await fetch(`${baseUrl}/readyz`)).json();
      expect(body).toEqual({
        status: 'ready',
        checks: {
          identity: 'ok',
          transactions: 'ok',
          vault: 'ok',
          'gift-cards': 'ok',
          webhooks: 'ok',
          bus: 'ok',
          cache: 'ok',
        },
      });
    });

    it('lists roles through the gateway with a key the CLI made while both run', async () => {
      const { stdout } = await runCli(env, 'api-keys', 'create', '--display-name', 'e2e', '--role', 'analyst');
      const key = JSON.parse(stdout) as { id: string; kid: string; private_key: string };
      const token = await signToken({ kid: key.kid, privateKeyPem: key.private_key, scopes: ['*.read'] });

      const roles = await waitFor(
        'the new key accepted',
        async () => {
          const response = await fetch(`${baseUrl}/roles`, { headers: { authorization: `Bearer ${token}` } });
          return response.status === 200 ? ((await response.json()) as { items: { slug: string }[] }) : undefined;
        },
        2_000,
      );
      expect(roles.items).toHaveLength(6);

      const forbidden = await signToken({ kid: key.kid, privateKeyPem: key.private_key, scopes: ['buyers.read'] });
      expect((await fetch(`${baseUrl}/roles`, { headers: { authorization: `Bearer ${forbidden}` } })).status).toBe(403);

      // The identity process relayed the key's event to Kafka, where the gateway's key cache follows it.
      const consumer = new Kafka({
        clientId: 'e2e-check',
        brokers: kafkaBrokersForTests(),
        logLevel: logLevel.NOTHING,
      }).consumer({
        groupId: `e2e-check-${Date.now()}`,
        maxWaitTimeInMs: 50,
      });
      await consumer.connect();
      await consumer.subscribe({ topic: 'identity.events', fromBeginning: true });
      const seen = new Promise<string>((resolve) => {
        void consumer.run({
          eachMessage: async ({ message }) => {
            const event = JSON.parse(message.value?.toString() ?? '{}') as { type: string; data: { id?: string } };
            if (event.type === 'ApiKeyPairCreated' && event.data.id === key.id)
              resolve(message.headers?.['event-id']?.toString() ?? '');
          },
        });
      });
      const eventId = await Promise.race([
        seen,
        new Promise<string>((_, reject) =>
          setTimeout(() => reject(new Error('no ApiKeyPairCreated on identity.events within 15 s')), 15_000),
        ),
      ]);
      expect(eventId).toMatch(/.+/);
      await consumer.disconnect();
    });

    it('revokes a key on its very next request, and on another gateway instance through identity.events', async () => {
      const cli = async (...args: string[]) =>
        JSON.parse((await runCli(env, ...args)).stdout) as { id: string; kid: string; private_key: string };
      const manager = await cli(
        'api-keys',
        'create',
        '--display-name',
        'manager',
        '--role',
        'key-manager',
        '--role',
        'integration',
      );
      const target = await cli('api-keys', 'create', '--display-name', 'target', '--role', 'integration');
      const managerToken = await signToken({ kid: manager.kid, privateKeyPem: manager.private_key });
      const targetToken = await signToken({
        kid: target.kid,
        privateKeyPem: target.private_key,
        scopes: ['roles.read'],
      });
      const roles = (url: string) =>
        fetch(`${url}/roles`, { headers: { authorization: `Bearer ${targetToken}` } }).then((r) => r.status);

      // Both gateways know (and cache) the key.
      await waitFor(
        'the key accepted by both gateways',
        async () => ((await roles(baseUrl)) === 200 && (await roles(secondUrl)) === 200 ? true : undefined),
        5_000,
      );

      const revoked = await fetch(`${baseUrl}/api-key-pairs/${target.id}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${managerToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ active: false }),
      });
      expect(revoked.status).toBe(200);
      const revokedAt = Date.now();
      expect(await roles(baseUrl)).toBe(401); // the gateway that made the change: the very next request
      await waitFor(
        'the other gateway refusing the key',
        async () => ((await roles(secondUrl)) === 401 ? true : undefined),
        5_000,
      );
      console.log(`revocation reached the second gateway through identity.events in ${Date.now() - revokedAt} ms`);
    });

    it('answers 401 in the spec body through the separate processes', async () => {
      const response = await fetch(`${baseUrl}/roles`);
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ type: 'error', code: 'unauthorized', status: 401 });
    });
  },
);
