/**
 * The `embed` claim of an embed token (docs/embed-tokens.md): the values the merchant's backend pins for one
 * checkout. The verifier refuses a token whose claim does not have this shape (401), and the CLI refuses to sign
 * one, with the same message.
 *
 * Only the shape is checked here. Whether a pinned value is one a request could carry (metadata within the
 * transaction's limits, say) is the endpoint's question (`services/gateway/src/auth/embed-claims.ts`).
 */
import { z } from 'zod';

export const EMBED_CLAIM_KEYS = ['amount', 'currency', 'buyer_id', 'buyer_external_identifier', 'metadata'] as const;

export const embedClaimSchema = z
  .strictObject(
    {
      amount: z.int('must be an integer (minor units)').min(1, 'must be at least 1'),
      currency: z.string('must be a string').regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code, three upper-case letters'),
      buyer_id: z.uuid('must be a UUID'),
      buyer_external_identifier: z.string('must be a string').min(1, 'must not be empty'),
      metadata: z.record(z.string(), z.string('must be a string'), 'must be an object of string values'),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `unknown key ${issue.keys.map((name) => JSON.stringify(name)).join(', ')}: it pins only ${EMBED_CLAIM_KEYS.join(', ')}`
          : `it must be an object of ${EMBED_CLAIM_KEYS.join(', ')}`,
    },
  )
  .partial()
  // A request cannot name a buyer both ways (400 `mutually_exclusive`), so a token pinning both could not be used.
  .refine((claim) => claim.buyer_id === undefined || claim.buyer_external_identifier === undefined, {
    message: 'pin buyer_id or buyer_external_identifier, not both',
    path: ['buyer_external_identifier'],
  });

/** The pinned values; every key optional (`{}` pins nothing). */
export type EmbedClaim = z.infer<typeof embedClaimSchema>;

export type EmbedClaimParse =
  | { readonly ok: true; readonly claim: EmbedClaim }
  | { readonly ok: false; readonly problem: string };

/** The claim's value checked against {@link embedClaimSchema}; `problem` says what is wrong, field by field. */
export function parseEmbedClaim(value: unknown): EmbedClaimParse {
  const result = embedClaimSchema.safeParse(value);
  if (result.success) return { ok: true, claim: result.data };
  const problems = result.error.issues.map((issue) => {
    const where = issue.path.map(String).join('.');
    return where === '' ? issue.message : `${where}: ${issue.message}`;
  });
  return { ok: false, problem: `the token claim embed is not valid (${problems.join('; ')})` };
}

const uuid = z.uuid();

/** Whether `value` can be a `checkout_session_id` claim (a UUID). */
export const isCheckoutSessionIdClaim = (value: unknown): value is string => uuid.safeParse(value).success;
