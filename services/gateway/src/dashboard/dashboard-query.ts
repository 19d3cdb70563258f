/** What the dashboard's routes share: the merchant account a page looks at, and validation into the spec's 422. */
import { validate } from '@switchyard/api';
import { DEFAULT_MERCHANT_ACCOUNT_ID } from '@switchyard/contracts';
import { z } from 'zod';

/** Dashboard users are not limited to merchant accounts (as an API key with none listed): the page picks one. */
export const merchantAccountQuery = z.object({
  merchant_account_id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'must be a merchant account id')
    .default(DEFAULT_MERCHANT_ACCOUNT_ID),
});

export const queryOf = <S extends z.ZodType>(schema: S, query: unknown): z.output<S> =>
  validate(schema, query ?? {}, 'query');
export const bodyOf = <S extends z.ZodType>(schema: S, body: unknown): z.output<S> =>
  validate(schema, body ?? {}, 'body');
export const pathOf = <S extends z.ZodType>(schema: S, params: unknown): z.output<S> =>
  validate(schema, params ?? {}, 'path');
