/**
 * A webhook subscription — where to send which events, for one merchant account or for the whole instance — and
 * its signing secrets: stream `webhook-subscription-<uuid>`.
 *
 * Ownership: `merchantAccountId` is fixed at creation (null: instance level). A command addressed by a caller that
 * may not see the subscription (another merchant account's; an instance-level one for a key limited to some
 * accounts) finds nothing. Deletion is soft and final: afterwards the subscription does not exist.
 *
 * Secrets never travel in clear through here: the slice encrypts signing secrets and the basic-auth password
 * (`SecretBox`) before it issues a command, so events, the store and the read model only hold ciphertext.
 */
import { DomainError, type Decider } from '@switchyard/decider';
import { webhookEventNames } from '@switchyard/contracts';
import { webhookUrlProblem } from './webhook-url';

/** A value encrypted at rest (`SecretBox.seal`): never the clear text. */
export type Sealed = string;

export interface SealedBasicAuth {
  readonly username: string;
  readonly password: Sealed;
}

export interface WebhookSubscriptionSettings {
  readonly url: string;
  /** null: every event. */
  readonly eventNames: readonly string[] | null;
  readonly active: boolean;
  readonly basicAuth: SealedBasicAuth | null;
  readonly description: string | null;
  /**
   * Whether payloads keep buyers' billing details: whether the caller that created the subscription, or changed it
   * last, holds `buyers.billing-details.read` (issue 22, item 4). Absent in events from before: false.
   */
  readonly billingDetails?: boolean;
}

/** What an update changes: only the fields present; null clears (`eventNames`: every event again). */
export type WebhookSubscriptionChanges = Partial<WebhookSubscriptionSettings>;

export type WebhookSubscriptionEvent =
  | {
      readonly type: 'WebhookSubscriptionCreated';
      readonly data: WebhookSubscriptionSettings & {
        readonly id: string;
        readonly merchantAccountId: string | null;
        readonly at: string;
      };
    }
  | {
      readonly type: 'WebhookSubscriptionUpdated';
      readonly data: WebhookSubscriptionChanges & {
        readonly id: string;
        readonly merchantAccountId: string | null;
        readonly at: string;
      };
    }
  | {
      readonly type: 'WebhookSubscriptionDeleted';
      readonly data: { readonly id: string; readonly merchantAccountId: string | null; readonly at: string };
    }
  | {
      readonly type: 'WebhookSecretCreated';
      readonly data: {
        readonly subscriptionId: string;
        readonly secretId: string;
        /** The signing secret, sealed. */
        readonly secret: Sealed;
        /** Its last four characters, for the masked form. */
        readonly last4: string;
        readonly at: string;
      };
    }
  | {
      readonly type: 'WebhookSecretRevoked';
      readonly data: { readonly subscriptionId: string; readonly secretId: string; readonly at: string };
    }
  | {
      /** A rotation of the webhooks key: the same secrets and password, sealed again under the key `keyId`. */
      readonly type: 'WebhookSecretsResealed';
      readonly data: {
        readonly id: string;
        readonly merchantAccountId: string | null;
        readonly secrets: readonly { readonly secretId: string; readonly secret: Sealed }[];
        /** Present when the basic-auth password was sealed again. */
        readonly basicAuthPassword?: Sealed;
        readonly keyId: string;
        readonly at: string;
      };
    };

/** A value sealed again: `from` is the sealed value it replaces, so a value changed meanwhile is left alone. */
export interface Resealed {
  readonly from: Sealed;
  readonly to: Sealed;
}

/** Who asks: the request's merchant account, and whether the caller's key reaches every merchant account. */
export interface SubscriptionCaller {
  readonly merchantAccountId: string;
  /** The key is not limited to some merchant accounts: it may see and manage instance-level subscriptions. */
  readonly instanceLevel: boolean;
}

interface CommandMetadata {
  readonly now: string;
}

export type WebhookSubscriptionCommand =
  | {
      readonly type: 'CreateWebhookSubscription';
      /** `merchantAccountId`: undefined: the caller's account; null: instance level; else it must be the caller's account. */
      readonly data: WebhookSubscriptionSettings & {
        readonly id: string;
        readonly merchantAccountId: string | null | undefined;
      };
      readonly caller: SubscriptionCaller;
      readonly metadata: CommandMetadata;
    }
  | {
      readonly type: 'UpdateWebhookSubscription';
      /** `merchantAccountId`: the body's value, which may only repeat the subscription's own. */
      readonly data: {
        readonly changes: WebhookSubscriptionChanges;
        readonly merchantAccountId?: string | null | undefined;
      };
      readonly caller: SubscriptionCaller;
      readonly metadata: CommandMetadata;
    }
  | {
      readonly type: 'DeleteWebhookSubscription';
      readonly caller: SubscriptionCaller;
      readonly metadata: CommandMetadata;
    }
  | {
      readonly type: 'CreateWebhookSecret';
      readonly data: { readonly secretId: string; readonly secret: Sealed; readonly last4: string };
      readonly caller: SubscriptionCaller;
      readonly metadata: CommandMetadata;
    }
  | {
      readonly type: 'RevokeWebhookSecret';
      readonly data: { readonly secretId: string };
      readonly caller: SubscriptionCaller;
      readonly metadata: CommandMetadata;
    }
  | {
      readonly type: 'ResealWebhookSecrets';
      readonly data: {
        readonly secrets: readonly (Resealed & { readonly secretId: string })[];
        readonly basicAuthPassword?: Resealed;
        readonly keyId: string;
      };
      readonly caller: SubscriptionCaller;
      readonly metadata: CommandMetadata;
    };

export type WebhookSubscriptionState =
  | { readonly status: 'absent' }
  | { readonly status: 'deleted' }
  | {
      readonly status: 'present';
      readonly id: string;
      readonly merchantAccountId: string | null;
      readonly secrets: readonly { readonly id: string; readonly active: boolean; readonly sealed: Sealed }[];
      readonly basicAuthPassword: Sealed | null;
    };

export const webhookSubscriptionStream = (id: string): string => `webhook-subscription-${id}`;

/** At most this many signing secrets sign at once (a rotation needs two). */
export const maxActiveSecrets = 5;

export interface WebhookSubscriptionRules {
  /** WEBHOOK_ALLOW_PRIVATE_URLS. */
  readonly allowPrivateUrls: boolean;
}

const subscriptionNotFound = () => new DomainError('webhook_subscription_not_found', 'The resource could not be found');
const secretNotFound = () => new DomainError('webhook_secret_not_found', 'The resource could not be found');

/** Whether the caller may see a subscription owned by `owner` (null: instance level). */
export const callerSees = (caller: SubscriptionCaller, owner: string | null): boolean =>
  owner === null ? caller.instanceLevel : owner === caller.merchantAccountId;

type Detail = { field: string; message: string };
const knownEventNames: ReadonlySet<string> = new Set(webhookEventNames);

function checkSettings(changes: WebhookSubscriptionChanges, rules: WebhookSubscriptionRules, details: Detail[]): void {
  if (changes.url !== undefined) {
    const problem = webhookUrlProblem(changes.url, { allowPrivate: rules.allowPrivateUrls });
    if (problem) details.push({ field: 'url', message: problem });
  }
  if (changes.eventNames) {
    if (changes.eventNames.length === 0)
      details.push({ field: 'event_names', message: 'must not be empty; null (or absent) subscribes to every event' });
    changes.eventNames.forEach((name, index) => {
      if (!knownEventNames.has(name))
        details.push({ field: `event_names/${index}`, message: `${name} is not an event name` });
    });
  }
  if (changes.basicAuth && changes.basicAuth.username.trim() === '')
    details.push({ field: 'basic_auth/username', message: 'must not be empty' });
}

const unique = (values: readonly string[]): string[] => [...new Set(values)];

export function webhookSubscriptionDecider(
  rules: WebhookSubscriptionRules,
): Decider<WebhookSubscriptionCommand, WebhookSubscriptionEvent, WebhookSubscriptionState> {
  return {
    initialState: () => ({ status: 'absent' }),
    decide(command, state) {
      if (command.type === 'CreateWebhookSubscription') {
        if (state.status !== 'absent')
          throw new DomainError(
            'webhook_subscription_exists',
            `webhook subscription ${command.data.id} already exists`,
          );
        const { merchantAccountId: requested, ...settings } = command.data;
        const details: Detail[] = [];
        if (requested !== undefined && requested !== null && requested !== command.caller.merchantAccountId) {
          details.push({
            field: 'merchant_account_id',
            message: "must be the request's merchant account, or null for an instance-level subscription",
          });
        }
        checkSettings(settings, rules, details);
        if (details.length > 0)
          throw new DomainError('invalid_webhook_subscription', 'invalid webhook subscription', details);
        if (requested === null && !command.caller.instanceLevel) {
          throw new DomainError(
            'instance_level_forbidden',
            'An API key limited to some merchant accounts cannot create an instance-level webhook subscription',
          );
        }
        return [
          {
            type: 'WebhookSubscriptionCreated',
            data: {
              ...settings,
              eventNames: settings.eventNames ? unique(settings.eventNames) : null,
              merchantAccountId: requested === null ? null : command.caller.merchantAccountId,
              at: command.metadata.now,
            },
          },
        ];
      }

      if (state.status !== 'present' || !callerSees(command.caller, state.merchantAccountId))
        throw subscriptionNotFound();
      const ids = { id: state.id, merchantAccountId: state.merchantAccountId };
      switch (command.type) {
        case 'UpdateWebhookSubscription': {
          const details: Detail[] = [];
          const requested = command.data.merchantAccountId;
          if (requested !== undefined && requested !== state.merchantAccountId) {
            details.push({
              field: 'merchant_account_id',
              message: 'cannot be changed; create a new subscription instead',
            });
          }
          checkSettings(command.data.changes, rules, details);
          if (details.length > 0)
            throw new DomainError('invalid_webhook_subscription', 'invalid webhook subscription', details);
          const changes = Object.fromEntries(
            Object.entries(command.data.changes).filter(([, value]) => value !== undefined),
          ) as WebhookSubscriptionChanges;
          return [
            {
              type: 'WebhookSubscriptionUpdated',
              data: {
                ...changes,
                ...(changes.eventNames ? { eventNames: unique(changes.eventNames) } : {}),
                ...ids,
                at: command.metadata.now,
              },
            },
          ];
        }
        case 'DeleteWebhookSubscription':
          return [{ type: 'WebhookSubscriptionDeleted', data: { ...ids, at: command.metadata.now } }];
        case 'CreateWebhookSecret': {
          if (state.secrets.some((secret) => secret.id === command.data.secretId))
            throw new DomainError('webhook_secret_exists', `secret ${command.data.secretId} already exists`);
          if (state.secrets.filter((secret) => secret.active).length >= maxActiveSecrets) {
            throw new DomainError(
              'too_many_webhook_secrets',
              `a subscription has at most ${maxActiveSecrets} active secrets; revoke one first`,
            );
          }
          return [
            {
              type: 'WebhookSecretCreated',
              data: { subscriptionId: state.id, ...command.data, at: command.metadata.now },
            },
          ];
        }
        case 'RevokeWebhookSecret': {
          const secret = state.secrets.find((candidate) => candidate.id === command.data.secretId);
          if (!secret) throw secretNotFound();
          if (!secret.active) return []; // already revoked: nothing changes
          return [
            {
              type: 'WebhookSecretRevoked',
              data: { subscriptionId: state.id, secretId: secret.id, at: command.metadata.now },
            },
          ];
        }
        case 'ResealWebhookSecrets': {
          // Only values still as the command read them: a password replaced meanwhile is already under the new key.
          const secrets = command.data.secrets
            .filter((resealed) =>
              state.secrets.some((secret) => secret.id === resealed.secretId && secret.sealed === resealed.from),
            )
            .map((resealed) => ({ secretId: resealed.secretId, secret: resealed.to }));
          const password = command.data.basicAuthPassword;
          const basicAuthPassword = password && state.basicAuthPassword === password.from ? password.to : undefined;
          if (secrets.length === 0 && basicAuthPassword === undefined) return [];
          return [
            {
              type: 'WebhookSecretsResealed',
              data: {
                ...ids,
                secrets,
                ...(basicAuthPassword !== undefined ? { basicAuthPassword } : {}),
                keyId: command.data.keyId,
                at: command.metadata.now,
              },
            },
          ];
        }
        default: {
          const unreachable: never = command;
          throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
        }
      }
    },
    evolve(state, event) {
      switch (event.type) {
        case 'WebhookSubscriptionCreated':
          return {
            status: 'present',
            id: event.data.id,
            merchantAccountId: event.data.merchantAccountId,
            secrets: [],
            basicAuthPassword: event.data.basicAuth?.password ?? null,
          };
        case 'WebhookSubscriptionUpdated':
          return state.status === 'present' && event.data.basicAuth !== undefined
            ? { ...state, basicAuthPassword: event.data.basicAuth?.password ?? null }
            : state;
        case 'WebhookSubscriptionDeleted':
          return { status: 'deleted' };
        case 'WebhookSecretCreated':
          return state.status === 'present'
            ? {
                ...state,
                secrets: [...state.secrets, { id: event.data.secretId, active: true, sealed: event.data.secret }],
              }
            : state;
        case 'WebhookSecretRevoked':
          return state.status === 'present'
            ? {
                ...state,
                secrets: state.secrets.map((secret) =>
                  secret.id === event.data.secretId ? { ...secret, active: false } : secret,
                ),
              }
            : state;
        case 'WebhookSecretsResealed': {
          if (state.status !== 'present') return state;
          const resealed = new Map(event.data.secrets.map((secret) => [secret.secretId, secret.secret]));
          return {
            ...state,
            secrets: state.secrets.map((secret) => ({ ...secret, sealed: resealed.get(secret.id) ?? secret.sealed })),
            basicAuthPassword: event.data.basicAuthPassword ?? state.basicAuthPassword,
          };
        }
      }
    },
  };
}
