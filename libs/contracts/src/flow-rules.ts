/**
 * Flow rules on the wire — per merchant account, the conditions under which a flow routes a transaction to an
 * ordered list of payment services, declines it early, or skips or forces 3-D Secure — and the transactions RPC
 * patterns behind them. Request schemas are closed (unknown names, operators and values are a 422 naming the
 * field); responses stay open (`string`) so new conditions never break clients.
 */
import { z } from 'zod';
import { cardSchemeValues } from './merchant-accounts';

export const flowRulePatterns = {
  list: 'transactions.flow-rules.list',
  get: 'transactions.flow-rules.get',
  create: 'transactions.flow-rules.create',
  update: 'transactions.flow-rules.update',
  delete: 'transactions.flow-rules.delete',
} as const;

/** Every flow a path may name; only the served ones have rules yet. */
export const flowNames = ['checkout', 'card-transaction', 'non-card-transaction', 'redirect-transaction'] as const;
export type FlowName = (typeof flowNames)[number];
export const servedFlows = ['card-transaction'] as const satisfies readonly FlowName[];
export type ServedFlow = (typeof servedFlows)[number];

export const flowActions = ['route-transaction', 'decline-early', 'skip-3ds', 'force-3ds'] as const;
export type FlowAction = (typeof flowActions)[number];

export const cardTypes = ['credit', 'debit', 'prepaid'] as const;

const timestamp = z.iso.datetime({ offset: true });
const currency = z
  .string()
  .regex(/^[A-Z]{3}$/)
  .meta({ description: 'ISO 4217 currency code, three upper-case letters.' });
const country = z
  .string()
  .regex(/^[A-Z]{2}$/)
  .meta({ description: 'ISO 3166-1 alpha-2 country code, two upper-case letters.' });
const binPattern = /^\d{6,8}$/;
const binDigits = z.string().regex(binPattern, 'must be 6 to 8 digits');

const binRange = z
  .object({ from: binDigits, to: binDigits })
  .strict()
  .superRefine((range, context) => {
    // zod still runs this after a failed pattern; comparing malformed bounds would only add noise.
    if (!binPattern.test(range.from) || !binPattern.test(range.to)) return;
    if (range.from.length !== range.to.length)
      context.addIssue({ code: 'custom', path: ['to'], message: 'must have as many digits as from' });
    else if (range.from > range.to)
      context.addIssue({ code: 'custom', path: ['to'], message: 'must not be below from' });
  });

const membership = ['one_of', 'not_one_of'] as const;

const condition = <
  const Name extends string,
  const Operators extends readonly [string, ...string[]],
  Value extends z.ZodType,
>(
  name: Name,
  operators: Operators,
  value: Value,
  description: string,
) =>
  z
    .object({ name: z.literal(name), operator: z.enum(operators), value })
    .strict()
    .meta({ description });

export const flowRuleConditionSchema = z
  .discriminatedUnion('name', [
    condition(
      'amount',
      ['equal', 'not_equal', 'greater_than', 'greater_than_or_equal', 'less_than', 'less_than_or_equal'],
      z.int().min(0),
      "The transaction's amount in minor units, compared with the value.",
    ),
    condition(
      'currency',
      membership,
      z.array(currency).min(1).max(300),
      "The transaction's currency is (not) one of the values.",
    ),
    condition(
      'country',
      membership,
      z.array(country).min(1).max(300),
      "The transaction's country is (not) one of the values; a transaction without a country is in none.",
    ),
    condition(
      'bin_range',
      ['in_range', 'not_in_range'],
      z.array(binRange).min(1).max(100),
      "The card number's first digits (as many as `from` has) are within one of the ranges, bounds included.",
    ),
    condition(
      'card_scheme',
      membership,
      z.array(z.enum(cardSchemeValues)).min(1).max(cardSchemeValues.length),
      "The card's scheme is (not) one of the values; an unknown scheme is in none.",
    ),
    condition(
      'card_type',
      membership,
      z.array(z.enum(cardTypes)).min(1).max(cardTypes.length),
      "The card's type is (not) one of the values; an unknown type is in none.",
    ),
    condition(
      'metadata',
      membership,
      z.object({ key: z.string().min(1).max(50), values: z.array(z.string().max(200)).min(1).max(100) }).strict(),
      "The transaction's metadata value under `key` is (not) one of `values`; a missing key is in none.",
    ),
    condition(
      'merchant_initiated',
      ['equal'],
      z.boolean(),
      'Whether the merchant, not the buyer, initiated the transaction.',
    ),
  ])
  .meta({ id: 'FlowRuleCondition' });

export type FlowRuleCondition = z.infer<typeof flowRuleConditionSchema>;

export const flowRuleOutcomeSchema = z
  .discriminatedUnion('type', [
    z
      .object({
        type: z.literal('list'),
        result: z
          .array(z.uuid())
          .min(1)
          .max(10)
          .refine((ids) => new Set(ids).size === ids.length, 'must not name a payment service twice')
          .meta({ description: 'The payment services to try, in this order (failover).' }),
      })
      .strict(),
    z.object({ type: z.literal('boolean'), result: z.boolean() }).strict(),
  ])
  .meta({ id: 'FlowRuleOutcome', description: '`list` for `route-transaction`, `boolean` for every other action.' });

export type FlowRuleOutcome = z.infer<typeof flowRuleOutcomeSchema>;

export const flowRuleSchema = z
  .object({
    type: z.literal('flow-rule'),
    id: z.uuid(),
    merchant_account_id: z.string(),
    flow: z.string(),
    action: z.string(),
    description: z.string().nullable(),
    position: z.number().int().meta({
      description: 'Order among the rules of the same flow and action: lower first; equal positions, oldest first.',
    }),
    conditions: z
      .array(z.object({ name: z.string(), operator: z.string(), value: z.unknown() }))
      .meta({ description: 'All must hold; none: always.' }),
    outcome: z.object({ type: z.string(), result: z.unknown() }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'FlowRule' });

export type FlowRule = z.infer<typeof flowRuleSchema>;

export const flowRulesSchema = z
  .object({
    items: z.array(flowRuleSchema),
    limit: z.number().int(),
    next_cursor: z.string().nullable(),
    previous_cursor: z.string().nullable(),
  })
  .meta({ id: 'FlowRules' });

const action = z.enum(flowActions);
const description = z.string().max(200).nullish();
const position = z.int().min(0).max(1_000_000);
const conditions = z.array(flowRuleConditionSchema).max(20);

export const flowRuleCreateSchema = z
  .object({
    action,
    description,
    position: position.optional().meta({ description: 'Default: after the last rule of the action.' }),
    conditions: conditions.meta({ description: 'All must hold; send [] for a rule that always applies.' }),
    outcome: flowRuleOutcomeSchema.optional(),
  })
  .strict()
  .meta({
    id: 'FlowRuleCreate',
    description:
      '`outcome` is required for `route-transaction`; the other actions default to `{type: boolean, result: true}`.',
  });

export const flowRuleUpdateSchema = z
  .object({
    action: action.optional().meta({ description: 'Cannot change: a different action is a 400.' }),
    description,
    position: position.optional(),
    conditions: conditions.optional(),
    outcome: flowRuleOutcomeSchema.optional(),
  })
  .strict()
  .meta({
    id: 'FlowRuleUpdate',
    description:
      'Only the fields sent change; `conditions` and `outcome` are replaced whole; null clears the description.',
  });

export type FlowRuleCreateInput = z.infer<typeof flowRuleCreateSchema>;
export type FlowRuleUpdateInput = z.infer<typeof flowRuleUpdateSchema>;

export const flowRuleListQuerySchema = z.object({ action: action.optional() });

/** Where a request addresses flow rules: a merchant account's served flow. */
export interface FlowRuleScope {
  readonly merchant_account_id: string;
  readonly flow: ServedFlow;
}

/** What the gateway asks the transactions service for a page of flow rules. */
export interface FlowRuleListRequest extends FlowRuleScope {
  readonly cursor?: string | null;
  readonly limit: number;
  readonly action?: FlowAction;
}
