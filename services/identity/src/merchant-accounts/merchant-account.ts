/** The merchant account aggregate: stream `merchant-account-<id>`. */
import { DomainError, type Decider } from '@switchyard/decider';

/** The account's settings: over-capture limits, multiple captures, network token requestor ids, account updater keys. */
export interface MerchantAccountSettings {
  readonly accountUpdaterEnabled: boolean;
  readonly accountUpdaterRequestEncryptionKey: string | null;
  readonly accountUpdaterRequestEncryptionKeyId: string | null;
  readonly accountUpdaterResponseDecryptionKey: string | null;
  readonly accountUpdaterResponseDecryptionKeyId: string | null;
  readonly overCaptureAmount: number | null;
  readonly overCapturePercentage: number | null;
  /** Multiple (partial) captures of one transaction; the payment service must support them too. */
  readonly multipleCapturesEnabled: boolean;
  readonly loonClientKey: string | null;
  readonly loonSecretKey: string | null;
  readonly loonAcceptedSchemes: readonly string[] | null;
  readonly visaNetworkTokensRequestorId: string | null;
  readonly visaNetworkTokensAppId: string | null;
  readonly amexNetworkTokensRequestorId: string | null;
  readonly amexNetworkTokensAppId: string | null;
  readonly mastercardNetworkTokensRequestorId: string | null;
  readonly mastercardNetworkTokensAppId: string | null;
  /** Discover's token service needs both of these: without them a Discover card gets no network token. */
  readonly discoverNetworkTokensRequestorId: string | null;
  readonly discoverNetworkTokensAppId: string | null;
  readonly asyncNetworkTokensEnabled: boolean;
  /** Stored cards get network tokens (automatically, when a card payment service of the account takes them). */
  readonly networkTokensEnabled: boolean;
}

export const defaultMerchantAccountSettings: MerchantAccountSettings = {
  accountUpdaterEnabled: false,
  accountUpdaterRequestEncryptionKey: null,
  accountUpdaterRequestEncryptionKeyId: null,
  accountUpdaterResponseDecryptionKey: null,
  accountUpdaterResponseDecryptionKeyId: null,
  overCaptureAmount: null,
  overCapturePercentage: null,
  multipleCapturesEnabled: false,
  loonClientKey: null,
  loonSecretKey: null,
  loonAcceptedSchemes: null,
  visaNetworkTokensRequestorId: null,
  visaNetworkTokensAppId: null,
  amexNetworkTokensRequestorId: null,
  amexNetworkTokensAppId: null,
  mastercardNetworkTokensRequestorId: null,
  mastercardNetworkTokensAppId: null,
  discoverNetworkTokensRequestorId: null,
  discoverNetworkTokensAppId: null,
  asyncNetworkTokensEnabled: false,
  networkTokensEnabled: false,
};

/** An update names only what changes. */
export type MerchantAccountChanges = { readonly displayName?: string } & Partial<MerchantAccountSettings>;

export type MerchantAccountEvent =
  | {
      readonly type: 'MerchantAccountCreated';
      /** `settings` is absent on accounts created before settings existed: they have the defaults. */
      readonly data: {
        readonly id: string;
        readonly displayName: string;
        readonly settings?: MerchantAccountSettings;
        readonly at: string;
      };
    }
  | {
      readonly type: 'MerchantAccountUpdated';
      readonly data: MerchantAccountChanges & { readonly id: string; readonly at: string };
    };

export type MerchantAccountCommand =
  | {
      readonly type: 'CreateMerchantAccount';
      readonly data: {
        readonly id: string;
        readonly displayName: string;
        readonly settings?: Partial<MerchantAccountSettings>;
      };
      readonly metadata: { readonly now: string };
    }
  | {
      readonly type: 'UpdateMerchantAccount';
      readonly data: MerchantAccountChanges;
      readonly metadata: { readonly now: string };
    };

export type MerchantAccountState = { readonly status: 'absent' } | { readonly status: 'active'; readonly id: string };

export const merchantAccountStream = (id: string): string => `merchant-account-${id}`;

/** Merchant account ids are chosen by the operator: short, URL-safe. */
export const merchantAccountIdPattern = /^[a-z0-9][a-z0-9-]{0,63}$/;

const invalid = (field: string, message: string) =>
  new DomainError('invalid_merchant_account', `invalid ${field.replace(/_/g, ' ')}`, [{ field, message }]);

function assertDisplayName(displayName: string | undefined): void {
  if (displayName !== undefined && displayName.trim() === '') throw invalid('display_name', 'must not be empty');
}

function assertSettings(settings: Partial<MerchantAccountSettings>): void {
  const limits: [keyof MerchantAccountSettings, string][] = [
    ['overCaptureAmount', 'over_capture_amount'],
    ['overCapturePercentage', 'over_capture_percentage'],
  ];
  for (const [key, field] of limits) {
    const value = settings[key];
    if (
      value !== undefined &&
      value !== null &&
      (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    ) {
      throw invalid(field, 'must be a whole number, zero or more');
    }
  }
  // Switches are never null: the read model stores them NOT NULL, and an event it cannot apply would stall it.
  const switches: [keyof MerchantAccountSettings, string][] = [
    ['accountUpdaterEnabled', 'account_updater_enabled'],
    ['multipleCapturesEnabled', 'multiple_captures_enabled'],
    ['asyncNetworkTokensEnabled', 'async_network_tokens_enabled'],
    ['networkTokensEnabled', 'network_tokens_enabled'],
  ];
  for (const [key, field] of switches) {
    const value = settings[key];
    if (value !== undefined && typeof value !== 'boolean') throw invalid(field, 'must be true or false');
  }
}

export const merchantAccount: Decider<MerchantAccountCommand, MerchantAccountEvent, MerchantAccountState> = {
  initialState: () => ({ status: 'absent' }),
  decide(command, state) {
    switch (command.type) {
      case 'CreateMerchantAccount': {
        if (state.status !== 'absent')
          throw new DomainError('merchant_account_exists', `merchant account ${command.data.id} already exists`);
        if (!merchantAccountIdPattern.test(command.data.id)) {
          throw invalid(
            'id',
            'lower-case letters, digits and hyphens, 1 to 64 characters, starting with a letter or digit',
          );
        }
        assertDisplayName(command.data.displayName);
        const given = Object.fromEntries(
          Object.entries(command.data.settings ?? {}).filter(([, value]) => value !== undefined),
        ) as Partial<MerchantAccountSettings>;
        const settings: MerchantAccountSettings = { ...defaultMerchantAccountSettings, ...given };
        assertSettings(settings);
        return [
          {
            type: 'MerchantAccountCreated',
            data: { id: command.data.id, displayName: command.data.displayName, settings, at: command.metadata.now },
          },
        ];
      }
      case 'UpdateMerchantAccount': {
        if (state.status !== 'active')
          throw new DomainError('merchant_account_not_found', 'The resource could not be found');
        assertDisplayName(command.data.displayName);
        assertSettings(command.data);
        const changes = Object.fromEntries(
          Object.entries(command.data).filter(([, value]) => value !== undefined),
        ) as MerchantAccountChanges;
        return [{ type: 'MerchantAccountUpdated', data: { id: state.id, ...changes, at: command.metadata.now } }];
      }
      default: {
        const unreachable: never = command;
        throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'MerchantAccountCreated':
        return { status: 'active', id: event.data.id };
      case 'MerchantAccountUpdated':
        return state;
      default:
        return state;
    }
  },
};
