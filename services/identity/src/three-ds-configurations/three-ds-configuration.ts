/**
 * A merchant account's 3-D Secure configuration (the acquirer's merchant profile sent to the directory server):
 * stream `three-ds-configuration-<uuid>`. It belongs to one merchant account for life; addressed under another
 * account it does not exist.
 */
import { DomainError, type Decider } from '@switchyard/decider';

export interface ThreeDsProfile {
  readonly merchantAcquirerBin: string;
  readonly merchantAcquirerId: string;
  readonly merchantName: string;
  readonly merchantCountryCode: string;
  readonly merchantCategoryCode: string;
  readonly merchantUrl: string;
  /** The card scheme it applies to; null: any. */
  readonly scheme: string | null;
  /** ISO 4217; null: any currency. */
  readonly currency: string | null;
  readonly metadata: Readonly<Record<string, string>>;
}

export type ThreeDsConfigurationChanges = Partial<ThreeDsProfile>;

export type ThreeDsConfigurationEvent =
  | {
      readonly type: 'ThreeDsConfigurationCreated';
      readonly data: ThreeDsProfile & { readonly id: string; readonly merchantAccountId: string; readonly at: string };
    }
  | {
      readonly type: 'ThreeDsConfigurationUpdated';
      readonly data: ThreeDsConfigurationChanges & {
        readonly id: string;
        readonly merchantAccountId: string;
        readonly at: string;
      };
    }
  | {
      readonly type: 'ThreeDsConfigurationDeleted';
      readonly data: { readonly id: string; readonly merchantAccountId: string; readonly at: string };
    };

interface CommandMetadata {
  readonly now: string;
}

export type ThreeDsConfigurationCommand =
  | {
      readonly type: 'CreateThreeDsConfiguration';
      readonly data: ThreeDsProfile & { readonly id: string; readonly merchantAccountId: string };
      readonly metadata: CommandMetadata;
    }
  /** `merchantAccountId`: the account the request addressed it under. */
  | {
      readonly type: 'UpdateThreeDsConfiguration';
      readonly data: { readonly merchantAccountId: string; readonly changes: ThreeDsConfigurationChanges };
      readonly metadata: CommandMetadata;
    }
  | {
      readonly type: 'DeleteThreeDsConfiguration';
      readonly data: { readonly merchantAccountId: string };
      readonly metadata: CommandMetadata;
    };

export type ThreeDsConfigurationState =
  | { readonly status: 'absent' }
  | { readonly status: 'deleted' }
  | { readonly status: 'present'; readonly id: string; readonly merchantAccountId: string };

export const threeDsConfigurationStream = (id: string): string => `three-ds-configuration-${id}`;

export const currencyPattern = /^[A-Z]{3}$/;

const notFound = () => new DomainError('three_ds_configuration_not_found', 'The resource could not be found');

const requiredText: readonly [keyof ThreeDsProfile, string][] = [
  ['merchantAcquirerBin', 'merchant_acquirer_bin'],
  ['merchantAcquirerId', 'merchant_acquirer_id'],
  ['merchantName', 'merchant_name'],
  ['merchantCountryCode', 'merchant_country_code'],
  ['merchantCategoryCode', 'merchant_category_code'],
  ['merchantUrl', 'merchant_url'],
];

/** Checks the fields present: the profile fields must not be blank, the currency must be ISO 4217 shaped. */
function assertProfile(profile: ThreeDsConfigurationChanges): void {
  const details: { field: string; message: string }[] = [];
  for (const [key, field] of requiredText) {
    const value = profile[key];
    if (value !== undefined && (typeof value !== 'string' || value.trim() === ''))
      details.push({ field, message: 'must not be empty' });
  }
  if (profile.currency !== undefined && profile.currency !== null && !currencyPattern.test(profile.currency)) {
    details.push({ field: 'currency', message: 'must be three upper-case letters (ISO 4217)' });
  }
  if (details.length > 0)
    throw new DomainError('invalid_three_ds_configuration', 'invalid 3-D Secure configuration', details);
}

export const threeDsConfiguration: Decider<
  ThreeDsConfigurationCommand,
  ThreeDsConfigurationEvent,
  ThreeDsConfigurationState
> = {
  initialState: () => ({ status: 'absent' }),
  decide(command, state) {
    switch (command.type) {
      case 'CreateThreeDsConfiguration':
        if (state.status !== 'absent')
          throw new DomainError(
            'three_ds_configuration_exists',
            `3-D Secure configuration ${command.data.id} already exists`,
          );
        assertProfile(command.data);
        return [{ type: 'ThreeDsConfigurationCreated', data: { ...command.data, at: command.metadata.now } }];
      case 'UpdateThreeDsConfiguration': {
        if (state.status !== 'present' || state.merchantAccountId !== command.data.merchantAccountId) throw notFound();
        assertProfile(command.data.changes);
        const changes = Object.fromEntries(
          Object.entries(command.data.changes).filter(([, value]) => value !== undefined),
        ) as ThreeDsConfigurationChanges;
        return [
          {
            type: 'ThreeDsConfigurationUpdated',
            data: { ...changes, id: state.id, merchantAccountId: state.merchantAccountId, at: command.metadata.now },
          },
        ];
      }
      case 'DeleteThreeDsConfiguration':
        if (state.status !== 'present' || state.merchantAccountId !== command.data.merchantAccountId) throw notFound();
        return [
          {
            type: 'ThreeDsConfigurationDeleted',
            data: { id: state.id, merchantAccountId: state.merchantAccountId, at: command.metadata.now },
          },
        ];
      default: {
        const unreachable: never = command;
        throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'ThreeDsConfigurationCreated':
        return { status: 'present', id: event.data.id, merchantAccountId: event.data.merchantAccountId };
      case 'ThreeDsConfigurationUpdated':
        return state;
      case 'ThreeDsConfigurationDeleted':
        return { status: 'deleted' };
    }
  },
};
