/**
 * Webhook subscriptions and their signing secrets: list, get, create, update, delete; list, create (the secret
 * shown once) and revoke secrets. Also the `SubscriptionDirectory` the delivery slice reads: which active
 * subscriptions want an event, and the secrets that sign for them, decrypted only there.
 *
 * Who sees what (`callerSees`): the subscriptions of the request's merchant account, and the instance-level ones
 * when the caller's key reaches every merchant account; anything else is not found.
 */
import { randomBytes } from 'node:crypto';
import { ApiError, keysetPage, type Page } from '@switchyard/api';
import {
  webhookPatterns,
  webhookSubscriptionCreateSchema,
  webhookSubscriptionUpdateSchema,
  type WebhookCaller,
  type WebhookSecret,
  type WebhookSecretRef,
  type WebhookSubscription,
  type WebhookSubscriptionCreateRequest,
  type WebhookSubscriptionListRequest,
  type WebhookSubscriptionRef,
  type WebhookSubscriptionUpdateInput,
  type WebhookSubscriptionUpdateRequest,
} from '@switchyard/contracts';
import { handleCommand } from '@switchyard/decider';
import type { RpcHandlers } from '@switchyard/rpc';
import type { z } from 'zod';
import type { SubscriptionDirectory, SubscriptionTarget } from '../subscription-directory';
import { asApiErrors, type WebhooksContext, type WebhooksSlice } from '../webhooks-context';
import { SecretBox } from './secret-box';
import type { WebhooksKeyRing } from './webhooks-keys';
import {
  callerSees,
  webhookSubscriptionDecider,
  webhookSubscriptionStream,
  type SealedBasicAuth,
  type SubscriptionCaller,
  type WebhookSubscriptionChanges,
  type WebhookSubscriptionCommand,
} from './webhook-subscription';
import {
  listKey,
  WebhookSubscriptionsReadModel,
  type WebhookSecretRow,
  type WebhookSubscriptionRow,
} from './webhook-subscriptions.read-model';

export interface WebhookSubscriptionsOptions {
  /** The webhooks key (`loadWebhooksKey`), or the ring with retired keys (`loadWebhooksKeyRing`): seals and opens signing secrets and basic-auth passwords. */
  readonly key: Buffer | WebhooksKeyRing;
  /** Reads the ring again from its files when a value names a key it lacks (a key file rotated by the CLI meanwhile). */
  readonly reloadKeys?: () => WebhooksKeyRing;
  /** WEBHOOK_ALLOW_PRIVATE_URLS. */
  readonly allowPrivateUrls: boolean;
}

export interface WebhooksKeyStatus {
  readonly active_key_id: string;
  /** Signing secrets and basic-auth passwords of existing subscriptions, per key id (`legacy`: from before key ids). */
  readonly values_by_key_id: Record<string, number>;
  readonly deleted_subscriptions_skipped: number;
}

/** A new signing secret: 32 random bytes, base64url, with a recognisable prefix. */
export const newSigningSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

/** The RPC payload's caller as the rules see it: instance level when its key is not limited to some merchant accounts. */
export const subscriptionCallerOf = (caller: WebhookCaller): SubscriptionCaller => {
  if (typeof caller?.merchant_account_id !== 'string' || caller.merchant_account_id === '')
    throw ApiError.badRequest('merchant_account_id is required');
  return {
    merchantAccountId: caller.merchant_account_id,
    instanceLevel: (caller.caller_merchant_account_ids ?? []).length === 0,
  };
};

// Owners bound into the sealed values (associated data): a value moved to another row no longer opens.
const secretOwner = (subscriptionId: string, secretId: string) => ['secret', subscriptionId, secretId];
const basicAuthOwner = (subscriptionId: string) => ['basic-auth', subscriptionId];

export class WebhookSubscriptions implements WebhooksSlice, SubscriptionDirectory {
  readonly readModel: WebhookSubscriptionsReadModel;
  readonly #box: SecretBox;
  private readonly decider: ReturnType<typeof webhookSubscriptionDecider>;

  constructor(
    private readonly context: WebhooksContext,
    options: WebhookSubscriptionsOptions,
  ) {
    this.readModel = new WebhookSubscriptionsReadModel(context.db);
    this.#box = new SecretBox(options.key, options.reloadKeys ? { reload: options.reloadKeys } : {});
    this.decider = webhookSubscriptionDecider({ allowPrivateUrls: options.allowPrivateUrls });
  }

  get projection() {
    return this.readModel.projection;
  }

  // ---- the API ----------------------------------------------------------------------------------------------

  /** The caller's subscriptions, oldest first: the account's, and the instance-level ones for an instance-level caller. */
  list(request: WebhookSubscriptionListRequest): Page<WebhookSubscription> {
    const caller = subscriptionCallerOf(request);
    const scope = { merchantAccountId: caller.merchantAccountId, includeInstanceLevel: caller.instanceLevel };
    const page = keysetPage<WebhookSubscriptionRow>(
      {
        limit: Math.min(Math.max(Math.trunc(Number(request.limit)) || 20, 1), 100),
        ...(request.cursor ? { cursor: request.cursor } : {}),
      },
      listKey,
      (key, count) => this.readModel.after(scope, key, count),
      (key, count) => this.readModel.before(scope, key, count),
    );
    return { ...page, items: page.items.map(toWire) };
  }

  get(ref: WebhookSubscriptionRef): WebhookSubscription {
    return toWire(this.visible(ref));
  }

  async create(request: WebhookSubscriptionCreateRequest): Promise<WebhookSubscription> {
    const caller = subscriptionCallerOf(request);
    const body = parseBody(webhookSubscriptionCreateSchema, request.body);
    const id = this.context.newId();
    await this.run(id, {
      type: 'CreateWebhookSubscription',
      data: {
        id,
        merchantAccountId: body.merchant_account_id,
        url: body.url,
        eventNames: body.event_names ?? null,
        active: body.active ?? true,
        basicAuth: body.basic_auth ? this.sealBasicAuth(id, body.basic_auth) : null,
        description: body.description ?? null,
        billingDetails: request.billing_details_visible === true,
      },
      caller,
      metadata: this.metadata(),
    });
    return this.get({ ...request, subscription_id: id });
  }

  /** Only the fields sent change; null clears (`event_names`: every event, `basic_auth`: none, `description`). */
  async update(request: WebhookSubscriptionUpdateRequest): Promise<WebhookSubscription> {
    const caller = subscriptionCallerOf(request);
    const id = this.visible(request).id;
    const body: WebhookSubscriptionUpdateInput = parseBody(webhookSubscriptionUpdateSchema, request.body);
    const changes: WebhookSubscriptionChanges = {
      ...(body.url !== undefined ? { url: body.url } : {}),
      ...(body.event_names !== undefined ? { eventNames: body.event_names } : {}),
      ...(body.active !== undefined ? { active: body.active } : {}),
      ...(body.basic_auth !== undefined
        ? { basicAuth: body.basic_auth ? this.sealBasicAuth(id, body.basic_auth) : null }
        : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      // Whoever changes the subscription vouches for its payloads from now on (issue 22, item 4).
      billingDetails: request.billing_details_visible === true,
    };
    await this.run(id, {
      type: 'UpdateWebhookSubscription',
      data: {
        changes,
        ...(body.merchant_account_id !== undefined ? { merchantAccountId: body.merchant_account_id } : {}),
      },
      caller,
      metadata: this.metadata(),
    });
    return this.get(request);
  }

  /** Soft: the subscription stops matching at once and is not found afterwards; its deliveries stay listed. */
  async delete(ref: WebhookSubscriptionRef): Promise<void> {
    await this.run(this.visible(ref).id, {
      type: 'DeleteWebhookSubscription',
      caller: subscriptionCallerOf(ref),
      metadata: this.metadata(),
    });
  }

  /** Every secret of the subscription, oldest first, masked. */
  secrets(ref: WebhookSubscriptionRef): { items: WebhookSecret[] } {
    const subscription = this.visible(ref);
    return { items: this.readModel.secrets(subscription.id).map((row) => toWireSecret(row, null)) };
  }

  /** A new signing secret, shown in clear in this answer only. It signs deliveries beside the other active ones. */
  async createSecret(ref: WebhookSubscriptionRef): Promise<WebhookSecret> {
    const subscriptionId = this.visible(ref).id;
    const secretId = this.context.newId();
    const secret = newSigningSecret();
    await this.run(subscriptionId, {
      type: 'CreateWebhookSecret',
      data: {
        secretId,
        secret: this.#box.seal(secret, secretOwner(subscriptionId, secretId)),
        last4: secret.slice(-4),
      },
      caller: subscriptionCallerOf(ref),
      metadata: this.metadata(),
    });
    return toWireSecret(this.secret(subscriptionId, secretId), secret);
  }

  /** Stops the secret signing; revoking a revoked secret changes nothing. */
  async revokeSecret(ref: WebhookSecretRef): Promise<WebhookSecret> {
    const subscriptionId = this.visible(ref).id;
    await this.run(subscriptionId, {
      type: 'RevokeWebhookSecret',
      data: { secretId: String(ref.secret_id) },
      caller: subscriptionCallerOf(ref),
      metadata: this.metadata(),
    });
    return toWireSecret(this.secret(subscriptionId, String(ref.secret_id)), null);
  }

  rpcHandlers(): RpcHandlers {
    return {
      [webhookPatterns.list]: async (payload) => this.list(payload as WebhookSubscriptionListRequest),
      [webhookPatterns.get]: async (payload) => this.get(payload as WebhookSubscriptionRef),
      [webhookPatterns.create]: async (payload) => this.create(payload as WebhookSubscriptionCreateRequest),
      [webhookPatterns.update]: async (payload) => this.update(payload as WebhookSubscriptionUpdateRequest),
      [webhookPatterns.delete]: async (payload) => {
        await this.delete(payload as WebhookSubscriptionRef);
        return null;
      },
      [webhookPatterns.secretsList]: async (payload) => this.secrets(payload as WebhookSubscriptionRef),
      [webhookPatterns.secretCreate]: async (payload) => this.createSecret(payload as WebhookSubscriptionRef),
      [webhookPatterns.secretRevoke]: async (payload) => this.revokeSecret(payload as WebhookSecretRef),
    };
  }

  // ---- the webhooks key: status and re-sealing after a rotation ---------------------------------------------

  /** How many sealed values each key holds (`legacy`: sealed before key ids, under whichever key was active then). */
  keyStatus(): WebhooksKeyStatus {
    const counts: Record<string, number> = {};
    const count = (sealed: string) => {
      const id = this.#box.keyIdOf(sealed) ?? 'legacy';
      counts[id] = (counts[id] ?? 0) + 1;
    };
    for (const row of this.readModel.allExisting()) {
      if (row.basicAuth) count(row.basicAuth.password);
      for (const secret of this.readModel.secrets(row.id)) count(secret.secret);
    }
    return {
      active_key_id: this.#box.activeKeyId,
      values_by_key_id: counts,
      deleted_subscriptions_skipped: this.readModel.deletedCount(),
    };
  }

  /**
   * Seals every signing secret (active and revoked) and basic-auth password not under the active key again under it,
   * one `WebhookSecretsResealed` event per subscription: the read model (and a rebuild of it) then holds only values
   * under the active key, and the retired keys can go. Safe to repeat, and to run beside a server taking changes:
   * a value replaced meanwhile is left alone. The events keep the former ciphertexts: a rotation after a key leaked
   * also needs new signing secrets (docs/operations.md).
   */
  async resealAll(): Promise<WebhooksKeyStatus & { readonly resealed: number; readonly subscriptions: number }> {
    let resealed = 0;
    let subscriptions = 0;
    for (const row of this.readModel.allExisting()) {
      const again = (sealed: string, owner: readonly string[]) => ({
        from: sealed,
        to: this.#box.seal(this.#box.open(sealed, owner), owner),
      });
      const secrets = this.readModel
        .secrets(row.id)
        .filter((secret) => !this.#box.isCurrent(secret.secret))
        .map((secret) => ({ secretId: secret.id, ...again(secret.secret, secretOwner(row.id, secret.id)) }));
      const password =
        row.basicAuth && !this.#box.isCurrent(row.basicAuth.password)
          ? again(row.basicAuth.password, basicAuthOwner(row.id))
          : undefined;
      if (secrets.length === 0 && !password) continue;
      await this.run(row.id, {
        type: 'ResealWebhookSecrets',
        data: { secrets, ...(password ? { basicAuthPassword: password } : {}), keyId: this.#box.activeKeyId },
        caller: { merchantAccountId: row.merchantAccountId ?? '', instanceLevel: true },
        metadata: this.metadata(),
      });
      resealed += secrets.length + (password ? 1 : 0);
      subscriptions += 1;
    }
    return { ...this.keyStatus(), resealed, subscriptions };
  }

  // ---- the directory (delivery) -----------------------------------------------------------------------------

  matching(merchantAccountId: string | null, eventName: string): readonly SubscriptionTarget[] {
    return this.readModel
      .activeFor(merchantAccountId)
      .filter((row) => row.eventNames === null || row.eventNames.includes(eventName))
      .map((row) => this.toTarget(row));
  }

  find(subscriptionId: string): SubscriptionTarget | null {
    const row = this.readModel.find(subscriptionId);
    return row ? this.toTarget(row) : null;
  }

  activeSecrets(subscriptionId: string): readonly { readonly id: string; readonly secret: string }[] {
    if (!this.readModel.find(subscriptionId)) return [];
    return this.readModel
      .activeSecrets(subscriptionId)
      .map((row) => ({ id: row.id, secret: this.#box.open(row.secret, secretOwner(subscriptionId, row.id)) }));
  }

  // ---- helpers ----------------------------------------------------------------------------------------------

  /** The subscription if the caller may see it; else 404. */
  private visible(ref: WebhookSubscriptionRef): WebhookSubscriptionRow {
    const caller = subscriptionCallerOf(ref);
    const row = typeof ref.subscription_id === 'string' ? this.readModel.find(ref.subscription_id) : null;
    if (!row || !callerSees(caller, row.merchantAccountId)) throw ApiError.notFound();
    return row;
  }

  private secret(subscriptionId: string, secretId: string): WebhookSecretRow {
    const row = this.readModel.secrets(subscriptionId).find((candidate) => candidate.id === secretId);
    if (!row) throw ApiError.notFound();
    return row;
  }

  private async run(subscriptionId: string, command: WebhookSubscriptionCommand): Promise<void> {
    await asApiErrors(() =>
      handleCommand(this.context.store, webhookSubscriptionStream(subscriptionId), this.decider, command),
    );
    await this.context.catchUp();
  }

  private metadata() {
    return { now: this.context.now().toISOString() };
  }

  private sealBasicAuth(subscriptionId: string, basicAuth: { username: string; password: string }): SealedBasicAuth {
    return {
      username: basicAuth.username,
      password: this.#box.seal(basicAuth.password, basicAuthOwner(subscriptionId)),
    };
  }

  private toTarget(row: WebhookSubscriptionRow): SubscriptionTarget {
    return {
      id: row.id,
      url: row.url,
      merchantAccountId: row.merchantAccountId,
      eventNames: row.eventNames,
      active: row.active,
      basicAuth: row.basicAuth
        ? { username: row.basicAuth.username, password: this.#box.open(row.basicAuth.password, basicAuthOwner(row.id)) }
        : null,
      billingDetails: row.billingDetails,
    };
  }
}

/** The body as the contract's schema reads it (the gateway validated it already; an RPC caller may not have). */
function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  throw ApiError.badRequest(
    'invalid webhook subscription',
    parsed.error.issues.map((issue) => ({
      location: 'body' as const,
      pointer: `/${issue.path.join('/')}`,
      message: issue.message,
      type: issue.code,
    })),
  );
}

function toWire(row: WebhookSubscriptionRow): WebhookSubscription {
  return {
    type: 'webhook-subscription',
    id: row.id,
    url: row.url,
    event_names: row.eventNames ? [...row.eventNames] : null,
    merchant_account_id: row.merchantAccountId,
    active: row.active,
    basic_auth: row.basicAuth ? { username: row.basicAuth.username } : null,
    description: row.description,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

function toWireSecret(row: WebhookSecretRow, secret: string | null): WebhookSecret {
  return {
    type: 'webhook-secret',
    id: row.id,
    subscription_id: row.subscriptionId,
    secret,
    masked: `••••${row.last4}`,
    active: row.active,
    created_at: row.createdAt,
    revoked_at: row.revokedAt,
  };
}
