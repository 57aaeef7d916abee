// The merge of the trash's parts (lib/kit/trash.ts), apart from it: the REST facade runs it and
// loads no GraphQL type (lib/paging.ts loads type-graphql).

/** A part's page, as the facade reads it. */
export interface Part {
  items: TrashRow[];
  nextCursor: string | null;
}

/**
 * The cursor of an entry, as lib/paging.ts's encodeCursor writes it for the parts' order
 * (`deleted_at` in milliseconds, then the id): a part reads on after it (test/trash checks the two agree).
 */
export const trashCursor = (deletedAt: string, id: string): string =>
  Buffer.from(JSON.stringify([Date.parse(deletedAt), id])).toString('base64url');

/** An entry as a part answers it (REST names: the facade's selection). */
export interface TrashRow {
  type: string;
  id: string;
  title: string;
  deleted_at: string;
  purge_at: string;
}

/**
 * The page of the whole trash from its parts, each read with the same `limit` and cursor: the
 * first `limit` of their union in the one order, and the cursor of the last one kept when any
 * part holds more.
 */
export function mergeTrashPages(parts: (Part | null | undefined)[], limit: number): Part {
  const present = parts.filter((p): p is Part => !!p);
  const all = present.flatMap((p) => p.items);
  all.sort((a, b) => {
    const at = Date.parse(b.deleted_at) - Date.parse(a.deleted_at);
    return at !== 0 ? at : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
  });
  const items = all.slice(0, limit);
  const more = all.length > limit || present.some((p) => p.nextCursor !== null);
  const last = items[items.length - 1];
  return { items, nextCursor: more && last ? trashCursor(last.deleted_at, last.id) : null };
}
