/**
 * Buyers between the wire and the domain: request bodies normalised to what is stored (every field of billing and
 * shipping details present, null when not given — so equal values compare equal), and views as the API shows them.
 */
import type {
  Address,
  AddressInput,
  BillingDetails,
  BillingDetailsInput,
  Buyer,
  BuyerCreateInput,
  BuyerUpdateInput,
  Contact,
  ShippingDetails,
  ShippingDetailsCreateInput,
  ShippingDetailsUpdateInput,
} from '@switchyard/contracts';
import type { BuyerChanges, BuyerDetails, ShippingDetailsChanges, ShippingDetailsData } from './buyer';
import type { BuyerView, ShippingDetailsView } from './buyers.read-model';

const address = (input: AddressInput | null | undefined): Address | null =>
  input == null
    ? null
    : {
        city: input.city ?? null,
        country: input.country ?? null,
        postal_code: input.postal_code ?? null,
        state: input.state ?? null,
        state_code: input.state_code ?? null,
        house_number_or_name: input.house_number_or_name ?? null,
        line1: input.line1 ?? null,
        line2: input.line2 ?? null,
        organization: input.organization ?? null,
      };

type ContactInput = Partial<Record<keyof Omit<Contact, 'address'>, string | null>> & {
  readonly address?: AddressInput | null;
};

const contact = (input: ContactInput): Contact => ({
  first_name: input.first_name ?? null,
  last_name: input.last_name ?? null,
  email_address: input.email_address ?? null,
  phone_number: input.phone_number ?? null,
  address: address(input.address),
});

const billingDetails = (input: BillingDetailsInput | null | undefined): BillingDetails | null =>
  input == null
    ? null
    : { ...contact(input), tax_id: input.tax_id ? { value: input.tax_id.value, kind: input.tax_id.kind } : null };

/** Only the keys present in `input`, each mapped; absent keys stay absent (PUT changes only what was sent). */
function sent<Input extends object, Output>(
  input: Input,
  map: { [K in keyof Input]-?: (value: Input[K]) => [keyof Output, unknown] },
): Partial<Output> {
  const out: Partial<Output> = {};
  for (const key of Object.keys(input) as (keyof Input)[]) {
    if (input[key] === undefined) continue;
    const [field, value] = map[key](input[key]);
    (out as Record<keyof Output, unknown>)[field] = value;
  }
  return out;
}

export const buyerDetailsOf = (body: BuyerCreateInput): BuyerDetails => ({
  displayName: body.display_name ?? null,
  externalIdentifier: body.external_identifier ?? null,
  billingDetails: billingDetails(body.billing_details),
  accountNumber: body.account_number ?? null,
});

export const buyerChangesOf = (body: BuyerUpdateInput): BuyerChanges =>
  sent<BuyerUpdateInput, BuyerDetails>(body, {
    display_name: (value) => ['displayName', value ?? null],
    external_identifier: (value) => ['externalIdentifier', value ?? null],
    billing_details: (value) => ['billingDetails', billingDetails(value)],
    account_number: (value) => ['accountNumber', value ?? null],
  });

export const shippingDetailsOf = (body: ShippingDetailsCreateInput): ShippingDetailsData => contact(body);

export const shippingDetailsChangesOf = (body: ShippingDetailsUpdateInput): ShippingDetailsChanges =>
  sent<ShippingDetailsUpdateInput, ShippingDetailsData>(body, {
    first_name: (value) => ['first_name', value ?? null],
    last_name: (value) => ['last_name', value ?? null],
    email_address: (value) => ['email_address', value ?? null],
    phone_number: (value) => ['phone_number', value ?? null],
    address: (value) => ['address', address(value)],
  });

export const toBuyer = (view: BuyerView): Buyer => ({
  type: 'buyer',
  id: view.id,
  merchant_account_id: view.merchantAccountId,
  display_name: view.displayName,
  external_identifier: view.externalIdentifier,
  billing_details: view.billingDetails,
  account_number: view.accountNumber,
  created_at: view.createdAt,
  updated_at: view.updatedAt,
});

export const toShippingDetails = (view: ShippingDetailsView): ShippingDetails => ({
  type: 'shipping-details',
  id: view.id,
  buyer_id: view.buyerId,
  first_name: view.first_name,
  last_name: view.last_name,
  email_address: view.email_address,
  phone_number: view.phone_number,
  address: view.address,
});
