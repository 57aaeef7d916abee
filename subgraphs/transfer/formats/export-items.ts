// This service's export, `vault/items.json`: each item's metadata as the vault's list gives it
// (and a text item's text). Links and texts become records to capture again; a file item's
// metadata waits for its bytes (`vault/files/<id>-<name>`, later in the zip).

/** An item of `vault/items.json` (the fields the import reads). */
export interface ExportedItem {
  id?: unknown;
  kind?: unknown;
  url?: unknown;
  title?: unknown;
  text?: unknown;
  tags?: unknown;
  category?: unknown;
  classification?: { by?: unknown } | null;
  favorite?: unknown;
  archived?: unknown;
  capturedAt?: unknown;
}

/** What an item carries besides its content, as the capture takes it. */
export interface ExportedMeta {
  title?: string;
  tags: string[];
  addedAt?: string;
  favorite?: boolean;
  archived?: boolean;
  category?: string;
  sourceId?: string;
}

export function metaOf(item: ExportedItem): ExportedMeta {
  const tags = Array.isArray(item.tags)
    ? item.tags.map((t: { name?: unknown }) => t?.name).filter((t): t is string => typeof t === 'string')
    : [];
  const captured = typeof item.capturedAt === 'string' ? new Date(item.capturedAt) : null;
  return {
    ...(typeof item.title === 'string' ? { title: item.title } : {}),
    tags,
    ...(captured && !Number.isNaN(captured.getTime()) ? { addedAt: captured.toISOString() } : {}),
    ...(item.favorite === true ? { favorite: true } : {}),
    ...(item.archived === true ? { archived: true } : {}),
    // A category set by hand comes back so; one of a rule or the classifier is found again by them.
    ...(typeof item.category === 'string' && item.classification?.by === 'user' ? { category: item.category } : {}),
    ...(typeof item.id === 'string' ? { sourceId: item.id } : {}),
  };
}

/** The id an export's file name starts with (`<id>-<name>`), and the name without it. */
export function exportedFileName(base: string): { id?: string; name: string } {
  const m = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-(.+)$/i.exec(base);
  return m ? { id: m[1], name: m[2] } : { name: base };
}
