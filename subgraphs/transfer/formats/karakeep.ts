// Karakeep's JSON export (Settings → Import / Export → Export links and notes, JSON), as its
// exporter writes it (packages/shared/import-export/exporters.ts in karakeep-app/karakeep):
//   {"lists":[{"id","name","description","icon","type":"manual"|"smart","query","parentId"}],
//    "bookmarks":[{"createdAt": <seconds>, "title", "tags": [names], "lists": [list ids],
//                  "content": {"type":"link","url"} | {"type":"text","text"} | null,
//                  "note", "customMetadata", "archived"}]}
// Read with stream-json, an element at a time (./json-array.ts): a first pass takes the lists (they
// come first and are few: it stops after them), the second the bookmarks. A link becomes a vault
// link, a text a vault text item (the vault is where Karakeep's captures go: both are its
// anchors); tags and the paths of the manual lists it is in become tags (as a Netscape file's
// folders do); `createdAt` becomes `captured_at`, `archived` the item's. A bookmark's own `note`
// (Karakeep's annotation, which the vault has no field for) becomes a note of the notes module
// naming the bookmark.
import crypto from 'node:crypto';
import { noteTag, NoteRecord } from './markdown';
import { JsonShapeError, readJsonArray, TOO_LONG } from './json-array';
import { tagOf } from './netscape';

export class NotKarakeepError extends Error {}

/** A record read from the file, as the import runner applies it. */
export type KarakeepRecord =
  | {
      kind: 'link';
      url: string;
      title: string;
      tags: string[];
      addedAt?: string;
      archived?: boolean;
      path: string;
    }
  | {
      kind: 'text';
      text: string;
      title: string;
      tags: string[];
      addedAt?: string;
      archived?: boolean;
      path: string;
      hash: string;
    }
  | NoteRecord
  | { kind: 'skip'; path: string; message: string };

/** The longest bookmark read (a text of the vault's 1,000,000 characters and its JSON escapes). */
const MAX_ELEMENT_CHARS = 8 * 1024 * 1024;
const MAX_TAGS = 50;
const MAX_NOTE_TITLE = 200;

interface KarakeepList {
  id: string;
  name: string;
  parentId: string | null;
  type: string;
}

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

/**
 * Reads the file twice from `pieces` (a function that yields its text a piece at a time): the lists
 * first, then each bookmark's records handed to `onRecord` (and awaited) as it is read.
 */
export async function readKarakeep(
  pieces: () => AsyncIterable<string>,
  onRecord: (record: KarakeepRecord) => void | Promise<void>,
): Promise<void> {
  const lists = new Map<string, KarakeepList>();
  await asKarakeep(
    readJsonArray(
      pieces(),
      'lists',
      (value) => {
        const list = value === TOO_LONG ? null : (value as Partial<KarakeepList> | null);
        if (list && typeof list.id === 'string' && typeof list.name === 'string')
          lists.set(list.id, {
            id: list.id,
            name: list.name,
            parentId: typeof list.parentId === 'string' ? list.parentId : null,
            type: String(list.type),
          });
      },
      { maxElementChars: MAX_ELEMENT_CHARS, stopAfter: true },
    ),
  );

  const pathOf = listPaths(lists);
  const arrays = await asKarakeep(
    readJsonArray(
      pieces(),
      'bookmarks',
      async (value, index) => {
        const at = `bookmarks[${index}]`;
        const records: KarakeepRecord[] =
          value === TOO_LONG
            ? [{ kind: 'skip', path: at, message: `longer than ${MAX_ELEMENT_CHARS} characters` }]
            : recordsOf(at, value, pathOf);
        for (const record of records) await onRecord(record);
      },
      { maxElementChars: MAX_ELEMENT_CHARS },
    ),
  );
  if (!arrays.has('bookmarks'))
    throw new NotKarakeepError('not a Karakeep export: the JSON object has no "bookmarks" list');
}

async function asKarakeep<T>(reading: Promise<T>): Promise<T> {
  try {
    return await reading;
  } catch (err) {
    if (err instanceof JsonShapeError) throw new NotKarakeepError(`not a Karakeep export: ${err.message}`);
    throw err;
  }
}

/** Each manual list's path of names from the top (Karakeep's importer makes the same of them). */
function listPaths(lists: Map<string, KarakeepList>): (id: string) => string[] {
  const cache = new Map<string, string[]>();
  const pathOf = (id: string, seen = new Set<string>()): string[] => {
    const known = cache.get(id);
    if (known) return known;
    const list = lists.get(id);
    if (!list || list.type !== 'manual') return [];
    if (seen.has(id)) return [list.name]; // a cycle of parents: the list alone
    seen.add(id);
    const path = [...(list.parentId ? pathOf(list.parentId, seen) : []), list.name];
    cache.set(id, path);
    return path;
  };
  return (id) => pathOf(id);
}

function recordsOf(at: string, value: unknown, pathOf: (id: string) => string[]): KarakeepRecord[] {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return [{ kind: 'skip', path: at, message: 'not a bookmark (an object)' }];
  const b = value as {
    createdAt?: unknown;
    title?: unknown;
    tags?: unknown;
    lists?: unknown;
    content?: { type?: unknown; url?: unknown; text?: unknown } | null;
    note?: unknown;
    archived?: unknown;
  };
  const title = typeof b.title === 'string' ? b.title.replace(/\s+/g, ' ').trim() : '';
  const named = [
    ...(Array.isArray(b.tags) ? (b.tags as unknown[]) : []),
    ...(Array.isArray(b.lists) ? b.lists.flatMap((id) => (typeof id === 'string' ? pathOf(id) : [])) : []),
  ].filter((t): t is string => typeof t === 'string');
  const tags = [...new Set(named.map(tagOf).filter(Boolean))].slice(0, MAX_TAGS);
  const seconds = typeof b.createdAt === 'number' && Number.isFinite(b.createdAt) && b.createdAt > 0 ? b.createdAt : 0;
  const addedAt = seconds ? new Date(seconds * 1000).toISOString() : undefined;
  const archived = b.archived === true ? { archived: true } : {};
  const content = b.content;
  let record: KarakeepRecord;
  let source: string;
  if (content?.type === 'link' && typeof content.url === 'string') {
    source = content.url;
    record = { kind: 'link', url: content.url, title, tags, addedAt, ...archived, path: `${at}: ${title || source}` };
  } else if (content?.type === 'text' && typeof content.text === 'string') {
    const text = content.text;
    source = title || text.split('\n')[0].slice(0, 100);
    record = { kind: 'text', text, title, tags, addedAt, ...archived, path: `${at}: ${source}`, hash: sha256(text) };
  } else {
    const type = typeof content?.type === 'string' ? content.type : 'empty';
    return [{ kind: 'skip', path: `${at}: ${title}`, message: `a bookmark of type ${type}: only links and texts are` }];
  }
  if (typeof b.note !== 'string' || !b.note.trim()) return [record];
  // The annotation: a note naming what it annotates, known by what it annotates and its text.
  const body = `${b.note}\n\n${record.kind === 'link' ? `<${record.url}>` : `(on the Karakeep note “${source}”)`}\n`;
  const note: NoteRecord = {
    kind: 'note',
    path: `karakeep: ${sha256(record.kind === 'link' ? record.url : record.text)}`,
    folder: [],
    title: [...(title || source)].slice(0, MAX_NOTE_TITLE).join(''),
    body,
    tags: [...new Set(named.map(noteTag).filter((t): t is string => t !== null))].slice(0, MAX_TAGS),
    hash: sha256(body),
  };
  return [record, note];
}
