/**
 * The identity service: feature slices (merchant accounts, API key pairs, roles, 3-D Secure configurations, users)
 * over one event store and one local SQLite, each with its decider, read model and RPC handlers. Framework-free:
 * the embedded runtime registers the handlers in process, the distributed one serves them over NestJS TCP (`main.ts`).
 */
import { identityPatterns } from '@switchyard/contracts';
import type { RpcHandlers } from '@switchyard/rpc';
import { ServiceHost, type ServiceHostOptions } from '@switchyard/service';
import { identityUpcasters } from './event-schema';
import { ApiKeyPairs } from './api-key-pairs/api-key-pairs.slice';
import { MerchantAccounts } from './merchant-accounts/merchant-accounts.slice';
import { Roles } from './roles/roles.slice';
import { ThreeDsConfigurations } from './three-ds-configurations/three-ds-configurations.slice';
import { Users } from './users/users.slice';

export type IdentityServiceOptions = ServiceHostOptions;

export class IdentityService {
  readonly merchantAccounts: MerchantAccounts;
  readonly apiKeyPairs: ApiKeyPairs;
  readonly roles: Roles;
  readonly threeDsConfigurations: ThreeDsConfigurations;
  readonly users: Users;
  private readonly host: ServiceHost;

  constructor(options: IdentityServiceOptions) {
    this.host = new ServiceHost({ ...options, upcasters: identityUpcasters });
    const context = this.host.context;
    this.merchantAccounts = new MerchantAccounts(context);
    this.users = new Users(context);
    this.apiKeyPairs = new ApiKeyPairs(context, this.merchantAccounts, (id) => this.users.readModel.find(id));
    this.roles = new Roles();
    this.threeDsConfigurations = new ThreeDsConfigurations(context, this.merchantAccounts);
    this.host.add(this.merchantAccounts, this.apiKeyPairs, this.roles, this.users, this.threeDsConfigurations);
  }

  /** Brings the read models up to date, creates the `default` merchant account on first start, then follows the log. */
  async start(): Promise<void> {
    await this.host.catchUp();
    await this.merchantAccounts.ensureDefault();
    await this.host.catchUpAndFollow();
  }

  stop(): Promise<void> {
    return this.host.stop();
  }

  /** Read-your-writes, also for writes made by another process (the CLI) into the same store. */
  catchUp(): Promise<void> {
    return this.host.catchUp();
  }

  rpcHandlers(): RpcHandlers {
    return this.host.rpcHandlers(identityPatterns.ping);
  }
}
