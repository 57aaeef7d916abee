// The hubs module's REST routes, under /api/v1/hubs: declarations only, each running one
// GraphQL operation through the gateway (rest-facade/graphql-mapping.ts reads the selection off
// the response schema and the arguments off the body schema). Handed to the facade by module.ts.
// Their bodies' schemas are rest-schemas.ts.
import { configured } from '../../rest-facade/configured';
import { bodyArgs, pathArg, queryArg, selection } from '../../rest-facade/graphql-mapping';
import {
  EXPECTED_VERSION,
  EXPECTED_VERSION_ARG,
  idFrom,
  PAGE_ARGS,
  PAGE_QUERY,
  VERSION_QUERY,
} from '../../rest-facade/route-parts';
import type { RouteSpec } from '../../rest-facade/route-spec';
import { TRASH_DELETE_QUERY } from '../../rest-facade/trash-routes';
import { CommandAck, pageSchema, uuidParam } from '../../rest-facade/schemas';
import { JsonCanvas, TitledRefNode, withRefTitles } from './canvas';
import { CANVAS_DOCUMENT } from './canvas-schema';
import { restEdge, restGraph, restNode } from './rest-form';
import { buildJsonArray } from '../../lib/json-text';
import {
  AddEdgeRequest,
  AddNodeRequest,
  CreateHubRequest,
  HUB_SUMMARY,
  HubBody,
  HubListItem,
  HubNodeBody,
  ImportHubRequest,
  NeighborhoodBody,
  NeighborsQuery,
  NodeContentBody,
  QuickAddRequest,
  UpdateHubRequest,
  UpdateNodeRequest,
} from './rest-schemas';

const PATH = '/hubs';
const ONE = `${PATH}/:hubId`;
const NODE = `${ONE}/nodes/:nodeId`;
const TAG = 'Hubs';
const hubLocation = (r: Record<string, any>) => `/api/v1${PATH}/${r.id}`;
const nodeLocation = (r: Record<string, any>) => `/api/v1${PATH}/${r.hub_id}/nodes/${r.id}`;
const hubArg = { hubId: pathArg('hubId') };
const nodeArgs = { hubId: pathArg('hubId'), nodeId: pathArg('nodeId') };
const HUB_ERRORS = ['validation_error', 'unauthorized', 'forbidden', 'not_found'] as const;

export const hubsRoutes: RouteSpec[] = [
  {
    operationId: 'listHubs',
    method: 'get',
    path: PATH,
    tag: TAG,
    auth: true,
    summary: 'Your hubs, oldest first, a page at a time',
    description: 'Your hubs without their graphs: GET /hubs/{hubId} gives one hub with all its nodes and edges.',
    query: PAGE_QUERY,
    graphql: { kind: 'query', field: 'hubs', args: PAGE_ARGS },
    status: 200,
    response: pageSchema(HubListItem),
    errors: ['validation_error', 'unauthorized', 'forbidden'],
  },
  {
    operationId: 'createHub',
    method: 'post',
    path: PATH,
    tag: TAG,
    auth: true,
    summary: 'Create an empty hub (version 1)',
    description: `At most ${configured('HUBS_PER_USER')} per user (then 409 \`conflict\` with \`details: { limit, max, count }\`).`,
    body: CreateHubRequest,
    graphql: { kind: 'mutation', field: 'createHub', args: bodyArgs(CreateHubRequest), select: '{ id }' },
    status: 202,
    ack: 'Created the hub.',
    location: hubLocation,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'conflict'],
  },
  {
    operationId: 'importHub',
    method: 'post',
    path: `${PATH}/import`,
    tag: TAG,
    auth: true,
    summary: 'A new hub from a JSON Canvas 1.0 document',
    description:
      'New ids; the layout is kept; unknown fields are ignored; `file` nodes become text nodes naming the file, link nodes ' +
      'whose URL is not http(s) text nodes holding it. A document that is not JSON Canvas 1.0, or breaks a rule of hubs, is ' +
      `\`validation_error\` with details per field. The body may take ${configured('HUB_IMPORT_BODY_LIMIT_BYTES', 'bytes')}.`,
    body: ImportHubRequest,
    bodyLimit: (config) => config.HUB_IMPORT_BODY_LIMIT_BYTES,
    graphql: { kind: 'mutation', field: 'importHub', args: bodyArgs(ImportHubRequest), select: '{ id }' },
    status: 202,
    ack: 'Imported the canvas as a new hub.',
    location: hubLocation,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'conflict', 'payload_too_large'],
  },
  {
    operationId: 'getHub',
    method: 'get',
    path: ONE,
    tag: TAG,
    auth: true,
    summary: 'One of your hubs, with all its nodes and edges',
    description:
      "Another user's hub is `not_found`, like an unknown id. The whole graph is kept in memory by version; reading " +
      `one that is not kept is an expensive operation: beyond ${configured('EXPENSIVE_PER_USER')} of yours at once, 429 with \`Retry-After\`.`,
    params: { hubId: uuidParam },
    // The graph as one JSON value (Hub.graph): a 5,000-node hub's fields are not executed one by one.
    graphql: {
      kind: 'query',
      field: 'hub',
      args: idFrom('hubId'),
      select: selection({ ...HubBody, properties: { ...HUB_SUMMARY, description: {}, graph: {} } }),
    },
    // The kept graph's REST JSON, sent as it is, when this is the kept graph itself (rest-form.ts).
    present: ({ graph, ...hub }: Record<string, any>) => ({ ...hub, ...restGraph(graph) }),
    status: 200,
    response: HubBody,
    errors: [...HUB_ERRORS, 'rate_limit_exceeded'],
  },
  {
    operationId: 'updateHub',
    method: 'patch',
    path: ONE,
    tag: TAG,
    auth: true,
    summary: 'Rename or describe a hub at the version you expect',
    description:
      'Name the version with `?version=N` or `If-Match: "N"`; another is `conflict` with `details.current_version`.',
    params: { hubId: uuidParam },
    ...EXPECTED_VERSION,
    body: UpdateHubRequest,
    graphql: {
      kind: 'mutation',
      field: 'updateHub',
      args: { ...idFrom('hubId'), version: EXPECTED_VERSION_ARG, ...bodyArgs(UpdateHubRequest) },
      select: '{ id version }',
    },
    status: 202,
    ack: 'Changed the hub.',
    location: hubLocation,
    etag: (r) => `"${r.version}"`,
    response: CommandAck,
    errors: [...HUB_ERRORS, 'conflict'],
  },
  {
    operationId: 'deleteHub',
    method: 'delete',
    path: ONE,
    tag: TAG,
    auth: true,
    summary: 'Delete a hub at the version you expect: to the trash, or for good',
    description: `To the trash (\`hub.trashed\`) with its nodes and edges for ${configured('TRASH_RETENTION_DAYS')} days (TRASH_RETENTION_DAYS), still counted by HUBS_PER_USER until purged. \`permanent=true\`: deleted at once (\`hub.deleted\`); its nodes and edges are removed in the background, 1,000 rows a transaction.`,
    params: { hubId: uuidParam },
    query: TRASH_DELETE_QUERY,
    graphql: {
      kind: 'mutation',
      field: 'deleteHub',
      args: { ...idFrom('hubId'), version: queryArg('version', 'Int!'), permanent: queryArg('permanent', 'Boolean') },
      select: '{ id }',
    },
    status: 202,
    ack: 'Deleted the hub.',
    location: hubLocation,
    response: CommandAck,
    errors: [...HUB_ERRORS, 'conflict'],
  },
  {
    operationId: 'restoreHub',
    method: 'post',
    path: '/trash/hub/:hubId/restore',
    tag: 'Trash',
    auth: true,
    summary: 'Bring a hub back from the trash',
    description:
      'The hub comes back as it was, with its nodes and edges (a new version, `hub.restored`). Not in your trash: `not_found`.',
    params: { hubId: uuidParam },
    graphql: { kind: 'mutation', field: 'restoreHub', args: idFrom('hubId'), select: '{ id }' },
    status: 202,
    ack: 'Restored the hub.',
    location: hubLocation,
    response: CommandAck,
    errors: [...HUB_ERRORS],
  },
  {
    operationId: 'purgeHub',
    method: 'delete',
    path: '/trash/hub/:hubId',
    tag: 'Trash',
    auth: true,
    summary: 'Delete a hub in the trash for good',
    description:
      'Emits `hub.deleted` and frees its place in HUBS_PER_USER; its nodes and edges go in the background. Not in your trash: `not_found`.',
    params: { hubId: uuidParam },
    graphql: { kind: 'mutation', field: 'purgeHub', args: idFrom('hubId'), select: '{ id }' },
    status: 202,
    ack: 'Purged the hub.',
    location: () => '/api/v1/trash',
    response: CommandAck,
    errors: [...HUB_ERRORS],
  },
  {
    operationId: 'exportHubCanvas',
    method: 'get',
    path: `${ONE}/canvas`,
    tag: TAG,
    auth: true,
    summary: 'The hub as a JSON Canvas 1.0 document',
    description:
      'Ref nodes become text nodes that name what they point at by its title (read through federation from the ' +
      'subgraph that owns it; its kind and id when it cannot be read) and link to it.',
    params: { hubId: uuidParam },
    graphql: {
      kind: 'query',
      field: 'hub',
      args: idFrom('hubId'),
      select: '{ canvas refNodes { id type refId label missing note { title } vaultItem { title } voice { name } } }',
    },
    present: ({ canvas, refNodes }: { canvas: JsonCanvas; refNodes: TitledRefNode[] }) =>
      withRefTitles(canvas, refNodes),
    status: 200,
    response: CANVAS_DOCUMENT,
    errors: [...HUB_ERRORS, 'rate_limit_exceeded'],
  },
  {
    operationId: 'addHubNode',
    method: 'post',
    path: `${ONE}/nodes`,
    tag: TAG,
    auth: true,
    summary: 'Add a node',
    description:
      'A text node needs `text`, a link node `url`, a note, vault_item or voice node `ref_id` naming one of yours ' +
      '(else 400; a just-created one becomes referable within 2 s). Caps: ' +
      `${configured('HUB_MAX_NODES')} nodes and ${configured('HUB_MAX_TEXT_BYTES', 'bytes')} of text per hub (409 \`conflict\` with \`details: { limit, max, count }\`).`,
    params: { hubId: uuidParam },
    body: AddNodeRequest,
    graphql: {
      kind: 'mutation',
      field: 'addHubNode',
      args: { ...hubArg, ...bodyArgs(AddNodeRequest) },
      select: '{ id hub_id: hubId }',
    },
    status: 202,
    ack: 'Added the node.',
    location: nodeLocation,
    response: CommandAck,
    errors: [...HUB_ERRORS, 'conflict'],
  },
  {
    operationId: 'getHubNode',
    method: 'get',
    path: NODE,
    tag: TAG,
    auth: true,
    summary: 'One node of one of your hubs',
    description: 'One node of a hub of yours, with the fields of its type; one that is not yours is 404 `not_found`.',
    params: { hubId: uuidParam, nodeId: uuidParam },
    graphql: { kind: 'query', field: 'hubNode', args: nodeArgs },
    status: 200,
    etag: (r) => `"${r.version}"`,
    response: HubNodeBody,
    errors: [...HUB_ERRORS],
  },
  {
    operationId: 'updateHubNode',
    method: 'patch',
    path: NODE,
    tag: TAG,
    auth: true,
    summary: 'Change a node at the version you expect',
    description: 'Its type stays; `text`, `url` or `ref_id` only as its type allows.',
    params: { hubId: uuidParam, nodeId: uuidParam },
    ...EXPECTED_VERSION,
    body: UpdateNodeRequest,
    graphql: {
      kind: 'mutation',
      field: 'updateHubNode',
      args: { ...nodeArgs, version: EXPECTED_VERSION_ARG, ...bodyArgs(UpdateNodeRequest) },
      select: '{ id hub_id: hubId version }',
    },
    status: 202,
    ack: 'Changed the node.',
    location: nodeLocation,
    etag: (r) => `"${r.version}"`,
    response: CommandAck,
    errors: [...HUB_ERRORS, 'conflict'],
  },
  {
    operationId: 'removeHubNode',
    method: 'delete',
    path: NODE,
    tag: TAG,
    auth: true,
    summary: 'Remove a node at the version you expect, and its edges',
    description: 'Removes the node and every edge to or from it; `?version=` is the version you expect (else 409).',
    params: { hubId: uuidParam, nodeId: uuidParam },
    query: VERSION_QUERY,
    graphql: {
      kind: 'mutation',
      field: 'removeHubNode',
      args: { ...nodeArgs, version: queryArg('version', 'Int!') },
      select: '{ id hub_id: hubId }',
    },
    status: 202,
    ack: 'Removed the node.',
    location: nodeLocation,
    response: CommandAck,
    errors: [...HUB_ERRORS, 'conflict'],
  },
  {
    operationId: 'getHubNodeContent',
    method: 'get',
    path: `${NODE}/content`,
    tag: TAG,
    auth: true,
    summary: 'What a node shows, read now',
    description:
      'A text node: its text; a link node: its URL; a ref node: what it points at, resolved through federation from the ' +
      'subgraph that owns it; `missing: true` when it was deleted.',
    params: { hubId: uuidParam, nodeId: uuidParam },
    graphql: { kind: 'query', field: 'hubNode', args: nodeArgs },
    status: 200,
    response: NodeContentBody,
    errors: [...HUB_ERRORS],
  },
  {
    operationId: 'getHubNodeNeighbors',
    method: 'get',
    path: `${NODE}/neighbors`,
    tag: TAG,
    auth: true,
    expensive: { kind: 'neighbors' },
    summary: 'The nodes reached from a node over the edges',
    description:
      `Breadth-first, depth 1–3, \`out\`, \`in\` or \`both\` (default); at most ${configured('HUB_NEIGHBORS_MAX_NODES')} nodes, ` +
      `reading at most ${configured('HUB_NEIGHBORS_MAX_EDGES')} edges (then \`truncated\`). An expensive operation: beyond ` +
      `${configured('EXPENSIVE_PER_USER')} of yours at once, 429 with \`Retry-After\`.`,
    params: { hubId: uuidParam, nodeId: uuidParam },
    query: { schema: NeighborsQuery },
    graphql: {
      kind: 'query',
      field: 'hubNeighbors',
      args: { ...nodeArgs, depth: queryArg('depth', 'Int'), direction: queryArg('direction', 'String') },
      // One JSON value, as the whole hub's GET: up to 500 nodes' fields are not executed one by one.
      select: '{ graph truncated }',
    },
    // Up to 500 nodes and their edges: serialised a chunk at a time, the event loop served between chunks.
    present: async ({ graph, truncated }: Record<string, any>) => ({
      nodes: await buildJsonArray(graph.nodes as Record<string, unknown>[], restNode),
      edges: await buildJsonArray(graph.edges as Record<string, unknown>[], restEdge),
      truncated,
    }),
    status: 200,
    response: NeighborhoodBody,
    errors: [...HUB_ERRORS, 'rate_limit_exceeded'],
  },
  {
    operationId: 'addHubEdge',
    method: 'post',
    path: `${ONE}/edges`,
    tag: TAG,
    auth: true,
    summary: 'Add an edge between two nodes of the hub',
    description: `Both ends must be nodes of this hub (else 400). At most ${configured('HUB_MAX_EDGES')} edges per hub (409 \`conflict\` with \`details: { limit, max, count }\`).`,
    params: { hubId: uuidParam },
    body: AddEdgeRequest,
    graphql: {
      kind: 'mutation',
      field: 'addHubEdge',
      args: { ...hubArg, ...bodyArgs(AddEdgeRequest) },
      select: '{ id hub_id: hubId }',
    },
    status: 202,
    ack: 'Added the edge.',
    location: (r) => `/api/v1${PATH}/${r.hub_id}`,
    response: CommandAck,
    errors: [...HUB_ERRORS, 'conflict'],
  },
  {
    operationId: 'removeHubEdge',
    method: 'delete',
    path: `${ONE}/edges/:edgeId`,
    tag: TAG,
    auth: true,
    summary: 'Remove an edge',
    description: 'Removes one edge of a hub of yours; the nodes it joined stay.',
    params: { hubId: uuidParam, edgeId: uuidParam },
    graphql: {
      kind: 'mutation',
      field: 'removeHubEdge',
      args: { ...hubArg, edgeId: pathArg('edgeId') },
      select: '{ id hub_id: hubId }',
    },
    status: 202,
    ack: 'Removed the edge.',
    location: (r) => `/api/v1${PATH}/${r.hub_id}`,
    response: CommandAck,
    errors: [...HUB_ERRORS],
  },
  {
    operationId: 'quickAddToHub',
    method: 'post',
    path: `${ONE}/quick-add`,
    tag: TAG,
    auth: true,
    summary: 'Add a text or link node beside another, optionally capturing it into the Vault',
    description:
      'Right of `near_node_id` with an edge from it, or right of everything. With `capture: true` the vault captures the ' +
      'text or URL (event `hub.capture_requested`) and the node then becomes a vault_item node, exactly once.',
    params: { hubId: uuidParam },
    body: QuickAddRequest,
    graphql: {
      kind: 'mutation',
      field: 'quickAddToHub',
      args: { ...hubArg, ...bodyArgs(QuickAddRequest) },
      select: '{ id hub_id: hubId }',
    },
    status: 202,
    ack: 'Added the node.',
    location: nodeLocation,
    response: CommandAck,
    errors: [...HUB_ERRORS, 'conflict'],
  },
];
