/**
 * 3-D Secure for the authorization flow: authenticates a card through the scheme's directory server, reads a
 * finished challenge back from it, and records what it said (or the merchant's own external 3-D Secure data) and
 * what that means for the transaction. The card goes to the directory as the vault's aliases: the directory server
 * is built per merchant account with the vault's forwarder as its fetch, held to the hosts its definition declares.
 */
import { ApiError } from '@switchyard/api';
import {
  ConnectorRequestRejectedError,
  ConnectorUnavailableError,
  SimulatorDirectoryServer,
  type ProviderFetch,
  type ThreeDSecureAuthentication,
  type ThreeDSecureData,
  type ThreeDSecureDirectory,
} from '@switchyard/connectors';
import { giftCardTotal, type ThreeDSecureDataInput, type TransactionCreateRequest } from '@switchyard/contracts';
import { threeDsConfigurationFor } from './authorization-policy';
import type { Transaction } from './transaction';
import type { TransactionStore } from './transaction-store';

/**
 * A 3-D Secure directory server as this service builds it: `create` with the fetch its calls go through (the vault's
 * forwarder for one merchant account, which refuses any host but `hosts` and swaps the card aliases back).
 */
export interface ThreeDSecureDirectoryDefinition {
  /** The hosts (`host[:port]`, as a URL's `host`) its calls may reach. */
  readonly hosts: readonly string[];
  create(fetch: ProviderFetch): ThreeDSecureDirectory;
}

/** The simulator's directory server (THREE_DS_DIRECTORY_URL, else the simulator's URL): its one declared host. */
export function simulatorDirectory(config: {
  readonly baseUrl: string;
  readonly timeoutMs?: number;
}): ThreeDSecureDirectoryDefinition {
  return {
    hosts: [new URL(config.baseUrl).host],
    create: (fetch) => new SimulatorDirectoryServer({ ...config, fetch }),
  };
}

/** The card as a directory call takes it: aliases of its number, and its expiry. */
export interface AliasedCard {
  readonly number: string;
  readonly expirationDate: string;
}

/** What 3-D Secure takes from the authorization flow: where the ACS sends the buyer back, and until when a challenge holds. */
export interface ChallengeReturn {
  returnUrl(id: string): string;
  holdExpiry(): string;
}

export class ThreeDSecureAuthenticator {
  constructor(
    private readonly store: TransactionStore,
    /** The directory server of a merchant account (its calls through the forwarder); null: none is configured. */
    private readonly directoryFor: ((merchantAccountId: string) => ThreeDSecureDirectory) | null,
    private readonly challengeReturn: ChallengeReturn,
  ) {}

  /**
   * Authenticates through the scheme's directory server with the merchant account's configuration for the card's
   * scheme and currency. Returns the data to pass to the payment service, null to go on without (setup error, or
   * the directory could not authenticate), 'challenge' when the buyer must be sent to the ACS, 'stop' when the
   * transaction was decided (not authenticated).
   */
  async authenticate(
    id: string,
    request: TransactionCreateRequest,
    card: () => Promise<AliasedCard>,
    scheme: string | null,
    hasRedirectUrl: boolean,
  ): Promise<ThreeDSecureData | null | 'challenge' | 'stop'> {
    const { body } = request;
    const configuration = threeDsConfigurationFor(request.three_ds_configurations ?? [], scheme, body.currency);
    const setupError = (errorDescription: string) =>
      this.store
        .record(id, {
          type: 'RecordThreeDSecure',
          data: { status: 'setup_error', method: null, source: 'directory', errorDescription },
        })
        .then(() => null);
    if (!configuration)
      return setupError(
        `the merchant account has no 3-D Secure configuration for ${scheme ?? 'this card scheme'} in ${body.currency}`,
      );
    if (!this.directoryFor) return setupError('no 3-D Secure directory server is configured');
    const directory = this.directoryFor(request.merchant_account_id);
    const aliases = await card();
    let authentication: ThreeDSecureAuthentication;
    try {
      authentication = await directory.authenticate({
        reference: id,
        // What the card pays: gift cards take their part of the amount.
        amount: body.amount - giftCardTotal(body.gift_cards),
        currency: body.currency,
        card: { number: aliases.number, expirationDate: aliases.expirationDate },
        merchant: {
          acquirerBin: configuration.merchant_acquirer_bin,
          acquirerMerchantId: configuration.merchant_acquirer_id,
          name: configuration.merchant_name,
          countryCode: configuration.merchant_country_code,
          categoryCode: configuration.merchant_category_code,
          url: configuration.merchant_url,
        },
        returnUrl: this.challengeReturn.returnUrl(id),
      });
    } catch (error) {
      if (!(error instanceof ConnectorUnavailableError || error instanceof ConnectorRequestRejectedError)) throw error;
      await this.store.record(id, {
        type: 'RecordThreeDSecure',
        data: { status: 'error', method: null, source: 'directory', errorDescription: error.message },
      });
      return null;
    }
    return this.applyAuthentication(id, authentication, hasRedirectUrl);
  }

  /** Records what the directory server said and what it means for the transaction. */
  async applyAuthentication(
    id: string,
    a: ThreeDSecureAuthentication,
    hasRedirectUrl: boolean,
  ): Promise<ThreeDSecureData | null | 'challenge' | 'stop'> {
    const summary = {
      source: 'directory' as const,
      method: a.method,
      version: a.version,
      transactionStatus: a.transactionStatus,
      directoryServerTransactionId: a.directoryServerTransactionId,
      authenticationId: a.authenticationId,
      ...(a.statusReason ? { statusReason: a.statusReason } : {}),
    };
    switch (a.transactionStatus) {
      case 'C': {
        if (!hasRedirectUrl) {
          await this.store.record(id, {
            type: 'RecordThreeDSecure',
            data: {
              ...summary,
              status: 'error',
              errorDescription: 'a challenge is required and the payment method has no redirect_url',
            },
          });
          await this.store.record(id, {
            type: 'RecordAuthorizationResult',
            data: {
              source: 'create_request',
              result: { outcome: 'failed', error: { errorCode: 'missing_redirect_url' } },
            },
          });
          return 'stop';
        }
        const t = await this.store.state(id);
        if (t.status === 'buyer_approval_pending') return 'challenge'; // still waiting: nothing new
        await this.store.record(id, {
          type: 'RecordAuthorizationResult',
          data: {
            source: 'create_request',
            result: {
              outcome: 'buyer_approval_required',
              reason: 'three_d_secure',
              authenticationId: a.authenticationId,
              ...(a.challengeUrl ? { approvalUrl: a.challengeUrl } : {}),
              expiresAt: this.challengeReturn.holdExpiry(),
            },
          },
        });
        return 'challenge';
      }
      case 'Y':
      case 'A':
        await this.store.record(id, {
          type: 'RecordThreeDSecure',
          data: {
            ...summary,
            status: 'complete',
            ...(a.eci ? { eci: a.eci } : {}),
            ...(a.cavv ? { cavv: a.cavv } : {}),
          },
        });
        return {
          version: a.version,
          eci: a.eci ?? '',
          cryptogram: a.cavv ?? '',
          directoryServerTransactionId: a.directoryServerTransactionId,
        };
      case 'N':
      case 'R':
        await this.store.record(id, {
          type: 'RecordThreeDSecure',
          data: {
            ...summary,
            status: 'declined',
            errorDescription:
              a.transactionStatus === 'N'
                ? 'the cardholder was not authenticated'
                : 'the issuer rejected the authentication',
          },
        });
        await this.store.record(id, {
          type: 'RecordAuthorizationResult',
          data: {
            source: 'create_request',
            result: {
              outcome: 'declined',
              error: { errorCode: 'failed_buyer_approval', rawResponseCode: a.transactionStatus },
            },
          },
        });
        return 'stop';
      case 'U':
        await this.store.record(id, {
          type: 'RecordThreeDSecure',
          data: { ...summary, status: 'error', errorDescription: 'the issuer could not authenticate the cardholder' },
        });
        return null;
    }
  }

  async recordExternalThreeDSecure(id: string, data: ThreeDSecureDataInput): Promise<ThreeDSecureData> {
    const dsTransactionId = 'directory_transaction_id' in data ? data.directory_transaction_id : undefined;
    await this.store.record(id, {
      type: 'RecordThreeDSecure',
      data: {
        status: 'complete',
        method: null,
        source: 'external',
        version: data.version,
        eci: data.eci,
        cavv: data.cavv,
        directoryResponse: data.directory_response,
        ...(data.authentication_response ? { transactionStatus: data.authentication_response } : {}),
        ...(dsTransactionId ? { directoryServerTransactionId: dsTransactionId } : {}),
      },
    });
    return {
      version: data.version,
      eci: data.eci,
      cryptogram: data.cavv,
      ...(dsTransactionId ? { directoryServerTransactionId: dsTransactionId } : {}),
    };
  }

  directoryResult(t: Transaction): Promise<ThreeDSecureAuthentication> {
    if (!this.directoryFor || !t.pendingAuthenticationId)
      throw ApiError.badGateway(new Error('no 3-D Secure directory server is configured'));
    return this.directoryFor(t.merchantAccountId).result(t.pendingAuthenticationId);
  }
}
