/** Cursor pagination as an async iterator: pages are fetched as the loop asks for more items. */
export interface Page<T> {
  readonly items: readonly T[];
  readonly next_cursor?: string | null;
}

export async function* paginate<T>(
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
  firstCursor?: string,
): AsyncGenerator<T, void, undefined> {
  let cursor = firstCursor;
  for (;;) {
    const page = await fetchPage(cursor);
    yield* page.items;
    if (!page.next_cursor || page.items.length === 0) return;
    cursor = page.next_cursor;
  }
}
