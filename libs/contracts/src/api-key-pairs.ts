/** API key pairs on the wire: what clients send and get back, and the identity RPC patterns behind them. */
import { z } from 'zod';
import { roleSchema } from './identity';

export const apiKeyPairPatterns = {
  list: 'identity.api-key-pairs.list',
  get: 'identity.api-key-pairs.get',
  create: 'identity.api-key-pairs.create',
  update: 'identity.api-key-pairs.update',
  delete: 'identity.api-key-pairs.delete',
  recordUse: 'identity.api-key-pairs.record-use',
} as const;

const publicJwkSchema = z
  .object({ kty: z.literal('EC'), crv: z.literal('P-521'), x: z.string(), y: z.string() })
  .meta({ id: 'PublicJwk', description: 'The public key as a JWK (EC P-521).' });

export const apiKeyPairSchema = z
  .object({
    type: z.literal('api-key-pair'),
    id: z.uuid(),
    display_name: z.string(),
    kid: z
      .string()
      .meta({ description: 'RFC 7638 SHA-256 thumbprint of the public key: the `kid` of tokens signed with it.' }),
    algorithm: z.literal('ES512'),
    public_key: publicJwkSchema,
    role_ids: z.array(z.uuid()),
    roles: z.array(roleSchema),
    merchant_account_ids: z
      .array(z.string())
      .meta({ description: 'Merchant accounts the key may act on; empty: every merchant account.' }),
    active: z.boolean(),
    last_used_at: z.iso
      .datetime({ offset: true })
      .nullable()
      .meta({ description: 'Updated asynchronously; lags the last use by at most 5 minutes.' }),
    created_at: z.iso.datetime({ offset: true }),
    updated_at: z.iso.datetime({ offset: true }),
  })
  .meta({ id: 'ApiKeyPair' });

export type ApiKeyPair = z.infer<typeof apiKeyPairSchema>;

export const createdApiKeyPairSchema = apiKeyPairSchema
  .extend({
    private_key: z.string().optional().meta({
      description:
        'PKCS#8 PEM private key, present only when the service generated the pair; shown once, never stored.',
    }),
  })
  .meta({ id: 'CreatedApiKeyPair' });

export type CreatedApiKeyPair = z.infer<typeof createdApiKeyPairSchema>;

const displayName = z.string().trim().min(1).max(200);
const roleIds = z.array(z.uuid()).min(1).max(20);
const merchantAccountIds = z.array(z.string().min(1).max(64)).max(100);

export const apiKeyPairCreateSchema = z
  .object({
    display_name: displayName,
    role_ids: roleIds,
    active: z.boolean().default(true),
    public_key: z
      .union([z.string().min(1).max(10_000), z.record(z.string(), z.unknown())])
      .optional()
      .meta({
        description: 'Your own public key, PEM (SPKI) or JWK, EC P-521. Absent: the service generates the pair.',
      }),
    merchant_account_ids: merchantAccountIds
      .default([])
      .meta({ description: 'Limit the key to these merchant accounts; empty: all.' }),
  })
  .strict()
  .meta({ id: 'ApiKeyPairCreate' });

export const apiKeyPairUpdateSchema = z
  .object({
    display_name: displayName.optional(),
    role_ids: roleIds.optional().meta({ description: 'Replaces the roles.' }),
    active: z.boolean().optional().meta({ description: 'false revokes access at once; true restores it.' }),
    merchant_account_ids: merchantAccountIds
      .optional()
      .meta({ description: 'Replaces the merchant accounts, keeping the key.' }),
  })
  .strict()
  .meta({ id: 'ApiKeyPairUpdate' });

export type ApiKeyPairCreateInput = z.infer<typeof apiKeyPairCreateSchema>;
export type ApiKeyPairUpdateInput = z.infer<typeof apiKeyPairUpdateSchema>;

/** Who is asking, as the gateway established it: identity applies the role rules for this assigner. */
export interface RequestActor {
  readonly apiKeyPairId: string;
}
