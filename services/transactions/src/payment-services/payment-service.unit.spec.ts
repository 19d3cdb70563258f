import { mockCardCapabilities } from '@switchyard/connectors';
import {
  paymentServiceDecider,
  type PaymentServiceCommand,
  type PaymentServiceEvent,
  type PaymentServiceSettings,
} from './payment-service';
import type { DefinitionInfo } from './payment-service-definitions';

const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';
const id = '6f1c1b9e-2f0c-4c55-9a43-6f3a0c7d1e01';

const limited: DefinitionInfo = {
  id: 'limited-card',
  method: 'card',
  capabilities: { ...mockCardCapabilities, multipleCaptures: false },
  fields: [
    { key: 'merchant_id', displayName: 'Merchant ID', required: true, format: 'text', secret: false },
    { key: 'api_key', displayName: 'API key', required: false, format: 'text', secret: true },
  ],
  reportingFields: [],
};
const decider = paymentServiceDecider((definitionId) => (definitionId === limited.id ? limited : undefined));

const settings: PaymentServiceSettings = {
  displayName: 'Cards',
  position: 1,
  acceptedCurrencies: ['USD', 'EUR', 'USD'],
  acceptedCountries: ['US'],
  active: true,
  threeDSecureEnabled: false,
  networkTokensEnabled: false,
  paymentMethodTokenizationEnabled: false,
  openLoop: false,
  settlementReportingEnabled: false,
  merchantProfile: null,
  capabilities: {},
};

const create = (
  overrides: Partial<PaymentServiceSettings> & {
    paymentServiceDefinitionId?: string;
    fields?: { key: string; value: string }[];
  } = {},
): PaymentServiceCommand => ({
  type: 'CreatePaymentService',
  data: {
    id,
    merchantAccountId: 'shop-a',
    paymentServiceDefinitionId: limited.id,
    fields: [{ key: 'merchant_id', value: 'm-1' }],
    reportingFields: [],
    ...settings,
    ...overrides,
  },
  metadata: { now },
});
const update = (
  merchantAccountId: string,
  changes: Extract<PaymentServiceCommand, { type: 'UpdatePaymentService' }>['data']['changes'],
): PaymentServiceCommand => ({
  type: 'UpdatePaymentService',
  data: { merchantAccountId, changes },
  metadata: { now: later },
});
const remove = (merchantAccountId: string): PaymentServiceCommand => ({
  type: 'DeletePaymentService',
  data: { merchantAccountId },
  metadata: { now: later },
});

const given = (events: readonly PaymentServiceEvent[]) => ({
  when: (command: PaymentServiceCommand) =>
    decider.decide(command, events.reduce(decider.evolve, decider.initialState())),
});

describe('when no payment service exists', () => {
  it('creates it for its merchant account with the definition method, currencies de-duplicated', () =>
    expect(given([]).when(create())).toEqual([
      {
        type: 'PaymentServiceCreated',
        data: {
          id,
          merchantAccountId: 'shop-a',
          paymentServiceDefinitionId: limited.id,
          method: 'card',
          ...settings,
          acceptedCurrencies: ['USD', 'EUR'],
          fields: [{ key: 'merchant_id', value: 'm-1' }],
          reportingFields: [],
          at: now,
        },
      },
    ]));

  it('refuses an unknown definition, naming the field', () =>
    expect(() => given([]).when(create({ paymentServiceDefinitionId: 'nope' }))).toThrow(
      expect.objectContaining({
        code: 'unknown_payment_service_definition',
        details: [expect.objectContaining({ field: 'payment_service_definition_id' })],
      }),
    ));

  it('refuses a blank name, malformed codes, unknown and missing required fields, each named', () =>
    expect(() =>
      given([]).when(
        create({
          displayName: ' ',
          acceptedCurrencies: ['usd'],
          acceptedCountries: ['USA'],
          fields: [{ key: 'colour', value: 'blue' }],
        }),
      ),
    ).toThrow(
      expect.objectContaining({
        code: 'invalid_payment_service',
        details: [
          expect.objectContaining({ field: 'display_name' }),
          expect.objectContaining({ field: 'accepted_currencies/0' }),
          expect.objectContaining({ field: 'accepted_countries/0' }),
          expect.objectContaining({ field: 'fields/0/key' }),
          expect.objectContaining({ field: 'fields' }),
        ],
      }),
    ));

  it('lets a connection turn a capability off, never on beyond its definition', () => {
    expect(given([]).when(create({ capabilities: { threeDSecure: false } }))[0]?.data).toMatchObject({
      capabilities: { threeDSecure: false },
    });
    expect(() => given([]).when(create({ capabilities: { multipleCaptures: true } }))).toThrow(
      expect.objectContaining({
        code: 'invalid_payment_service',
        details: [expect.objectContaining({ field: 'capabilities/multipleCaptures' })],
      }),
    );
  });

  it('is not found for updates and deletes', () => {
    expect(() => given([]).when(update('shop-a', { displayName: 'x' }))).toThrow(
      expect.objectContaining({ code: 'payment_service_not_found' }),
    );
    expect(() => given([]).when(remove('shop-a'))).toThrow(
      expect.objectContaining({ code: 'payment_service_not_found' }),
    );
  });
});

describe('when the payment service exists', () => {
  const created = given([]).when(create());

  it('refuses to create it again', () =>
    expect(() => given(created).when(create())).toThrow(expect.objectContaining({ code: 'payment_service_exists' })));

  it('records only the fields that change', () =>
    expect(
      given(created).when(
        update('shop-a', {
          displayName: 'Cards EU',
          position: 3,
          capabilities: { delayedCapture: false },
          active: undefined,
        }),
      ),
    ).toEqual([
      {
        type: 'PaymentServiceUpdated',
        data: {
          id,
          merchantAccountId: 'shop-a',
          displayName: 'Cards EU',
          position: 3,
          capabilities: { delayedCapture: false },
          at: later,
        },
      },
    ]));

  it('refuses turning on a capability the definition lacks, and removing a required field', () => {
    expect(() => given(created).when(update('shop-a', { capabilities: { multipleCaptures: true } }))).toThrow(
      expect.objectContaining({ code: 'invalid_payment_service' }),
    );
    expect(() => given(created).when(update('shop-a', { fields: [{ key: 'merchant_id', value: '' }] }))).toThrow(
      expect.objectContaining({ code: 'invalid_payment_service' }),
    );
  });

  it('deletes it', () =>
    expect(given(created).when(remove('shop-a'))).toEqual([
      { type: 'PaymentServiceDeleted', data: { id, merchantAccountId: 'shop-a', at: later } },
    ]));

  it('does not exist under another merchant account', () => {
    expect(() => given(created).when(update('shop-b', { displayName: 'x' }))).toThrow(
      expect.objectContaining({ code: 'payment_service_not_found' }),
    );
    expect(() => given(created).when(remove('shop-b'))).toThrow(
      expect.objectContaining({ code: 'payment_service_not_found' }),
    );
  });
});

describe('when the payment service was deleted', () => {
  const deleted: PaymentServiceEvent[] = [
    ...given([]).when(create()),
    { type: 'PaymentServiceDeleted', data: { id, merchantAccountId: 'shop-a', at: later } },
  ];
  it('is not found for updates and deletes, and cannot be created again', () => {
    expect(() => given(deleted).when(update('shop-a', { displayName: 'x' }))).toThrow(
      expect.objectContaining({ code: 'payment_service_not_found' }),
    );
    expect(() => given(deleted).when(remove('shop-a'))).toThrow(
      expect.objectContaining({ code: 'payment_service_not_found' }),
    );
    expect(() => given(deleted).when(create())).toThrow(expect.objectContaining({ code: 'payment_service_exists' }));
  });
});
