/**
 * The role catalog: fixed, shared by every merchant account. Ids are stable UUIDs (clients store them in
 * `role_ids`); slugs are unique and never change.
 */
import type { AssigneeKind } from '@switchyard/contracts';

export interface RoleDefinition {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
  readonly description: string;
  readonly assignableTo: readonly AssigneeKind[];
  /** Slugs of the roles of which this role needs one beside it (empty: the role extends nothing). */
  readonly appliesTo: readonly string[];
  readonly isStandaloneAssignable: boolean;
  /** Scopes the role grants. */
  readonly permissions: readonly string[];
}

const read = (...resources: string[]) => resources.map((resource) => `${resource}.read`);
const readWrite = (...resources: string[]) =>
  resources.flatMap((resource) => [`${resource}.read`, `${resource}.write`]);

/** Records that take and describe payments. */
const processingResources = [
  'transactions',
  'buyers',
  'payment-methods',
  'gift-cards',
  'checkout-sessions',
  'digital-wallets',
  'payment-options',
  'payment-links',
  'payouts',
  'account-updater',
  'vault-forward',
] as const;

/** Configuration of how payments are routed and processed. */
const systemResources = [
  'merchant-accounts',
  'payment-services',
  'connections',
  'flows',
  'gift-card-services',
  'anti-fraud-services',
  'webhook-subscriptions',
  'apple-pay-certificates',
  'vault-forward-configs',
  'vault-forward-authentications',
] as const;

const catalogueResources = [
  'payment-service-definitions',
  'payment-method-definitions',
  'card-scheme-definitions',
  'gift-card-service-definitions',
  'anti-fraud-service-definitions',
  'vault-forward-definitions',
] as const;

export const roleCatalog: readonly RoleDefinition[] = [
  {
    id: '5b3ac0a4-7e2a-4c61-9d11-6f1c2e8b0a01',
    slug: 'administrator',
    name: 'Administrator',
    description:
      'Full access to every resource. Must be the only role of its assignee; assigned only by a dashboard user.',
    assignableTo: ['user', 'api-key-pair'],
    appliesTo: [],
    isStandaloneAssignable: true,
    permissions: ['*.read', '*.write'],
  },
  {
    id: '5b3ac0a4-7e2a-4c61-9d11-6f1c2e8b0a02',
    slug: 'analyst',
    name: 'Analyst',
    description: 'Reads payments and configuration, without personal data of buyers and without API keys.',
    assignableTo: ['user', 'api-key-pair'],
    appliesTo: [],
    isStandaloneAssignable: true,
    permissions: [
      ...read(...processingResources, ...systemResources, ...catalogueResources),
      ...read('roles', 'reports', 'audit-logs', 'api-logs', 'users.me'),
    ],
  },
  {
    id: '5b3ac0a4-7e2a-4c61-9d11-6f1c2e8b0a03',
    slug: 'pii-viewer',
    name: 'PII viewer',
    description: "Adds buyers' personal data (billing details) to an analyst.",
    assignableTo: ['user', 'api-key-pair'],
    appliesTo: ['analyst'],
    isStandaloneAssignable: false,
    permissions: read('buyers', 'buyers.billing-details'),
  },
  {
    id: '5b3ac0a4-7e2a-4c61-9d11-6f1c2e8b0a04',
    slug: 'key-manager',
    name: 'Key Manager',
    description:
      'Manages API key pairs. Grants no access of its own: it needs a companion role; assigned only by a dashboard user.',
    assignableTo: ['user', 'api-key-pair'],
    appliesTo: ['analyst', 'integration', 'system-manager'],
    isStandaloneAssignable: false,
    permissions: readWrite('api-key-pairs'),
  },
  {
    id: '5b3ac0a4-7e2a-4c61-9d11-6f1c2e8b0a05',
    slug: 'integration',
    name: 'Integration',
    description:
      'Processes payments and manages buyers and payment methods from a server integration; can mint embed tokens.',
    assignableTo: ['api-key-pair'],
    appliesTo: [],
    isStandaloneAssignable: true,
    permissions: [
      ...readWrite(...processingResources, 'buyers.billing-details'),
      ...read('merchant-accounts', 'payment-services', 'roles', ...catalogueResources),
      'embed',
    ],
  },
  {
    id: '5b3ac0a4-7e2a-4c61-9d11-6f1c2e8b0a06',
    slug: 'system-manager',
    name: 'System manager',
    description: 'Manages connections and edits flow rules; cannot process or modify payments.',
    assignableTo: ['user', 'api-key-pair'],
    appliesTo: [],
    isStandaloneAssignable: true,
    permissions: [...readWrite(...systemResources), ...read('roles', ...catalogueResources, 'transactions')],
  },
];

const byId = new Map(roleCatalog.map((role) => [role.id, role]));
const bySlug = new Map(roleCatalog.map((role) => [role.slug, role]));

export const findRole = (id: string): RoleDefinition | undefined => byId.get(id);
export const findRoleBySlug = (slug: string): RoleDefinition | undefined => bySlug.get(slug);

/** A role given by id or by slug (the CLI and single sign-on take slugs), as its id; unknown values pass through. */
export const roleIdOf = (idOrSlug: string): string => (byId.get(idOrSlug) ?? bySlug.get(idOrSlug))?.id ?? idOrSlug;

/** The union of the permissions of a set of roles. */
export const permissionsOf = (roleIds: readonly string[]): string[] => [
  ...new Set(roleIds.flatMap((id) => byId.get(id)?.permissions ?? [])),
];
