/**
 * Cursor pagination: `{items, limit, next_cursor, previous_cursor}`. A cursor is opaque to clients: base64url of
 * `{after|before: <sort key>}`. The last page always carries `next_cursor: null` (clients stop on null).
 */
import { z } from 'zod';

export interface Page<T> {
  readonly items: readonly T[];
  readonly limit: number;
  readonly next_cursor: string | null;
  readonly previous_cursor: string | null;
}

export type Cursor = { readonly after: string } | { readonly before: string };

export const encodeCursor = (cursor: Cursor): string => Buffer.from(JSON.stringify(cursor)).toString('base64url');

export function decodeCursor(cursor: string): Cursor | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (value && typeof value === 'object') {
      if (typeof (value as { after?: unknown }).after === 'string')
        return { after: (value as { after: string }).after };
      if (typeof (value as { before?: unknown }).before === 'string')
        return { before: (value as { before: string }).before };
    }
  } catch {
    // fall through: an undecodable cursor is a validation error
  }
  return null;
}

/** The query of a cursor-paginated list: `cursor` (nullable) and `limit` within the endpoint's range. */
export const pageQuery = (options: { maxLimit: number; defaultLimit?: number } = { maxLimit: 100 }) =>
  z.object({
    cursor: z
      .string()
      .refine((value) => decodeCursor(value) !== null, { message: 'Invalid cursor' })
      .nullish(),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(options.maxLimit)
      .default(options.defaultLimit ?? 20),
  });

export type PageQuery = { readonly cursor?: string | null; readonly limit: number };

/**
 * Pages through a list already sorted by `keyOf` (unique keys). Suits small catalogues; large lists page in SQL
 * with the same cursor shape.
 */
export function pageOf<T>(sorted: readonly T[], keyOf: (item: T) => string, query: PageQuery): Page<T> {
  const cursor = query.cursor ? decodeCursor(query.cursor) : null;
  let start = 0;
  let end = sorted.length;
  if (cursor && 'after' in cursor) {
    start = sorted.findIndex((item) => keyOf(item) > cursor.after);
    if (start === -1) start = sorted.length;
    end = Math.min(sorted.length, start + query.limit);
  } else if (cursor && 'before' in cursor) {
    end = sorted.findIndex((item) => keyOf(item) >= cursor.before);
    if (end === -1) end = sorted.length;
    start = Math.max(0, end - query.limit);
  } else {
    end = Math.min(sorted.length, query.limit);
  }
  const items = sorted.slice(start, end);
  const first = items[0];
  const last = items[items.length - 1];
  return {
    items,
    limit: query.limit,
    next_cursor: last !== undefined && end < sorted.length ? encodeCursor({ after: keyOf(last) }) : null,
    previous_cursor: first !== undefined && start > 0 ? encodeCursor({ before: keyOf(first) }) : null,
  };
}

export const pageSchema = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item),
    limit: z.number().int(),
    next_cursor: z.string().nullable(),
    previous_cursor: z.string().nullable(),
  });

/**
 * Keyset pagination over a store sorted by a unique string key (e.g. `created_at|id`), for lists too long to hold
 * in memory. `after(key, n)`: the first n items with a key above `key` (from the start when null), ascending;
 * `before(key, n)`: the last n items with a key below `key`, descending.
 */
export function keysetPage<T>(
  query: PageQuery,
  keyOf: (item: T) => string,
  after: (key: string | null, count: number) => T[],
  before: (key: string, count: number) => T[],
): Page<T> {
  const cursor = query.cursor ? decodeCursor(query.cursor) : null;
  let items: T[];
  if (cursor && 'before' in cursor) {
    items = before(cursor.before, query.limit).reverse();
  } else {
    items = after(cursor ? cursor.after : null, query.limit);
  }
  const first = items[0];
  const last = items[items.length - 1];
  return {
    items,
    limit: query.limit,
    next_cursor: last !== undefined && after(keyOf(last), 1).length > 0 ? encodeCursor({ after: keyOf(last) }) : null,
    previous_cursor:
      first !== undefined && before(keyOf(first), 1).length > 0 ? encodeCursor({ before: keyOf(first) }) : null,
  };
}
