/** What the identity service answers over RPC, and the wire shapes the gateway renders from it. */
import { z } from 'zod';

export const identityPatterns = {
  ping: 'identity.ping',
  listRoles: 'identity.roles.list',
  findKeyByKid: 'identity.api-key-pairs.find-by-kid',
} as const;

export const assigneeKinds = ['user', 'api-key-pair'] as const;
export type AssigneeKind = (typeof assigneeKinds)[number];

export const roleSchema = z
  .object({
    type: z.literal('role'),
    id: z.uuid(),
    slug: z.string(),
    name: z.string(),
    description: z.string(),
    assignable_to: z.array(z.enum(assigneeKinds)).meta({ description: 'Kinds of assignee that may receive the role.' }),
    applies_to: z
      .array(z.string())
      .meta({ description: 'Slugs of the roles of which a role extending them needs one.' }),
    is_standalone_assignable: z
      .boolean()
      .meta({ description: 'Whether the role can be the only usable role of an assignee.' }),
    permissions: z
      .array(z.string())
      .meta({ description: 'The scopes the role grants (wildcards `*.read`, `*.write`).' }),
  })
  .meta({ id: 'Role' });

export type Role = z.infer<typeof roleSchema>;

export const identityTopic = 'identity.events';

/** The merchant account of a request without `x-service-merchant-account-id`; created on first start. */
export const DEFAULT_MERCHANT_ACCOUNT_ID = 'default';
