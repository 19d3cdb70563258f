/**
 * The payment service definitions: every connector of `libs/connectors` (`connectorRegistry`) and every gift card
 * service (`giftCardServiceRegistry`) with what the API shows of it — its method, its credential fields, its
 * currencies and countries. A new connector gets an entry in `catalogueEntries`; one without an entry is listed as a
 * card provider without fields. A gift card service has none of the connector capabilities.
 */
import {
  MAX_CART_ITEMS,
  paymentServiceDefinitionFields,
  type PaymentServiceCapabilities,
  type PaymentServiceCapabilityName,
  type PaymentServiceDefinition,
} from '@switchyard/contracts';
import {
  connectorRegistry,
  giftCardServiceRegistry,
  type ConnectorCapabilities,
  type ConnectorCapability,
  type ConnectorRegistry,
  type GiftCardServiceRegistry,
} from '@switchyard/connectors';

export interface DefinitionField {
  readonly key: string;
  readonly displayName: string;
  readonly required: boolean;
  readonly format: 'text' | 'multiline' | 'number' | 'timezone' | 'boolean';
  readonly secret: boolean;
}

/** What the payment services decider needs to know of a definition. */
export interface DefinitionInfo {
  readonly id: string;
  readonly method: string;
  readonly capabilities: ConnectorCapabilities;
  readonly fields: readonly DefinitionField[];
  readonly reportingFields: readonly DefinitionField[];
}

interface CatalogueEntry {
  readonly method: string;
  readonly mode: string;
  readonly fields: readonly DefinitionField[];
  readonly reportingFields: readonly DefinitionField[];
  readonly supportedCurrencies: readonly string[];
  readonly supportedCountries: readonly string[];
}

/** Wire name ↔ connector flag; typed both ways so a new flag in `ConnectorCapabilities` fails to compile here. */
export const capabilityWireNames: Readonly<Record<ConnectorCapability, PaymentServiceCapabilityName>> = {
  multipleCaptures: 'multiple_captures',
  incrementalAuthorization: 'incremental_authorization',
  networkTokens: 'network_tokens',
  trackingForwarding: 'tracking_forwarding',
  asynchronousRefundSettlement: 'asynchronous_refund_settlement',
  threeDSecure: 'three_d_secure',
  delayedCapture: 'delayed_capture',
};

export function toWireCapabilities(capabilities: ConnectorCapabilities): PaymentServiceCapabilities {
  const result = {} as Record<PaymentServiceCapabilityName, boolean>;
  for (const [flag, name] of Object.entries(capabilityWireNames) as [
    ConnectorCapability,
    PaymentServiceCapabilityName,
  ][])
    result[name] = capabilities[flag];
  return result;
}

export function fromWireCapabilities(
  input: Partial<Record<PaymentServiceCapabilityName, boolean | undefined>>,
): Partial<Record<ConnectorCapability, boolean>> {
  const result: Partial<Record<ConnectorCapability, boolean>> = {};
  for (const [flag, name] of Object.entries(capabilityWireNames) as [
    ConnectorCapability,
    PaymentServiceCapabilityName,
  ][]) {
    const value = input[name];
    if (value !== undefined) result[flag] = value;
  }
  return result;
}

// The simulator accepts any ISO code; these are the ones the definition advertises.
const commonCurrencies = [
  'AUD',
  'BRL',
  'CAD',
  'CHF',
  'CNY',
  'DKK',
  'EUR',
  'GBP',
  'HKD',
  'INR',
  'JPY',
  'KRW',
  'MXN',
  'NOK',
  'NZD',
  'PLN',
  'SEK',
  'SGD',
  'USD',
  'ZAR',
];
const commonCountries = [
  'AU',
  'BR',
  'CA',
  'CH',
  'CN',
  'DE',
  'DK',
  'ES',
  'FR',
  'GB',
  'HK',
  'IE',
  'IN',
  'IT',
  'JP',
  'KR',
  'MX',
  'NL',
  'NO',
  'NZ',
  'PL',
  'SE',
  'SG',
  'US',
  'ZA',
];

/** A definition's fields as libs/contracts declares them (the OpenAPI document lists the same). */
const declaredFields = (id: string): DefinitionField[] =>
  (paymentServiceDefinitionFields[id] ?? []).map(({ display_name: displayName, ...field }) => ({
    ...field,
    displayName,
  }));

const catalogueEntries: Readonly<Record<string, CatalogueEntry>> = {
  'mock-card': {
    method: 'card',
    mode: 'card',
    fields: declaredFields('mock-card'),
    reportingFields: [],
    supportedCurrencies: commonCurrencies,
    supportedCountries: commonCountries,
  },
  'mock-paypal': {
    method: 'paypal',
    mode: 'redirect',
    fields: declaredFields('mock-paypal'),
    reportingFields: [],
    supportedCurrencies: commonCurrencies,
    supportedCountries: commonCountries,
  },
  // Real providers (docs/connectors/): credentials are secret fields, never answered by the API.
  'adyen-card': {
    method: 'card',
    mode: 'card',
    fields: declaredFields('adyen-card'),
    reportingFields: [],
    supportedCurrencies: commonCurrencies,
    supportedCountries: commonCountries,
  },
  'stripe-card': {
    method: 'card',
    mode: 'card',
    fields: declaredFields('stripe-card'),
    reportingFields: [],
    supportedCurrencies: commonCurrencies,
    supportedCountries: commonCountries,
  },
  'mock-gift-card': {
    method: 'gift-card',
    mode: 'gift-card',
    fields: declaredFields('mock-gift-card'),
    reportingFields: [],
    supportedCurrencies: commonCurrencies,
    supportedCountries: commonCountries,
  },
};

/** A gift card service's capabilities: none of a card connector's (`capabilityWireNames` names every flag). */
const giftCardCapabilities = Object.fromEntries(
  Object.keys(capabilityWireNames).map((flag) => [flag, false]),
) as unknown as ConnectorCapabilities;

/**
 * The approval pages (the simulator's 3-D Secure challenge and PayPal-like approval) fit EMV 3-D Secure's 500×600
 * challenge window, the size a framed approval is given.
 */
const APPROVAL_UI = { width: '500px', height: '600px' } as const;

const fallbackEntry: CatalogueEntry = {
  method: 'card',
  mode: 'card',
  fields: [],
  reportingFields: [],
  supportedCurrencies: [],
  supportedCountries: [],
};

export class PaymentServiceDefinitionCatalogue {
  constructor(
    private readonly registry: ConnectorRegistry = connectorRegistry,
    private readonly giftCards: GiftCardServiceRegistry = giftCardServiceRegistry,
  ) {}

  /** The definition by id; undefined when no connector has it. */
  find(id: string): DefinitionInfo | undefined {
    const definition = this.definition(id);
    if (!definition) return undefined;
    const entry = catalogueEntries[id] ?? fallbackEntry;
    return {
      id,
      method: entry.method,
      capabilities: definition.capabilities,
      fields: entry.fields,
      reportingFields: entry.reportingFields,
    };
  }

  /** Every definition on the wire, by id. */
  list(): PaymentServiceDefinition[] {
    return [...this.registry.list(), ...this.giftCards.list()]
      .map((definition) => this.toWire(definition.id))
      .filter((definition): definition is PaymentServiceDefinition => definition !== undefined)
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  toWire(id: string): PaymentServiceDefinition | undefined {
    const definition = this.definition(id);
    if (!definition) return undefined;
    const entry = catalogueEntries[id] ?? fallbackEntry;
    const capabilities = toWireCapabilities(definition.capabilities);
    return {
      id,
      type: 'payment-service-definition',
      display_name: definition.displayName,
      method: entry.method,
      fields: entry.fields.map(toWireField),
      reporting_fields: entry.reportingFields.map(toWireField),
      supported_currencies: [...entry.supportedCurrencies],
      supported_countries: [...entry.supportedCountries],
      mode: entry.mode,
      icon_url: null,
      supported_features: {
        delayed_capture: capabilities.delayed_capture,
        network_tokens: capabilities.network_tokens,
        partial_refunds: true,
        refunds: true,
        three_d_secure_pass_through: capabilities.three_d_secure,
        void: true,
        multiple_captures: capabilities.multiple_captures,
        incremental_authorization: capabilities.incremental_authorization,
        tracking_forwarding: capabilities.tracking_forwarding,
        asynchronous_refund_settlement: capabilities.asynchronous_refund_settlement,
      },
      capabilities,
      required_checkout_fields: [],
      configuration: {
        approval_ui_height: APPROVAL_UI.height,
        approval_ui_width: APPROVAL_UI.width,
        approval_ui_target: 'any',
        cart_items_limit: MAX_CART_ITEMS,
        cart_items_required: false,
        cart_items_should_match_amount: false,
      },
      supported_integration_clients: null,
    };
  }

  /** A card connector's definition, or a gift card service's with no capabilities. */
  private definition(
    id: string,
  ): { readonly displayName: string; readonly capabilities: ConnectorCapabilities } | undefined {
    const giftCard = this.giftCards.get(id);
    return (
      this.registry.get(id) ?? (giftCard && { displayName: giftCard.displayName, capabilities: giftCardCapabilities })
    );
  }
}

function toWireField(field: DefinitionField) {
  return {
    key: field.key,
    display_name: field.displayName,
    required: field.required,
    format: field.format,
    secret: field.secret,
  };
}
