/**
 * The merchant accounts' 3-D Secure configurations, as `POST /transactions` hands them to the transactions service:
 * asked of identity once per account, then kept. Every card payment asked identity before, one RPC call each (in the
 * distributed runtime two socket writes and a wake-up of the identity process per payment: docs/performance.md).
 *
 * A change goes through a gateway (`ThreeDsConfigurationsController`): that gateway forgets the account's entry once
 * identity answered the change, so its next payment reads the change. Every gateway forgets it again when identity's
 * event reaches it (`ThreeDsConfiguration*` on `identity.events`: each gateway follows the topic as its key cache
 * does), so another gateway instance may use the old configurations for as long as the event takes (tens of
 * milliseconds), and an entry is never used longer than `ttlMs` (a missed event).
 */
import { ApiError } from '@switchyard/api';
import { threeDsConfigurationPatterns, type ThreeDsConfiguration } from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';

/** How long an entry is used at most without identity's word. */
export const DEFAULT_THREE_DS_CONFIGURATION_TTL_MS = 60_000;
/** Accounts kept at most; the oldest entry goes first. */
const MAX_ENTRIES = 10_000;

const threeDsConfigurationEvents: ReadonlySet<string> = new Set([
  'ThreeDsConfigurationCreated',
  'ThreeDsConfigurationUpdated',
  'ThreeDsConfigurationDeleted',
]);

interface Entry {
  readonly configurations: Promise<ThreeDsConfiguration[]>;
  readonly fetchedAt: number;
}

export class ThreeDsConfigurationCache {
  readonly #entries = new Map<string, Entry>();

  constructor(
    private readonly rpc: RpcClient,
    private readonly ttlMs = DEFAULT_THREE_DS_CONFIGURATION_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The account's configurations; an account identity does not know has none. A failed ask is not kept. */
  list(merchantAccountId: string): Promise<ThreeDsConfiguration[]> {
    const entry = this.#entries.get(merchantAccountId);
    if (entry && this.now() - entry.fetchedAt < this.ttlMs) return entry.configurations;
    const fetched: Entry = { configurations: this.#fetch(merchantAccountId), fetchedAt: this.now() };
    this.#entries.delete(merchantAccountId);
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(merchantAccountId, fetched);
    fetched.configurations.catch(() => {
      if (this.#entries.get(merchantAccountId) === fetched) this.#entries.delete(merchantAccountId);
    });
    return fetched.configurations;
  }

  /** Forgets an account's entry: its configurations changed. */
  forget(merchantAccountId: string): void {
    this.#entries.delete(merchantAccountId);
  }

  /** Forgets the entry of the account an identity event changed the configurations of; other events change none. */
  observe(event: { readonly type: string; readonly data?: unknown }): void {
    if (!threeDsConfigurationEvents.has(event.type)) return;
    const merchantAccountId = (event.data as { merchantAccountId?: unknown } | undefined)?.merchantAccountId;
    if (typeof merchantAccountId === 'string') this.forget(merchantAccountId);
    else this.#entries.clear();
  }

  async #fetch(merchantAccountId: string): Promise<ThreeDsConfiguration[]> {
    try {
      const page = await this.rpc.call<{ items: ThreeDsConfiguration[] }>(threeDsConfigurationPatterns.list, {
        merchant_account_id: merchantAccountId,
      });
      return page.items;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return [];
      throw error;
    }
  }
}
