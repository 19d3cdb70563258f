/**
 * Network tokens of stored cards (`network-token-<uuid>`, one stream per token): provisioned at the card network's
 * token service through the `TokenServiceProvider` port — by the API (`POST /payment-methods/{id}/network-tokens`,
 * off unless `apiProvisioning`), or automatically when a card is stored and its merchant account takes network tokens
 * —, listed, suspended, resumed, deleted (also when their payment method is), and asked for a cryptogram. The
 * transaction flow pays with a token through `tokenForTransaction`.
 *
 * The card number travels only to the token service's HTTP call; the token number is kept sealed (`TokenSeal`).
 * Provider calls sit between two reads of the stream: the decider is asked first (without appending), then the
 * provider, then its answer is appended. Commands on one payment method's tokens queue in process, which is what keeps
 * "at most one live token per payment method" (across processes it is not enforced).
 */
import { ApiError } from '@switchyard/api';
import {
  ConnectorRequestRejectedError,
  ConnectorUnavailableError,
  type ProviderNetworkTokenStatus,
  type TokenProvisionRequest,
  type TokenServiceProvider,
} from '@switchyard/connectors';
import {
  networkTokenPatterns,
  type Cryptogram,
  type CryptogramCreateRequest,
  type MerchantAccount,
  type NetworkToken,
  type NetworkTokenCreateRequest,
  type NetworkTokenRef,
  type NetworkTokens as NetworkTokenList,
  type NetworkTokenScope,
} from '@switchyard/contracts';
import { asDomainEvent, handleCommand } from '@switchyard/decider';
import type { RpcHandlers } from '@switchyard/rpc';
import { domainErrorMapper, KeyedQueue, withApiErrors } from '@switchyard/service';
import type { VaultContext, VaultSlice } from '../vault-context';
import {
  networkTokenDecider,
  networkTokenStream,
  type NetworkTokenCommand,
  type NetworkTokenEvent,
  type NetworkTokenOwner,
  type NetworkTokenState,
  type ProvisioningTrigger,
} from './network-token';
import { eligibilityOf, type Eligibility, type TokenizablePaymentMethod } from './network-token-eligibility';
import { badPaymentMethod, refusedBy, tokenService, toNetworkToken, TokenSeal } from './network-token-wire';
import { NetworkTokensReadModel, type NetworkTokenView } from './network-tokens.read-model';

/** What this slice uses of the payment methods slice. */
export interface NetworkTokenPaymentMethods {
  /** Null when absent, deleted, or another merchant account's. */
  find(merchantAccountId: string, id: string): TokenizablePaymentMethod | null;
  /** The card, for the token service call only. */
  cardOf(merchantAccountId: string, id: string): { readonly number: string; readonly expirationDate: string } | null;
  /** A method became `succeeded`. */
  onStored(listener: (view: TokenizablePaymentMethod) => Promise<void>): void;
  onDeleted(listener: (view: TokenizablePaymentMethod) => Promise<void>): void;
}

/** The merchant account's settings (identity's `MerchantAccount`), read over RPC. */
export interface NetworkTokenMerchantAccounts {
  get(merchantAccountId: string): Promise<MerchantAccount | null>;
}

/** The merchant account's card connections (the transactions service's payment services): does one take network tokens? */
export interface NetworkTokenConnections {
  /** In process, or asked of the transactions process (`vaultDirectoryPatterns.connections`). */
  activeConnections(merchantAccountId: string): NetworkTokenConnection[] | Promise<NetworkTokenConnection[]>;
}

/** What the vault needs to know of a card connection. */
export interface NetworkTokenConnection {
  readonly method: string;
  readonly networkTokensEnabled: boolean;
  readonly effectiveCapabilities: { readonly networkTokens: boolean };
}

export interface NetworkTokensDependencies {
  readonly paymentMethods: NetworkTokenPaymentMethods;
  readonly merchantAccounts: NetworkTokenMerchantAccounts;
  readonly paymentServices: NetworkTokenConnections;
  readonly tokenService: TokenServiceProvider;
  /** 32 bytes: seals token numbers in events and the read model. */
  readonly sealingKey: Buffer;
  /** Whether `POST …/network-tokens` provisions (NETWORK_TOKENS_API_PROVISIONING); off: 403. */
  readonly apiProvisioning: boolean;
  /** Waits before each retry of background work (automatic provisioning, deleting with the payment method). Default 1 s, 10 s, 60 s. */
  readonly retryDelaysMs?: readonly number[];
  /** Told of background work that failed (it is retried while `retryDelaysMs` lasts). */
  readonly onBackgroundError?: (error: unknown) => void;
}

/** What a transaction needs to pay with the token instead of the card. */
export interface TransactionNetworkToken {
  readonly token: string;
  /** MM/YY */
  readonly expirationDate: string;
  readonly cryptogram: string;
  readonly eci: string;
}

const asApiErrors = withApiErrors(domainErrorMapper({ network_token_not_found: 404, network_token_exists: 409 }));

type LifeCommand = Extract<NetworkTokenCommand, { type: 'SuspendNetworkToken' | 'ResumeNetworkToken' }>['type'];

export class NetworkTokens implements VaultSlice {
  readonly readModel: NetworkTokensReadModel;
  private readonly seal: TokenSeal;
  private readonly queue = new KeyedQueue();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly retryDelaysMs: readonly number[];
  private readonly onBackgroundError: (error: unknown) => void;

  constructor(
    private readonly context: VaultContext,
    private readonly deps: NetworkTokensDependencies,
  ) {
    this.readModel = new NetworkTokensReadModel(context.db);
    this.seal = new TokenSeal(deps.sealingKey);
    this.retryDelaysMs = deps.retryDelaysMs ?? [1_000, 10_000, 60_000];
    this.onBackgroundError = deps.onBackgroundError ?? (() => undefined);
    deps.paymentMethods.onStored((view) => this.provisionIfEligible(view));
    deps.paymentMethods.onDeleted((view) => this.deleteTokensOf(view));
  }

  get projection() {
    return this.readModel.projection;
  }

  /** Stops the retries still waiting. */
  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /**
   * The payment method's active token with a fresh cryptogram, for a transaction to pay with instead of the card;
   * null when it has none or the token service gives no cryptogram (the transaction then uses the card).
   */
  async tokenForTransaction(
    merchantAccountId: string,
    paymentMethodId: string,
    options: { readonly merchantInitiated: boolean },
  ): Promise<TransactionNetworkToken | null> {
    const token = this.readModel
      .live(merchantAccountId, paymentMethodId)
      .find((candidate) => candidate.status === 'active');
    if (!token) return null;
    try {
      const answer = await this.deps.tokenService.cryptogram(token.providerTokenId, options);
      if (answer.outcome === 'failed') return null;
      return {
        token: this.seal.open(token),
        expirationDate: token.expirationDate,
        cryptogram: answer.cryptogram,
        eci: answer.eci,
      };
    } catch (error) {
      if (error instanceof ConnectorUnavailableError || error instanceof ConnectorRequestRejectedError) {
        this.onBackgroundError(error);
        return null;
      }
      throw error;
    }
  }

  /** The payment method's live tokens (active, suspended), oldest first. */
  list(scope: NetworkTokenScope): NetworkTokenList {
    this.paymentMethod(scope);
    return {
      items: this.readModel.live(scope.merchant_account_id, scope.payment_method_id).map((view) => this.toWire(view)),
    };
  }

  /**
   * Provisions a token for an eligible card (403 unless API provisioning is on; 409 while it has a live one). The
   * network's refusal is the caller's 400 and records nothing; only automatic provisioning records refusals.
   */
  async create({ body, ...scope }: NetworkTokenCreateRequest): Promise<NetworkToken> {
    if (!this.deps.apiProvisioning)
      throw ApiError.forbidden('network token provisioning through the API is not enabled');
    const paymentMethod = this.paymentMethod(scope);
    const eligibility = eligibilityOf(paymentMethod, await this.deps.merchantAccounts.get(scope.merchant_account_id));
    if (!eligibility.eligible) throw badPaymentMethod(eligibility.reason, eligibility.message);
    return this.queue.run(paymentMethod.id, async () => {
      const [live] = this.readModel.live(scope.merchant_account_id, scope.payment_method_id);
      if (live)
        throw ApiError.duplicate(
          `payment method ${paymentMethod.id} already has a network token (${live.status}): delete it first`,
          live.id,
        );
      const card = this.deps.paymentMethods.cardOf(scope.merchant_account_id, scope.payment_method_id);
      if (!card) throw ApiError.notFound();
      const id = this.context.newId();
      const request = provisionRequest(id, card, eligibility, {
        merchantInitiated: body.merchant_initiated,
        isSubsequentPayment: body.is_subsequent_payment,
        ...(body.security_code !== undefined ? { securityCode: body.security_code } : {}),
      });
      const answer = await tokenService(() => this.deps.tokenService.provision(request));
      // A refusal answered to the caller changes nothing here (no token, no event), like any other 4xx.
      if (answer.outcome === 'failed') throw refusedBy('provision a network token', answer.errorCode, answer.message);
      await this.record(
        { id, merchantAccountId: paymentMethod.merchantAccountId, paymentMethodId: paymentMethod.id },
        eligibility.scheme,
        'api',
        answer,
      );
      return this.get({ ...scope, network_token_id: id });
    });
  }

  suspend(ref: NetworkTokenRef): Promise<NetworkToken> {
    return this.change(ref, 'SuspendNetworkToken', 'suspended', (providerTokenId) =>
      this.deps.tokenService.suspend(providerTokenId),
    );
  }

  resume(ref: NetworkTokenRef): Promise<NetworkToken> {
    return this.change(ref, 'ResumeNetworkToken', 'active', (providerTokenId) =>
      this.deps.tokenService.resume(providerTokenId),
    );
  }

  /** Deletes the token at the token service, then here: final. */
  async delete(ref: NetworkTokenRef): Promise<void> {
    this.paymentMethod(ref);
    await this.queue.run(ref.payment_method_id, async () => {
      const owner = ownerOf(ref);
      const command: NetworkTokenCommand = {
        type: 'DeleteNetworkToken',
        data: { ...owner, reason: 'api' },
        metadata: { now: this.now() },
      };
      const state = await this.decideFirst(command);
      if (state.status !== 'active' && state.status !== 'suspended') throw ApiError.notFound();
      await tokenService(() => this.deleteAtProvider(state.providerTokenId));
      await this.handle(owner.id, command);
    });
  }

  /** A cryptogram for one payment; a suspended token gives none (400). */
  async cryptogram({ body, ...ref }: CryptogramCreateRequest): Promise<Cryptogram> {
    const token = this.liveToken(ref);
    if (token.status !== 'active')
      throw badPaymentMethod(
        'network_token_not_active',
        `network token ${token.id} is ${token.status}: resume it first`,
      );
    const answer = await tokenService(() =>
      this.deps.tokenService.cryptogram(token.providerTokenId, { merchantInitiated: body.merchant_initiated }),
    );
    if (answer.outcome === 'failed') throw refusedBy('issue a cryptogram', answer.errorCode, answer.message);
    return { type: 'network-token-cryptogram', cryptogram: answer.cryptogram };
  }

  /**
   * When a card is stored: provisions a token if its merchant account takes network tokens — the setting on, and an
   * active card payment service with network tokens enabled that supports them — and the card is eligible.
   * Ineligible cards are skipped; a refusal is recorded (`NetworkTokenProvisionFailed`); an unreachable service is
   * retried.
   */
  async provisionIfEligible(view: TokenizablePaymentMethod): Promise<void> {
    if (view.method !== 'card' || view.status !== 'succeeded') return;
    const id = this.context.newId(); // one reference for every attempt: the token service answers a repeat with the same token
    await this.inBackground(async () => {
      // The connections are the transactions service's (over RPC in the distributed runtime): asked in the retried work.
      if (!(await this.takesNetworkTokens(view.merchantAccountId))) return;
      const eligibility = eligibilityOf(view, await this.deps.merchantAccounts.get(view.merchantAccountId));
      if (!eligibility.eligible) return;
      await this.queue.run(view.id, async () => {
        if (this.readModel.live(view.merchantAccountId, view.id).length > 0) return;
        const card = this.deps.paymentMethods.cardOf(view.merchantAccountId, view.id);
        if (!card) return; // deleted meanwhile
        // Stored by the buyer, for later payments: a buyer-initiated first use.
        const answer = await this.deps.tokenService.provision(
          provisionRequest(id, card, eligibility, { merchantInitiated: false, isSubsequentPayment: false }),
        );
        await this.record(
          { id, merchantAccountId: view.merchantAccountId, paymentMethodId: view.id },
          eligibility.scheme,
          'automatic',
          answer,
        );
      });
    });
  }

  rpcHandlers(): RpcHandlers {
    return {
      [networkTokenPatterns.list]: async (payload) => this.list(payload as NetworkTokenScope),
      [networkTokenPatterns.create]: async (payload) => this.create(payload as NetworkTokenCreateRequest),
      [networkTokenPatterns.suspend]: async (payload) => this.suspend(payload as NetworkTokenRef),
      [networkTokenPatterns.resume]: async (payload) => this.resume(payload as NetworkTokenRef),
      [networkTokenPatterns.delete]: async (payload) => {
        await this.delete(payload as NetworkTokenRef);
        return null;
      },
      [networkTokenPatterns.cryptogram]: async (payload) => this.cryptogram(payload as CryptogramCreateRequest),
    };
  }

  /**
   * Deleted payment methods whose tokens are still live (the token service was unreachable when the method went, or
   * the process stopped): their tokens are deleted now. Driven by the log — `PaymentMethodDeleted` leaves a row in
   * the read model until the last `NetworkTokenDeleted` of that method — so a restart forgets nothing. Each method
   * settles on its own: one that fails is reported and tried again on the next round.
   */
  async deleteTokensOfDeletedMethods(batchSize = 50): Promise<void> {
    for (const pending of this.readModel.pendingDeletions(batchSize)) {
      try {
        await this.deleteLiveTokens(pending.merchantAccountId, pending.paymentMethodId);
      } catch (error) {
        this.onBackgroundError(error);
      }
    }
  }

  /** When a payment method is deleted: one attempt now; what it leaves is owed by the log (`deleteTokensOfDeletedMethods`). */
  private async deleteTokensOf(view: TokenizablePaymentMethod): Promise<void> {
    try {
      await this.deleteLiveTokens(view.merchantAccountId, view.id);
    } catch (error) {
      this.onBackgroundError(error);
    }
  }

  /** Each live token of the payment method is deleted at the token service, then here. */
  private deleteLiveTokens(merchantAccountId: string, paymentMethodId: string): Promise<void> {
    return this.queue.run(paymentMethodId, async () => {
      for (const token of this.readModel.live(merchantAccountId, paymentMethodId)) {
        await this.deleteAtProvider(token.providerTokenId);
        const command: NetworkTokenCommand = {
          type: 'DeleteNetworkToken',
          data: { ...ownerOfView(token), reason: 'payment_method_deleted' },
          metadata: { now: this.now() },
        };
        await this.handle(token.id, command);
      }
    });
  }

  /** Suspend or resume: the decider first, the token service only when the status changes, then the event. */
  private change(
    ref: NetworkTokenRef,
    type: LifeCommand,
    to: ProviderNetworkTokenStatus,
    call: (providerTokenId: string) => Promise<ProviderNetworkTokenStatus>,
  ): Promise<NetworkToken> {
    this.paymentMethod(ref);
    return this.queue.run(ref.payment_method_id, async () => {
      const command: NetworkTokenCommand = { type, data: ownerOf(ref), metadata: { now: this.now() } };
      const state = await this.decideFirst(command);
      if (state.status === 'active' || state.status === 'suspended') {
        if (state.status !== to) {
          const status = await tokenService(() => call(state.providerTokenId));
          if (status !== to)
            throw ApiError.badGateway(
              new Error(`the network token service answered ${status} to ${type} of ${state.providerTokenId}`),
            );
          await this.handle(ref.network_token_id, command);
        }
      }
      return this.get(ref);
    });
  }

  /** The token's state, after checking the command would be accepted (404 for another payment method's token). */
  private async decideFirst(command: NetworkTokenCommand): Promise<NetworkTokenState> {
    const events = await this.context.store.readStream(networkTokenStream(command.data.id));
    const state = events.reduce(
      (current, event) => networkTokenDecider.evolve(current, asDomainEvent<NetworkTokenEvent>(event)),
      networkTokenDecider.initialState(),
    );
    await asApiErrors(async () => networkTokenDecider.decide(command, state));
    return state;
  }

  /** Deleting a token the service does not know (404) is deleting it. */
  private async deleteAtProvider(providerTokenId: string): Promise<void> {
    try {
      await this.deps.tokenService.delete(providerTokenId);
    } catch (error) {
      if (!(error instanceof ConnectorRequestRejectedError && error.status === 404)) throw error;
    }
  }

  private async record(
    owner: NetworkTokenOwner,
    scheme: string,
    trigger: ProvisioningTrigger,
    answer: Awaited<ReturnType<TokenServiceProvider['provision']>>,
  ): Promise<void> {
    const provisioning =
      answer.outcome === 'failed'
        ? answer
        : {
            outcome: 'succeeded' as const,
            providerTokenId: answer.providerTokenId,
            sealedToken: this.seal.seal(owner.merchantAccountId, owner.id, answer.token),
            expirationDate: answer.expirationDate,
            paymentAccountReference: answer.paymentAccountReference,
          };
    await this.handle(owner.id, {
      type: 'RecordProvisioning',
      data: { ...owner, scheme, trigger, answer: provisioning },
      metadata: { now: this.now() },
    });
  }

  /** Runs the command on the token's stream, then waits for the read model (read-your-writes). */
  private async handle(id: string, command: NetworkTokenCommand): Promise<void> {
    await asApiErrors(() => handleCommand(this.context.store, networkTokenStream(id), networkTokenDecider, command));
    await this.context.catchUp();
  }

  /**
   * Background work (automatic provisioning after a card was stored): a failure is reported and the work tried
   * again after each of `retryDelaysMs` — in this process only: a restart forgets what was still to retry.
   */
  private async inBackground(work: () => Promise<void>, attempt = 0): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.onBackgroundError(error);
      const delay = this.retryDelaysMs[attempt];
      if (delay === undefined) return;
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        void this.inBackground(work, attempt + 1);
      }, delay);
      timer.unref();
      this.timers.add(timer);
    }
  }

  /** An active card payment service of the account with network tokens enabled and supported. */
  private async takesNetworkTokens(merchantAccountId: string): Promise<boolean> {
    return (await this.deps.paymentServices.activeConnections(merchantAccountId)).some(
      (connection) =>
        connection.method === 'card' &&
        connection.networkTokensEnabled &&
        connection.effectiveCapabilities.networkTokens,
    );
  }

  private paymentMethod(scope: NetworkTokenScope): TokenizablePaymentMethod {
    const paymentMethod = this.deps.paymentMethods.find(scope.merchant_account_id, scope.payment_method_id);
    if (!paymentMethod) throw ApiError.notFound();
    return paymentMethod;
  }

  /** A live token of the payment method in the path; 404 for anything else. */
  private liveToken(ref: NetworkTokenRef): NetworkTokenView {
    this.paymentMethod(ref);
    const token = this.readModel.find(ref.network_token_id);
    if (
      !token ||
      token.merchantAccountId !== ref.merchant_account_id ||
      token.paymentMethodId !== ref.payment_method_id
    )
      throw ApiError.notFound();
    return token;
  }

  private get(ref: NetworkTokenRef): NetworkToken {
    return this.toWire(this.liveToken(ref));
  }

  private toWire(view: NetworkTokenView): NetworkToken {
    return toNetworkToken(view, this.seal.open(view));
  }

  private now(): string {
    return this.context.now().toISOString();
  }
}

/** What the token service is asked: our token id as the reference, the card, its scheme and the merchant's ids for it. */
function provisionRequest(
  id: string,
  card: TokenProvisionRequest['card'],
  eligibility: Extract<Eligibility, { eligible: true }>,
  use: Pick<TokenProvisionRequest, 'merchantInitiated' | 'isSubsequentPayment' | 'securityCode'>,
): TokenProvisionRequest {
  return {
    reference: id,
    card,
    scheme: eligibility.scheme,
    ...(eligibility.requestorId ? { requestorId: eligibility.requestorId } : {}),
    ...(eligibility.appId ? { appId: eligibility.appId } : {}),
    ...use,
  };
}

const ownerOf = (ref: NetworkTokenRef): NetworkTokenOwner => ({
  id: ref.network_token_id,
  merchantAccountId: ref.merchant_account_id,
  paymentMethodId: ref.payment_method_id,
});
const ownerOfView = (view: NetworkTokenView): NetworkTokenOwner => ({
  id: view.id,
  merchantAccountId: view.merchantAccountId,
  paymentMethodId: view.paymentMethodId,
});
