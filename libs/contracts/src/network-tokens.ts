/**
 * Network tokens of a stored card on the wire (`/payment-methods/{payment_method_id}/network-tokens…`) and the
 * vault service's RPC patterns behind them (`vault.network-tokens.*`). Shapes of
 * `../shared/reference/wire-compat.md` (NetworkToken, NetworkTokens, NetworkTokenCreate, Cryptogram, CryptogramCreate).
 */
import { z } from 'zod';

export const networkTokenPatterns = {
  list: 'vault.network-tokens.list',
  create: 'vault.network-tokens.create',
  delete: 'vault.network-tokens.delete',
  suspend: 'vault.network-tokens.suspend',
  resume: 'vault.network-tokens.resume',
  cryptogram: 'vault.network-tokens.cryptogram',
} as const;

const timestamp = z.iso.datetime({ offset: true });
const merchantInitiated = z
  .boolean()
  .meta({ description: 'Whether the merchant, not the buyer, initiates the payment(s) the token is for.' });

// ---- request bodies ----------------------------------------------------------------------------------------

export const networkTokenCreateSchema = z
  .object({
    merchant_initiated: merchantInitiated,
    is_subsequent_payment: z.boolean().meta({
      description:
        'Whether the token is for a payment after the first of a series (a recurring or unscheduled payment).',
    }),
    security_code: z
      .string()
      .regex(/^\d{3,4}$/, 'must be 3 or 4 digits')
      .optional()
      .meta({
        description: "The card's security code: sent to the token service to help the issuer approve, never stored.",
      }),
  })
  .strict()
  .meta({ id: 'NetworkTokenCreate', description: 'Provision a network token for a stored card.' });
export type NetworkTokenCreateInput = z.infer<typeof networkTokenCreateSchema>;

export const cryptogramCreateSchema = z.object({ merchant_initiated: merchantInitiated }).strict().meta({
  id: 'CryptogramCreate',
  description: 'Ask the token service for a cryptogram for one payment with the token.',
});
export type CryptogramCreateInput = z.infer<typeof cryptogramCreateSchema>;

// ---- responses -----------------------------------------------------------------------------------------------

export const networkTokenStatuses = ['active', 'inactive', 'suspended', 'deleted'] as const;
export type NetworkTokenStatus = (typeof networkTokenStatuses)[number];

export const networkTokenSchema = z
  .object({
    type: z.literal('network-token'),
    id: z.uuid(),
    payment_method_id: z.uuid(),
    status: z
      .enum(networkTokenStatuses)
      .meta({ description: '`active`, or `suspended` (no cryptograms, no payments until resumed).' }),
    token: z.string().meta({
      description: 'The network token number: a stand-in for the card issued by its network, not the card number.',
    }),
    expiration_date: z.string().meta({ description: "MM/YY: the token's own expiry." }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'NetworkToken' });
export type NetworkToken = z.infer<typeof networkTokenSchema>;

export const networkTokensSchema = z.object({ items: z.array(networkTokenSchema) }).meta({ id: 'NetworkTokens' });
export type NetworkTokens = z.infer<typeof networkTokensSchema>;

export const cryptogramSchema = z
  .object({
    type: z.literal('network-token-cryptogram'),
    cryptogram: z.string().meta({ description: 'Base64, for one payment with the token.' }),
  })
  .meta({ id: 'Cryptogram' });
export type Cryptogram = z.infer<typeof cryptogramSchema>;

// ---- RPC payloads ------------------------------------------------------------------------------------------

/** Every network token RPC acts on one payment method of the request's merchant account. */
export interface NetworkTokenScope {
  readonly merchant_account_id: string;
  readonly payment_method_id: string;
}

export interface NetworkTokenRef extends NetworkTokenScope {
  readonly network_token_id: string;
}

export interface NetworkTokenCreateRequest extends NetworkTokenScope {
  readonly body: NetworkTokenCreateInput;
}

export interface CryptogramCreateRequest extends NetworkTokenRef {
  readonly body: CryptogramCreateInput;
}
