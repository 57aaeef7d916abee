// Lists of plain objects answered from arrays built ahead of time (issue 44). graphql-js completes
// a list item by item and field by field: a whole hub's 5,000 nodes and 20,000 edges held the event
// loop for ~150 ms per query. When every field selected under a list is a leaf that graphql-js's
// default resolver reads (no arguments, no resolver of its own) on a type with no `isTypeOf` that
// is no entity (no other subgraph adds to its objects, so the gateway never merges into them), the
// list's answer depends on its items and on the selection alone: a resolver can build it once
// (buildPlainList, a chunk at a time), keep it, and answer it again (answerPlainList).
//
// graphql-js cannot be told to take a list as completed, so the resolver hands it an empty list and
// the subgraph's executor puts the kept array in its place when execution ends (withPlainLists, at
// the field's path in the answer). The array's JSON text is kept with it (./json-text.ts), so that
// the answer is sent without serialising it again and the answer-size step counts it in one look.
// The kept items are frozen: one array answers every request for that selection.
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  ExecutionResult,
  getNullableType,
  GraphQLLeafType,
  GraphQLObjectType,
  GraphQLResolveInfo,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
} from 'graphql';
import { collectSubfields } from 'graphql/execution/collectFields';
import { JSON_CHUNK_ITEMS, keepArrayText, markHoldsKeptText } from './json-text';

interface PlainField {
  /** Its name in the answer: the alias, or the field's name. */
  key: string;
  /** The property graphql-js's default resolver reads: the field's name. */
  name: string;
  /** The leaf type that serialises the value; none for `__typename`. */
  type?: GraphQLLeafType;
  nonNull: boolean;
}

export interface PlainSelection {
  /** The same for selections that answer alike: the type, and each answer key with its field, in order. */
  readonly key: string;
  readonly typeName: string;
  readonly fields: readonly PlainField[];
}

export interface PlainList {
  readonly items: readonly object[];
  /** An estimate of the heap it holds: its text and its objects. */
  readonly bytes: number;
}

/** Counts for tests: lists built, and lists answered from a kept array. */
export const plainListCounts = { built: 0, answered: 0 };

/** Per execution (by its context): the kept arrays to put in, at their paths. */
const deferred = new WeakMap<object, { path: (string | number)[]; items: readonly object[] }[]>();

/** Called before an execution whose answer withPlainLists will complete: its resolvers may defer lists. */
export function expectPlainLists(context: object): void {
  deferred.set(context, []);
}

const isEntity = (type: GraphQLObjectType) =>
  [type.astNode, ...type.extensionASTNodes].some((node) => node?.directives?.some((d) => d.name.value === 'key'));

/**
 * The selection under a list field when it is leaves only, read as they are (above); undefined
 * when graphql-js must complete the list itself, or when the execution is not one whose answer
 * withPlainLists completes.
 */
export function plainSelection(info: GraphQLResolveInfo, context: object): PlainSelection | undefined {
  if (!deferred.has(context)) return undefined;
  const list = getNullableType(info.returnType);
  if (!isListType(list)) return undefined;
  const itemType = getNullableType(list.ofType);
  if (!isObjectType(itemType) || itemType.isTypeOf || isEntity(itemType)) return undefined;
  // As graphql-js collects them: fragments, @skip and @include with the operation's variables.
  const collected = collectSubfields(info.schema, info.fragments, info.variableValues, itemType, info.fieldNodes);
  const own = itemType.getFields();
  const fields: PlainField[] = [];
  for (const [key, nodes] of collected) {
    const name = nodes[0].name.value;
    if (name === '__typename') {
      fields.push({ key, name, nonNull: true });
      continue;
    }
    const def = own[name];
    const type = def && getNullableType(def.type);
    if (!def || def.resolve || def.args.length || !isLeafType(type)) return undefined;
    fields.push({ key, name, type, nonNull: isNonNullType(def.type) });
  }
  const names = fields.map((f) => (f.key === f.name ? f.name : `${f.key}:${f.name}`));
  return { key: `${itemType.name} ${names.join(' ')}`, typeName: itemType.name, fields };
}

/** One item as graphql-js would complete it; undefined where it would not complete it without an error. */
function plainItem(source: unknown, selection: PlainSelection): object | undefined {
  if (typeof source !== 'object' || source === null) return undefined;
  const item: Record<string, unknown> = {};
  for (const f of selection.fields) {
    if (!f.type) {
      item[f.key] = selection.typeName;
      continue;
    }
    const raw = (source as Record<string, unknown>)[f.name];
    if (raw === null || raw === undefined) {
      if (f.nonNull) return undefined;
      item[f.key] = null;
      continue;
    }
    // The default resolver would call a function; graphql-js would raise an Error value.
    if (typeof raw === 'function' || raw instanceof Error) return undefined;
    let value: unknown;
    try {
      value = f.type.serialize(raw);
    } catch {
      return undefined;
    }
    if (value === null || value === undefined) return undefined;
    item[f.key] = value;
  }
  return Object.freeze(item);
}

/**
 * `items` answered for `selection`, built JSON_CHUNK_ITEMS at a time with the event loop served
 * between chunks, its text kept with it; undefined when an item would not complete without an
 * error (a null in a non-null field, a value its scalar refuses): graphql-js answers those.
 */
export async function buildPlainList(
  items: readonly unknown[],
  selection: PlainSelection,
): Promise<PlainList | undefined> {
  const out: object[] = new Array<object>(items.length);
  for (let i = 0; i < items.length; i += JSON_CHUNK_ITEMS) {
    if (i > 0) await nextTurn();
    for (let j = i; j < Math.min(items.length, i + JSON_CHUNK_ITEMS); j++) {
      const item = plainItem(items[j], selection);
      if (!item) return undefined;
      out[j] = item;
    }
  }
  Object.freeze(out);
  const { bytes } = await keepArrayText(out);
  plainListCounts.built++;
  return { items: out, bytes: bytes + out.length * (32 + 8 * selection.fields.length) };
}

const pathOf = (path: GraphQLResolveInfo['path']) => {
  const keys: (string | number)[] = [];
  for (let p: typeof path | undefined = path; p; p = p.prev) keys.unshift(p.key);
  return keys;
};

/**
 * The resolver's answer for a kept list: an empty list for graphql-js, `list.items` put in its
 * place by withPlainLists. Only for a selection plainSelection gave in this execution.
 */
export function answerPlainList(info: GraphQLResolveInfo, context: object, list: PlainList): never[] {
  deferred.get(context)!.push({ path: pathOf(info.path), items: list.items });
  plainListCounts.answered++;
  return [];
}

/**
 * The answer with each deferred list put in at its path (skipped where an error nulled a parent
 * on the way), and marked as holding kept texts (./json-text.ts answerJson).
 */
export function withPlainLists<T extends ExecutionResult>(context: object, result: T): T {
  const lists = deferred.get(context);
  deferred.delete(context);
  if (!lists?.length || !result.data) return result;
  let put = false;
  for (const { path, items } of lists) {
    let at: unknown = result.data;
    for (let i = 0; i < path.length - 1 && typeof at === 'object' && at !== null; i++)
      at = (at as Record<string | number, unknown>)[path[i]];
    if (typeof at !== 'object' || at === null) continue;
    const last = path[path.length - 1];
    const placeholder = (at as Record<string | number, unknown>)[last];
    if (!Array.isArray(placeholder) || placeholder.length) continue;
    (at as Record<string | number, unknown>)[last] = items;
    put = true;
  }
  if (put) markHoldsKeptText(result.data);
  return result;
}
