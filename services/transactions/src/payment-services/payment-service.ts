/**
 * A merchant account's payment service — its connection to a provider: stream `payment-service-<uuid>`. It belongs
 * to one merchant account for life; addressed under another account it does not exist. Its definition is fixed at
 * creation; a connection can turn the definition's capabilities off, never on.
 */
import type { ConnectorCapability } from '@switchyard/connectors';
import { DomainError, type Decider } from '@switchyard/decider';
import type { DefinitionField, DefinitionInfo } from './payment-service-definitions';

export interface Field {
  readonly key: string;
  readonly value: string;
}

export interface MerchantProfileScheme {
  readonly merchantAcquirerBin: string;
  readonly merchantAcquirerId: string;
  readonly merchantName: string;
  readonly merchantCountryCode: string;
  readonly merchantCategoryCode: string;
  readonly merchantUrl: string;
}

export type CapabilityOverrides = Readonly<Partial<Record<ConnectorCapability, boolean>>>;

export interface PaymentServiceSettings {
  readonly displayName: string;
  readonly position: number;
  readonly acceptedCurrencies: readonly string[];
  readonly acceptedCountries: readonly string[];
  readonly active: boolean;
  readonly threeDSecureEnabled: boolean;
  readonly networkTokensEnabled: boolean;
  readonly paymentMethodTokenizationEnabled: boolean;
  readonly openLoop: boolean;
  readonly settlementReportingEnabled: boolean;
  /** Per card scheme; null: none. */
  readonly merchantProfile: Readonly<Record<string, MerchantProfileScheme>> | null;
  /** Only `false` entries matter: the capability is off for this connection. */
  readonly capabilities: CapabilityOverrides;
}

/**
 * What an update changes. `fields`/`reportingFields`: set by key, an empty value removes the key;
 * `capabilities`: merged into the overrides.
 */
export type PaymentServiceChanges = Partial<PaymentServiceSettings> & {
  readonly fields?: readonly Field[];
  readonly reportingFields?: readonly Field[];
};

export type PaymentServiceEvent =
  | {
      readonly type: 'PaymentServiceCreated';
      readonly data: PaymentServiceSettings & {
        readonly id: string;
        readonly merchantAccountId: string;
        readonly paymentServiceDefinitionId: string;
        readonly method: string;
        readonly fields: readonly Field[];
        readonly reportingFields: readonly Field[];
        readonly at: string;
      };
    }
  | {
      readonly type: 'PaymentServiceUpdated';
      readonly data: PaymentServiceChanges & {
        readonly id: string;
        readonly merchantAccountId: string;
        readonly at: string;
      };
    }
  | {
      readonly type: 'PaymentServiceDeleted';
      readonly data: { readonly id: string; readonly merchantAccountId: string; readonly at: string };
    };

interface CommandMetadata {
  readonly now: string;
}

export type PaymentServiceCommand =
  | {
      readonly type: 'CreatePaymentService';
      readonly data: PaymentServiceSettings & {
        readonly id: string;
        readonly merchantAccountId: string;
        readonly paymentServiceDefinitionId: string;
        readonly fields: readonly Field[];
        readonly reportingFields: readonly Field[];
      };
      readonly metadata: CommandMetadata;
    }
  /** `merchantAccountId`: the account the request addressed it under. */
  | {
      readonly type: 'UpdatePaymentService';
      readonly data: { readonly merchantAccountId: string; readonly changes: PaymentServiceChanges };
      readonly metadata: CommandMetadata;
    }
  | {
      readonly type: 'DeletePaymentService';
      readonly data: { readonly merchantAccountId: string };
      readonly metadata: CommandMetadata;
    };

export type PaymentServiceState =
  | { readonly status: 'absent' }
  | { readonly status: 'deleted' }
  | {
      readonly status: 'present';
      readonly id: string;
      readonly merchantAccountId: string;
      readonly paymentServiceDefinitionId: string;
    };

export const paymentServiceStream = (id: string): string => `payment-service-${id}`;

export const currencyPattern = /^[A-Z]{3}$/;
export const countryPattern = /^[A-Z]{2}$/;

const notFound = () => new DomainError('payment_service_not_found', 'The resource could not be found');

type Detail = { field: string; message: string };

function checkFields(
  fields: readonly Field[] | undefined,
  definitionFields: readonly DefinitionField[],
  name: string,
  details: Detail[],
  creating: boolean,
): void {
  if (fields === undefined) return;
  const known = new Set(definitionFields.map((field) => field.key));
  const seen = new Set<string>();
  fields.forEach((field, index) => {
    if (!known.has(field.key))
      details.push({
        field: `${name}/${index}/key`,
        message: `${field.key} is not a field of this payment service definition`,
      });
    else if (seen.has(field.key))
      details.push({ field: `${name}/${index}/key`, message: `${field.key} is given twice` });
    seen.add(field.key);
  });
  if (creating) {
    for (const required of definitionFields.filter((field) => field.required)) {
      const given = fields.find((field) => field.key === required.key);
      if (!given || given.value.trim() === '') details.push({ field: name, message: `${required.key} is required` });
    }
  } else {
    for (const required of definitionFields.filter((field) => field.required)) {
      const given = fields.find((field) => field.key === required.key);
      if (given && given.value.trim() === '')
        details.push({ field: name, message: `${required.key} is required and cannot be removed` });
    }
  }
}

/** Checks the settings present against the definition; every problem is one detail, named by its field. */
function assertSettings(changes: PaymentServiceChanges, definition: DefinitionInfo, creating: boolean): void {
  const details: Detail[] = [];
  if (changes.displayName !== undefined && changes.displayName.trim() === '')
    details.push({ field: 'display_name', message: 'must not be empty' });
  if (changes.position !== undefined && (!Number.isInteger(changes.position) || changes.position < 0))
    details.push({ field: 'position', message: 'must be a non-negative integer' });
  changes.acceptedCurrencies?.forEach((code, index) => {
    if (!currencyPattern.test(code))
      details.push({ field: `accepted_currencies/${index}`, message: 'must be three upper-case letters (ISO 4217)' });
  });
  changes.acceptedCountries?.forEach((code, index) => {
    if (!countryPattern.test(code))
      details.push({
        field: `accepted_countries/${index}`,
        message: 'must be two upper-case letters (ISO 3166-1 alpha-2)',
      });
  });
  if (changes.acceptedCurrencies !== undefined && changes.acceptedCurrencies.length === 0)
    details.push({ field: 'accepted_currencies', message: 'must not be empty' });
  if (changes.acceptedCountries !== undefined && changes.acceptedCountries.length === 0)
    details.push({ field: 'accepted_countries', message: 'must not be empty' });
  checkFields(changes.fields, definition.fields, 'fields', details, creating);
  checkFields(changes.reportingFields, definition.reportingFields, 'reporting_fields', details, creating);
  for (const [flag, value] of Object.entries(changes.capabilities ?? {}) as [ConnectorCapability, boolean][]) {
    if (!(flag in definition.capabilities))
      details.push({ field: `capabilities/${flag}`, message: 'is not a capability' });
    else if (value && !definition.capabilities[flag]) {
      details.push({
        field: `capabilities/${flag}`,
        message: `the ${definition.id} definition does not support it; a connection can only turn capabilities off`,
      });
    }
  }
  if (details.length > 0) throw new DomainError('invalid_payment_service', 'invalid payment service', details);
}

const unique = (values: readonly string[]): string[] => [...new Set(values)];

/** The rules, given the definitions that exist (`find`: undefined for an unknown definition id). */
export function paymentServiceDecider(
  find: (definitionId: string) => DefinitionInfo | undefined,
): Decider<PaymentServiceCommand, PaymentServiceEvent, PaymentServiceState> {
  return {
    initialState: () => ({ status: 'absent' }),
    decide(command, state) {
      switch (command.type) {
        case 'CreatePaymentService': {
          if (state.status !== 'absent')
            throw new DomainError('payment_service_exists', `payment service ${command.data.id} already exists`);
          const definition = find(command.data.paymentServiceDefinitionId);
          if (!definition) {
            throw new DomainError(
              'unknown_payment_service_definition',
              `unknown payment service definition ${command.data.paymentServiceDefinitionId}`,
              [
                {
                  field: 'payment_service_definition_id',
                  message: `no payment service definition has the id ${command.data.paymentServiceDefinitionId}`,
                },
              ],
            );
          }
          assertSettings(command.data, definition, true);
          return [
            {
              type: 'PaymentServiceCreated',
              data: {
                ...command.data,
                method: definition.method,
                acceptedCurrencies: unique(command.data.acceptedCurrencies),
                acceptedCountries: unique(command.data.acceptedCountries),
                fields: command.data.fields.filter((field) => field.value !== ''),
                reportingFields: command.data.reportingFields.filter((field) => field.value !== ''),
                at: command.metadata.now,
              },
            },
          ];
        }
        case 'UpdatePaymentService': {
          if (state.status !== 'present' || state.merchantAccountId !== command.data.merchantAccountId)
            throw notFound();
          const definition = find(state.paymentServiceDefinitionId);
          if (!definition)
            throw new DomainError(
              'unknown_payment_service_definition',
              `payment service definition ${state.paymentServiceDefinitionId} is no longer available`,
            );
          assertSettings(command.data.changes, definition, false);
          const changes = Object.fromEntries(
            Object.entries(command.data.changes).filter(([, value]) => value !== undefined),
          ) as PaymentServiceChanges;
          return [
            {
              type: 'PaymentServiceUpdated',
              data: {
                ...changes,
                ...(changes.acceptedCurrencies ? { acceptedCurrencies: unique(changes.acceptedCurrencies) } : {}),
                ...(changes.acceptedCountries ? { acceptedCountries: unique(changes.acceptedCountries) } : {}),
                id: state.id,
                merchantAccountId: state.merchantAccountId,
                at: command.metadata.now,
              },
            },
          ];
        }
        case 'DeletePaymentService':
          if (state.status !== 'present' || state.merchantAccountId !== command.data.merchantAccountId)
            throw notFound();
          return [
            {
              type: 'PaymentServiceDeleted',
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
        case 'PaymentServiceCreated':
          return {
            status: 'present',
            id: event.data.id,
            merchantAccountId: event.data.merchantAccountId,
            paymentServiceDefinitionId: event.data.paymentServiceDefinitionId,
          };
        case 'PaymentServiceUpdated':
          return state;
        case 'PaymentServiceDeleted':
          return { status: 'deleted' };
      }
    },
  };
}
