// The trash as a whole (CONTRACT.md "Trash"): GET /api/v1/trash and DELETE /api/v1/trash. Each
// module owns its trashed rows and serves its part through its own subgraph (`trashedNotes`,
// `trashedVaultItems`, `trashedHubs`; restore and purge of one item are in each module's
// routes.ts); these routes run ONE GraphQL operation naming the three parts, which the gateway
// answers from the three subgraphs at once, and merge the answers (lib/kit/trash.ts: one order,
// one cursor for every part). A declaration only; handed to the facade with the modules' routes
// (subgraphs/index.ts). docs/trash.md says why a merge and not a projection.
import { configured } from './configured';
import { PAGE_ARGS, PAGE_QUERY } from './route-parts';
import type { ModuleRoutes, RouteInput, RouteSpec } from './route-spec';
import { CommandAck, JsonSchema, pageSchema } from './schemas';
import { mergeTrashPages, type TrashRow } from '../lib/kit/trash-merge';

export const TrashItem: JsonSchema = {
  type: 'object',
  required: ['type', 'id', 'title', 'deleted_at', 'purge_at'],
  properties: {
    type: { type: 'string', enum: ['note', 'vault_item', 'hub'] },
    id: { type: 'string', format: 'uuid' },
    title: { type: 'string', description: 'Its title (a hub: its name)' },
    deleted_at: { type: 'string', format: 'date-time' },
    purge_at: { type: 'string', format: 'date-time', description: 'When it is purged for good' },
  },
};
const TrashPageBody = pageSchema(TrashItem);

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
/** The parts of the trash: each module's root field, in one operation. */
const PARTS = ['trashedNotes', 'trashedVaultItems', 'trashedHubs'];
const EMPTY = ['emptyNoteTrash', 'emptyVaultTrash', 'emptyHubTrash'];

const pageLimit = (input: RouteInput) => (typeof input.query.limit === 'number' ? input.query.limit : 20);

const routes: RouteSpec[] = [
  {
    operationId: 'listTrash',
    method: 'get',
    path: '/trash',
    tag: 'Trash',
    auth: true,
    summary: 'What you deleted, the last deleted first, a page at a time',
    description: `Your trashed notes, vault items and hubs, each kept ${configured('TRASH_RETENTION_DAYS')} days (TRASH_RETENTION_DAYS) before it is purged. Restore one with \`POST /trash/{type}/{id}/restore\`.`,
    query: PAGE_QUERY,
    graphql: { kind: 'query', field: PARTS[0], also: PARTS.slice(1), args: PAGE_ARGS, select: TrashPageBody },
    status: 200,
    present: (parts: Record<string, { items: TrashRow[]; next_cursor: string | null }>, input) =>
      toRest(
        mergeTrashPages(
          [parts.result, ...PARTS.slice(1).map((p) => parts[p])].map((p) =>
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
    graphql: { kind: 'mutation', field: EMPTY[0], also: EMPTY.slice(1), select: '{ id }' },
    status: 202,
    location: () => '/api/v1/trash',
    present: (parts: Record<string, { id: string }>) => ({ id: parts.result.id, message: 'Emptying the trash.' }),
    response: CommandAck,
    errors: ['unauthorized', 'forbidden', 'rate_limit_exceeded'],
  },
];

function toRest(page: { items: TrashRow[]; nextCursor: string | null }) {
  return { items: page.items, next_cursor: page.nextCursor };
}

export const trashRoutes: ModuleRoutes = {
  routes,
  schemas: { TrashItem },
  tags: [
    { name: 'Trash', description: 'Deleted notes, vault items and hubs, kept for a while before they are purged.' },
  ],
};
