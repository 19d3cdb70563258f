/**
 * The merchant accounts slice over the embedded store, through its RPC handlers (what the gateway and the
 * transactions service call): the network token settings are created, updated, cleared and read back, also after a
 * restart that rebuilds the read model from the log.
 */
import {
  merchantAccountCreateSchema,
  merchantAccountPatterns,
  merchantAccountSchema,
  merchantAccountUpdateSchema,
  type MerchantAccount,
} from '@switchyard/contracts';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { EMBEDDED_CALL } from '@switchyard/rpc';
import { IdentityService } from '../identity-service';
import { createTestDataDir, removeTestDataDir } from '@switchyard/testing';

let dir: string;
let storage: ServiceStorage;
let identity: IdentityService;

const open = async () => {
  storage = openServiceStorage('identity', { dataDir: dir });
  identity = new IdentityService({ store: storage.store, db: storage.db });
  await identity.catchUp();
};

beforeEach(async () => {
  dir = createTestDataDir('merchant-accounts-slice');
  await open();
});
afterEach(async () => {
  await storage.close();
  removeTestDataDir(dir);
});

/** Through the handlers, with the body validated as the gateway would. */
const call = async (pattern: string, payload: unknown): Promise<MerchantAccount> => {
  const handler = identity.rpcHandlers()[pattern];
  if (!handler) throw new Error(`no handler ${pattern}`);
  return merchantAccountSchema.parse(await handler(payload, EMBEDDED_CALL));
};
const create = (body: Record<string, unknown>) =>
  call(merchantAccountPatterns.create, { body: merchantAccountCreateSchema.parse(body) });
const update = (id: string, body: Record<string, unknown>) =>
  call(merchantAccountPatterns.update, { id, body: merchantAccountUpdateSchema.parse(body) });
const get = (id: string) => call(merchantAccountPatterns.get, { id });

describe('network token settings', () => {
  it('default to off, without Discover ids', async () => {
    expect(await create({ id: 'plain', display_name: 'Plain' })).toMatchObject({
      network_tokens_enabled: false,
      discover_network_tokens_requestor_id: null,
      discover_network_tokens_app_id: null,
    });
  });

  it('are created, updated (only what is sent), cleared with null, and read back, also after a rebuild', async () => {
    const created = await create({
      id: 'tokens',
      display_name: 'Tokens',
      network_tokens_enabled: true,
      discover_network_tokens_requestor_id: 'disc-req',
    });
    expect(created).toMatchObject({
      network_tokens_enabled: true,
      discover_network_tokens_requestor_id: 'disc-req',
      discover_network_tokens_app_id: null,
    });

    const updated = await update('tokens', {
      discover_network_tokens_app_id: 'disc-app',
      visa_network_tokens_requestor_id: 'visa-req',
    });
    expect(updated).toMatchObject({
      network_tokens_enabled: true,
      discover_network_tokens_requestor_id: 'disc-req',
      discover_network_tokens_app_id: 'disc-app',
      visa_network_tokens_requestor_id: 'visa-req',
    });
    expect(await get('tokens')).toEqual(updated);

    const cleared = await update('tokens', {
      network_tokens_enabled: false,
      discover_network_tokens_requestor_id: null,
    });
    expect(cleared).toMatchObject({
      network_tokens_enabled: false,
      discover_network_tokens_requestor_id: null,
      discover_network_tokens_app_id: 'disc-app',
    });

    await storage.close();
    await open();
    expect(await get('tokens')).toEqual(cleared);
  });

  it('are refused at the edge when not a boolean or too long (the contract)', () => {
    expect(merchantAccountUpdateSchema.safeParse({ network_tokens_enabled: 'yes' }).success).toBe(false);
    expect(merchantAccountUpdateSchema.safeParse({ discover_network_tokens_app_id: 'x'.repeat(1001) }).success).toBe(
      false,
    );
    expect(merchantAccountUpdateSchema.safeParse({ network_tokens_enabled: null }).success).toBe(false);
  });
});
