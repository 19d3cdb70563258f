/**
 * Digital wallets — a merchant account's registrations with wallet providers (Apple Pay, Google Pay, Click to Pay,
 * Paze): list, create, get, update, delete; one wallet per provider and merchant account, held on the write side by
 * a claim stream. A Paze wallet carries the merchant's decryption key, sealed; the transaction flow reads it back
 * through `pazeKeyFor` (the key lives in memory only while the payment uses it).
 */
import type { KeyObject } from 'node:crypto';
import { ApiError } from '@switchyard/api';
import {
  digitalWalletPatterns,
  type DigitalWallet,
  type DigitalWalletCreateInput,
  type DigitalWalletCreateRequest,
  type DigitalWalletRef,
  type DigitalWalletScope,
  type DigitalWalletUpdateInput,
  type DigitalWalletUpdateRequest,
} from '@switchyard/contracts';
import { asDomainEvent, DomainError, handleCommand } from '@switchyard/decider';
import type { RpcHandlers } from '@switchyard/rpc';
import { domainErrorMapper } from '@switchyard/service';
import type { VaultContext, VaultSlice } from '../vault-context';
import {
  digitalWalletDecider,
  digitalWalletStream,
  KEYED_PROVIDER,
  type DigitalWalletChanges,
  type DigitalWalletCommand,
  type DigitalWalletEvent,
  type DigitalWalletSettings,
  type DigitalWalletState,
  type SealedDecryptionKey,
} from './digital-wallet';
import {
  digitalWalletProviderClaim,
  digitalWalletProviderStream,
  DigitalWalletProviderTaken,
  type DigitalWalletProviderClaimEvent,
} from './digital-wallet-provider-claim';
import { toDigitalWallet } from './digital-wallet-wire';
import { DigitalWalletsReadModel, type DigitalWalletView } from './digital-wallets.read-model';
import {
  InvalidDecryptionKeyError,
  PazeKeySealer,
  readPazeDecryptionKey,
  type PazeDecryptionKey,
} from './paze-decryption-key';

export interface DigitalWalletsDependencies {
  /** 32 bytes: the key the Paze decryption keys are sealed under (`TransactionsService.sealingKey`). */
  readonly sealingKey: Buffer;
}

/** The digital wallet codes that are not a plain 400 (the service's table, `../errors.ts`, is shared work). */
const domainErrors = domainErrorMapper({ digital_wallet_not_found: 404, digital_wallet_exists: 409 });

function toApiError(error: unknown): unknown {
  if (error instanceof DigitalWalletProviderTaken) {
    return new ApiError(
      409,
      error.message,
      [{ location: 'body', pointer: '/provider', message: error.message, type: error.code }],
      { resourceId: error.holderId, cause: error },
    );
  }
  return domainErrors(error);
}

async function asApiErrors<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw toApiError(error);
  }
}

export class DigitalWallets implements VaultSlice {
  readonly readModel: DigitalWalletsReadModel;
  private readonly sealer: PazeKeySealer;

  constructor(
    private readonly context: VaultContext,
    deps: DigitalWalletsDependencies,
  ) {
    this.readModel = new DigitalWalletsReadModel(context.db);
    this.sealer = new PazeKeySealer(deps.sealingKey);
  }

  get projection() {
    return this.readModel.projection;
  }

  /** A wallet of the merchant account; null when unknown, deleted or another account's. */
  find(merchantAccountId: string, id: string): DigitalWalletView | null {
    const wallet = this.readModel.find(id);
    return wallet && wallet.merchantAccountId === merchantAccountId ? wallet : null;
  }

  /**
   * The merchant account's Paze wallet and its decryption key, for decrypting one payment's payload (never log,
   * persist or emit the key). Null when the account has no Paze wallet.
   */
  pazeKeyFor(merchantAccountId: string): { wallet: DigitalWalletView; key: KeyObject } | null {
    const found = this.readModel.ofProvider(merchantAccountId, KEYED_PROVIDER);
    if (!found?.sealedDecryptionKey) return null;
    return {
      wallet: found.wallet,
      key: this.sealer.open(found.wallet.id, merchantAccountId, found.sealedDecryptionKey),
    };
  }

  list({ merchant_account_id: merchantAccountId }: DigitalWalletScope): { items: DigitalWallet[] } {
    return { items: this.readModel.list(merchantAccountId).map(toDigitalWallet) };
  }

  get({ merchant_account_id: merchantAccountId, digital_wallet_id: id }: DigitalWalletRef): DigitalWallet {
    const wallet = this.find(merchantAccountId, id);
    if (!wallet) throw ApiError.notFound();
    return toDigitalWallet(wallet);
  }

  /**
   * Registers the wallet: the provider is claimed for the merchant account first (409 when another wallet holds it),
   * then the wallet's stream is written. A Paze key is read and sealed for the new wallet before anything is appended.
   */
  async create({ merchant_account_id: merchantAccountId, body }: DigitalWalletCreateRequest): Promise<DigitalWallet> {
    const now = this.context.now().toISOString();
    const key = body.decryption_key !== undefined ? await readKey(body.decryption_key) : null;
    const register = (id: string, decryptionKey: SealedDecryptionKey | null): DigitalWalletCommand => ({
      type: 'RegisterDigitalWallet',
      data: {
        id,
        merchantAccountId,
        provider: body.provider,
        ...registeredSettings(body),
        acceptTermsAndConditions: body.accept_terms_and_conditions,
        decryptionKey,
      },
      metadata: { now },
    });
    const claimStream = digitalWalletProviderStream(merchantAccountId, body.provider);
    const id = await asApiErrors(async () => {
      // Decided once before claiming, so a refused wallet (terms not accepted, a key it cannot take) never holds the provider.
      digitalWalletDecider.decide(
        register('', key ? { keyId: key.keyId, sealed: '' } : null),
        digitalWalletDecider.initialState(),
      );

      const holder = await this.claimHolder(claimStream);
      let id = this.context.newId();
      let replacing: string | undefined;
      if (holder !== undefined) {
        const held = await this.state(holder);
        if (held.status === 'present') throw new DigitalWalletProviderTaken(body.provider, holder);
        // A create that stopped after its claim is finished under the claimed id; a delete that stopped before its
        // release hands the claim over.
        if (held.status === 'absent') id = holder;
        else replacing = holder;
      }
      await handleCommand(this.context.store, claimStream, digitalWalletProviderClaim, {
        type: 'ClaimDigitalWalletProvider',
        data: { merchantAccountId, provider: body.provider, digitalWalletId: id, ...(replacing ? { replacing } : {}) },
        metadata: { now },
      });
      const decryptionKey = key ? { keyId: key.keyId, sealed: this.sealer.seal(id, merchantAccountId, key.pem) } : null;
      try {
        await handleCommand(
          this.context.store,
          digitalWalletStream(id),
          digitalWalletDecider,
          register(id, decryptionKey),
        );
      } catch (error) {
        // Two creates finishing the same orphaned claim: the one that lost sees the other's wallet.
        if (error instanceof DomainError && error.code === 'digital_wallet_exists')
          throw new DigitalWalletProviderTaken(body.provider, id);
        throw error;
      }
      return id;
    });
    await this.context.catchUp();
    return this.get({ merchant_account_id: merchantAccountId, digital_wallet_id: id });
  }

  /** Changes the fields sent (a Paze wallet's key too); the provider never changes. */
  async update({
    merchant_account_id: merchantAccountId,
    digital_wallet_id: id,
    body,
  }: DigitalWalletUpdateRequest): Promise<DigitalWallet> {
    if (!this.find(merchantAccountId, id)) throw ApiError.notFound();
    const key = body.decryption_key !== undefined ? await readKey(body.decryption_key) : null;
    const changes: DigitalWalletChanges = {
      ...settingsOf(body),
      ...(key ? { decryptionKey: { keyId: key.keyId, sealed: this.sealer.seal(id, merchantAccountId, key.pem) } } : {}),
    };
    await asApiErrors(() =>
      handleCommand(this.context.store, digitalWalletStream(id), digitalWalletDecider, {
        type: 'UpdateDigitalWallet',
        data: { merchantAccountId, changes },
        metadata: { now: this.context.now().toISOString() },
      }),
    );
    await this.context.catchUp();
    return this.get({ merchant_account_id: merchantAccountId, digital_wallet_id: id });
  }

  /** Deletes the wallet (a Paze key with it: its sealed text is no longer read), then frees its provider. */
  async delete({ merchant_account_id: merchantAccountId, digital_wallet_id: id }: DigitalWalletRef): Promise<void> {
    const now = this.context.now().toISOString();
    await asApiErrors(async () => {
      const { events } = await handleCommand(this.context.store, digitalWalletStream(id), digitalWalletDecider, {
        type: 'DeleteDigitalWallet',
        data: { merchantAccountId },
        metadata: { now },
      });
      const deleted = events.find((event) => event.type === 'DigitalWalletDeleted');
      if (deleted?.type !== 'DigitalWalletDeleted') return;
      const { provider } = deleted.data;
      await handleCommand(
        this.context.store,
        digitalWalletProviderStream(merchantAccountId, provider),
        digitalWalletProviderClaim,
        {
          type: 'ReleaseDigitalWalletProvider',
          data: { merchantAccountId, provider, digitalWalletId: id },
          metadata: { now },
        },
      );
    });
    await this.context.catchUp();
  }

  rpcHandlers(): RpcHandlers {
    return {
      [digitalWalletPatterns.list]: async (payload) => this.list(payload as DigitalWalletScope),
      [digitalWalletPatterns.create]: async (payload) => this.create(payload as DigitalWalletCreateRequest),
      [digitalWalletPatterns.get]: async (payload) => this.get(payload as DigitalWalletRef),
      [digitalWalletPatterns.update]: async (payload) => this.update(payload as DigitalWalletUpdateRequest),
      [digitalWalletPatterns.delete]: async (payload) => {
        await this.delete(payload as DigitalWalletRef);
        return null;
      },
    };
  }

  private async state(id: string): Promise<DigitalWalletState> {
    const events = await this.context.store.readStream(digitalWalletStream(id));
    return events.reduce(
      (state, event) => digitalWalletDecider.evolve(state, asDomainEvent<DigitalWalletEvent>(event)),
      digitalWalletDecider.initialState(),
    );
  }

  private async claimHolder(stream: string): Promise<string | undefined> {
    const events = await this.context.store.readStream(stream);
    const claim = events.reduce(
      (state, event) => digitalWalletProviderClaim.evolve(state, asDomainEvent<DigitalWalletProviderClaimEvent>(event)),
      digitalWalletProviderClaim.initialState(),
    );
    return claim.status === 'claimed' ? claim.digitalWalletId : undefined;
  }
}

function registeredSettings(body: DigitalWalletCreateInput): DigitalWalletSettings {
  return {
    merchantName: body.merchant_name,
    merchantDisplayName: body.merchant_display_name ?? null,
    merchantUrl: body.merchant_url ?? null,
    merchantCountryCode: body.merchant_country_code ?? null,
    domainNames: body.domain_names.map((name) => name.toLowerCase()),
  };
}

/** The settings a body sets: host names lower-cased (DNS names are case-insensitive); absent fields stay absent. */
function settingsOf(body: DigitalWalletCreateInput | DigitalWalletUpdateInput): DigitalWalletChanges {
  return {
    ...(body.merchant_name !== undefined ? { merchantName: body.merchant_name } : {}),
    ...(body.merchant_display_name !== undefined ? { merchantDisplayName: body.merchant_display_name } : {}),
    ...(body.merchant_url !== undefined ? { merchantUrl: body.merchant_url } : {}),
    ...(body.merchant_country_code !== undefined ? { merchantCountryCode: body.merchant_country_code } : {}),
    ...(body.domain_names !== undefined ? { domainNames: body.domain_names.map((name) => name.toLowerCase()) } : {}),
  };
}

/** A submitted Paze key, or a 400 naming the field (never quoting it). */
async function readKey(submitted: string): Promise<PazeDecryptionKey> {
  try {
    return await readPazeDecryptionKey(submitted);
  } catch (error) {
    if (!(error instanceof InvalidDecryptionKeyError)) throw error;
    const message = `decryption_key ${error.message}`;
    throw ApiError.badRequest(`The decryption key is not usable: ${error.message}`, [
      { location: 'body', pointer: '/decryption_key', message, type: 'invalid_decryption_key' },
    ]);
  }
}
