// The trash as a whole (CONTRACT.md "Trash"): GET /api/v1/trash and DELETE /api/v1/trash, built
// from the parts the modules declare (lib/module.ts `trash`). Each module owns its trashed rows
// and serves its part through its own subgraph (a root field listing them and one emptying them;
// restore and purge of one item are in each module's routes.ts); these routes run ONE GraphQL
// operation naming every part's field, which the gateway answers from the modules' subgraphs at
// once, and merge the answers (lib/kit/trash.ts: one order, one cursor for every part). The facade
// names no module: the module list hands the parts over (subgraphs/index.ts). docs/trash.md says
// why a merge and not a projection.
import { configured } from './configured';
import { PAGE_ARGS, PAGE_QUERY } from './route-parts';
import type { ModuleRoutes, RouteInput, RouteSpec } from './route-spec';
import { CommandAck, JsonSchema, pageSchema } from './schemas';
import { mergeTrashPages, type TrashRow } from '../lib/kit/trash-merge';

/** A module's part of the trash, declared in its definition (lib/module.ts `trash`). */
export interface TrashPart {
  /** The `type` of its rows in the listing and in `/trash/{type}/{id}` (`note`). */
  type: string;
  /** Its subgraph's root query field listing its trashed rows, a page at a time (`trashedNotes`). */
  list: string;
  /** Its subgraph's root mutation field purging all its trashed rows as a job (`emptyNoteTrash`). */
  empty: string;
  /** What its rows are called, in the plural, in the routes' descriptions (`notes`). */
  plural: string;
  /** What an item's `title` is when not its title, said in the listing's schema (`a hub: its name`). */
  titleIs?: string;
}

/** `a`, `a and b`, `a, b and c`. */
const listed = (words: readonly string[]) =>
  words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;

function trashItem(parts: readonly TrashPart[]): JsonSchema {
  const titles = parts.flatMap((p) => (p.titleIs ? [p.titleIs] : []));
  return {
    type: 'object',
    required: ['type', 'id', 'title', 'deleted_at', 'purge_at'],
    properties: {
      type: { type: 'string', enum: parts.map((p) => p.type) },
      id: { type: 'string', format: 'uuid' },
      title: { type: 'string', description: `Its title${titles.length ? ` (${titles.join('; ')})` : ''}` },
      deleted_at: { type: 'string', format: 'date-time' },
      purge_at: { type: 'string', format: 'date-time', description: 'When it is purged for good' },
    },
  };
}

/** The query of a DELETE that goes to the trash: `?version=N`, and `permanent=true` to delete at once. */
export const TRASH_DELETE_QUERY = {
  schema: {
    type: 'object',
    properties: {
      version: { type: 'integer', minimum: 1, maximum: 2147483647 },
      permanent: {
        type: 'boolean',
        default: false,
        description: 'true: deleted at once; false (default): to the trash for TRASH_RETENTION_DAYS',
      },
    },
  },
  required: ['version'],
};

const pageLimit = (input: RouteInput) => (typeof input.query.limit === 'number' ? input.query.limit : 20);

/**
 * The trash's routes over the parts given (the modules' declarations, in the order their answers
 * merge): each route one operation naming every part's root field. No part: no trash routes.
 */
export function trashRoutes(parts: readonly TrashPart[]): ModuleRoutes {
  if (!parts.length) return { routes: [] };
  const lists = parts.map((p) => p.list);
  const empties = parts.map((p) => p.empty);
  const what = listed(parts.map((p) => p.plural));
  const TrashItem = trashItem(parts);
  const TrashPageBody = pageSchema(TrashItem);
  const routes: RouteSpec[] = [
    {
      operationId: 'listTrash',
      method: 'get',
      path: '/trash',
      tag: 'Trash',
      auth: true,
      summary: 'What you deleted, the last deleted first, a page at a time',
      description: `Your trashed ${what}, each kept ${configured('TRASH_RETENTION_DAYS')} days (TRASH_RETENTION_DAYS) before it is purged. Restore one with \`POST /trash/{type}/{id}/restore\`.`,
      query: PAGE_QUERY,
      graphql: { kind: 'query', field: lists[0], also: lists.slice(1), args: PAGE_ARGS, select: TrashPageBody },
      status: 200,
      present: (answers: Record<string, { items: TrashRow[]; next_cursor: string | null }>, input) =>
        toRest(
          mergeTrashPages(
            [answers.result, ...lists.slice(1).map((field) => answers[field])].map((p) =>
              p ? { items: p.items, nextCursor: p.next_cursor } : null,
            ),
            pageLimit(input),
          ),
        ),
      response: TrashPageBody,
      errors: ['validation_error', 'unauthorized', 'forbidden'],
    },
    {
      operationId: 'emptyTrash',
      method: 'delete',
      path: '/trash',
      tag: 'Trash',
      auth: true,
      summary: 'Empty your trash',
      description:
        'Purges everything in your trash now, in the background and in batches; each purged item has its `<type>.deleted` event and frees its quota. Past `JOBS_PENDING_PER_USER` jobs of yours waiting in a module, 429 with `Retry-After`.',
      graphql: { kind: 'mutation', field: empties[0], also: empties.slice(1), select: '{ id }' },
      status: 202,
      location: () => '/api/v1/trash',
      present: (answers: Record<string, { id: string }>) => ({ id: answers.result.id, message: 'Emptying the trash.' }),
      response: CommandAck,
      errors: ['unauthorized', 'forbidden', 'rate_limit_exceeded'],
    },
  ];
  return {
    routes,
    schemas: { TrashItem },
    tags: [{ name: 'Trash', description: `Deleted ${what}, kept for a while before they are purged.` }],
  };
}

function toRest(page: { items: TrashRow[]; nextCursor: string | null }) {
  return { items: page.items, next_cursor: page.nextCursor };
}
