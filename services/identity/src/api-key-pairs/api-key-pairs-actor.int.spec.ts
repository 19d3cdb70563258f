/**
 * Who manages API key pairs over RPC is the call's actor — which the transport authenticated with the calling service —
 * never a field of the payload (issue 22, item 1): before, identity read `payload.actor`, so a payload naming any
 * dashboard user made an administrator key.
 */
import { ApiError } from '@switchyard/api';
import { apiKeyPairPatterns, type CreatedApiKeyPair } from '@switchyard/contracts';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { EMBEDDED_CALL, type RpcCall } from '@switchyard/rpc';
import { IdentityService } from '../identity-service';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';

let dir: string;
let storage: ServiceStorage;
let identity: IdentityService;

beforeEach(async () => {
  dir = createTestDataDir('api-key-pairs-actor');
  storage = openServiceStorage('identity', { dataDir: dir });
  identity = new IdentityService({ store: storage.store, db: storage.db });
  await identity.start();
});
afterEach(async () => {
  await identity.stop();
  await storage.close();
  removeTestDataDir(dir);
});

const create = (payload: unknown, call: RpcCall) => identity.rpcHandlers()[apiKeyPairPatterns.create]!(payload, call);
const names = () => identity.apiKeyPairs.list({ limit: 100 }).items.map((pair) => pair.display_name);

it('refuses a change whose call names no actor, whatever the payload says (403), and makes nothing', async () => {
  const payload = {
    body: { display_name: 'from-payload', role_ids: ['administrator'] },
    actor: { user_id: 'someone' },
  };
  const error = await create(payload, EMBEDDED_CALL).catch((reason: unknown) => reason);
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).status).toBe(403);
  expect(names()).not.toContain('from-payload');
});

it('takes the assigner from the call: a dashboard user may make an administrator key, an API key may not', async () => {
  const admin = await identity.users.create({
    email: 'admin@example.com',
    display_name: 'Admin',
    roles: ['administrator'],
  });
  const asUser = { caller: 'gateway', actor: { type: 'dashboard-user', id: admin.id } } as const;
  const created = (await create(
    { body: { display_name: 'by-user', role_ids: ['administrator'] } },
    asUser,
  )) as CreatedApiKeyPair;
  expect(created.private_key).toContain('PRIVATE KEY');
  const asKey = { caller: 'gateway', actor: { type: 'api-key-pair', id: created.id } } as const;
  const error = await create({ body: { display_name: 'by-key', role_ids: ['administrator'] } }, asKey).catch(
    (reason: unknown) => reason,
  );
  expect((error as ApiError).status).toBe(403);
  expect(names()).toEqual(['by-user']);
});
