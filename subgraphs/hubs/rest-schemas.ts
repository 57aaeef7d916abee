// The JSON Schemas of the hubs module's REST bodies (routes.ts), built from the value rules of
// hub-rules.ts and the one JSON Canvas schema (canvas-schema.ts), so that each rule is written once.
import { configured } from '../../rest-facade/configured';
import { JsonSchema, patchBody, trimmedText, uuidParam } from '../../rest-facade/schemas';
import { CANVAS_DOCUMENT } from './canvas-schema';
import {
  COLOR_PATTERN,
  DESCRIPTION_MAX,
  DIRECTIONS,
  ENDS,
  INT32_MAX,
  INT32_MIN,
  LABEL_MAX,
  NAME_MAX,
  NAME_MIN,
  NEIGHBOR_DEPTH_MAX,
  NODE_TYPES,
  SIDES,
  SIZE_MAX,
  SIZE_MIN,
  URL_MAX,
} from './hub-rules';

const int32 = { type: 'integer', minimum: INT32_MIN, maximum: INT32_MAX };
const size = { type: 'integer', minimum: SIZE_MIN, maximum: SIZE_MAX };
const color = { type: 'string', pattern: COLOR_PATTERN.source, description: '"1"–"6" or #RRGGBB' };
const side = { type: 'string', enum: [...SIDES] };
const end = { type: 'string', enum: [...ENDS] };
const nullable = (schema: JsonSchema): JsonSchema => ({
  ...schema,
  nullable: true,
  ...(schema.enum ? { enum: [...(schema.enum as unknown[]), null] } : {}),
});
const date = { type: 'string', format: 'date-time' };
const uuid = uuidParam;
const label = { type: 'string', maxLength: LABEL_MAX, nullable: true };

const HUB_FIELDS: Record<string, JsonSchema> = {
  name: trimmedText(NAME_MIN, NAME_MAX, `${NAME_MIN} to ${NAME_MAX} characters, trimmed`),
  description: {
    type: 'string',
    maxLength: DESCRIPTION_MAX,
    nullable: true,
    description: `At most ${DESCRIPTION_MAX.toLocaleString('en-US')} characters`,
  },
};

export const CreateHubRequest: JsonSchema = {
  type: 'object',
  required: ['name'],
  additionalProperties: true, // unknown fields are ignored
  properties: HUB_FIELDS,
};

export const UpdateHubRequest = patchBody(HUB_FIELDS);

export const ImportHubRequest: JsonSchema = {
  type: 'object',
  required: ['name', 'canvas'],
  additionalProperties: true,
  properties: {
    ...HUB_FIELDS,
    canvas: {
      ...CANVAS_DOCUMENT,
      'x-graphql-type': 'JSONObject',
      description: 'A JSON Canvas 1.0 document (jsoncanvas.org); unknown fields are ignored',
    },
  },
};

const nodeType = { type: 'string', enum: [...NODE_TYPES] };
/** Where a node lies, and how big it is. */
const LAYOUT: Record<string, JsonSchema> = { x: int32, y: int32, width: size, height: size };

/** What a node holds; `text`, `url` or `ref_id` by its type. */
const NODE_LOOKS: Record<string, JsonSchema> = {
  color: nullable(color),
  label,
  text: {
    type: 'string',
    nullable: true,
    description: `Markdown, of a text node (at most ${configured('HUB_NODE_TEXT_MAX_CHARS')} characters)`,
  },
  url: { type: 'string', maxLength: URL_MAX, nullable: true, description: 'An http(s) URL, of a link node' },
  ref_id: { ...uuid, nullable: true, description: 'One of your notes, vault items or voices, of a ref node' },
};

export const AddNodeRequest: JsonSchema = {
  type: 'object',
  required: ['type', 'x', 'y', 'width', 'height'],
  additionalProperties: true,
  properties: { type: nodeType, ...LAYOUT, ...NODE_LOOKS },
};

const NODE_CHANGES: Record<string, JsonSchema> = { ...LAYOUT, ...NODE_LOOKS };
export const UpdateNodeRequest = patchBody(NODE_CHANGES);

const EDGE_FIELDS: Record<string, JsonSchema> = {
  from_node: uuid,
  to_node: uuid,
  from_side: nullable(side),
  to_side: nullable(side),
  from_end: nullable(end),
  to_end: nullable(end),
  label,
  color: nullable(color),
};
export const AddEdgeRequest: JsonSchema = {
  type: 'object',
  required: ['from_node', 'to_node'],
  additionalProperties: true,
  properties: EDGE_FIELDS,
};

export const QuickAddRequest: JsonSchema = {
  type: 'object',
  additionalProperties: true,
  oneOf: [{ required: ['text'] }, { required: ['url'] }],
  'x-one-of-error': { field: 'body', message: 'give exactly one of text and url' },
  properties: {
    text: { type: 'string', minLength: 1 },
    url: { type: 'string', maxLength: URL_MAX },
    near_node_id: { ...uuid, nullable: true },
    capture: { type: 'boolean', nullable: true },
  },
};

/** A node as REST answers it: every field, each always present (null when unset). */
const HUB_NODE: Record<string, JsonSchema> = {
  id: uuid,
  hub_id: uuid,
  type: nodeType,
  ...LAYOUT,
  ...NODE_LOOKS,
  missing: { type: 'boolean', description: 'What a ref node points at was deleted' },
  version: { type: 'integer', minimum: 1 },
  created_at: date,
  updated_at: date,
};
export const HubNodeBody: JsonSchema = { type: 'object', required: Object.keys(HUB_NODE), properties: HUB_NODE };

export const HubEdgeBody: JsonSchema = {
  type: 'object',
  required: ['id', ...Object.keys(EDGE_FIELDS)],
  properties: { id: uuid, ...EDGE_FIELDS },
};

export const HUB_SUMMARY: Record<string, JsonSchema> = {
  id: uuid,
  name: { type: 'string' },
  node_count: { type: 'integer', minimum: 0 },
  edge_count: { type: 'integer', minimum: 0 },
  version: {
    type: 'integer',
    minimum: 1,
    description: '1 when created; a hub PATCH adds 1. PATCH and DELETE name it.',
  },
  owner_id: uuid,
  created_at: date,
  updated_at: { ...date, description: 'Moves with every change of the hub, its nodes and edges' },
};

export const HubListItem: JsonSchema = {
  type: 'object',
  required: ['excerpt', ...Object.keys(HUB_SUMMARY)],
  properties: {
    ...HUB_SUMMARY,
    excerpt: { type: 'string', description: 'The first 300 characters of the description' },
  },
};

export const HubBody: JsonSchema = {
  type: 'object',
  required: ['description', 'nodes', 'edges', ...Object.keys(HUB_SUMMARY)],
  properties: {
    ...HUB_SUMMARY,
    description: { type: 'string' },
    nodes: { type: 'array', items: HubNodeBody },
    edges: { type: 'array', items: HubEdgeBody },
  },
};

const ENTITY = (properties: Record<string, JsonSchema>) => ({ type: 'object', nullable: true, properties });
/** What a node shows, read at read time: a ref node's target comes from its owning subgraph through the gateway. */
export const NodeContentBody: JsonSchema = {
  type: 'object',
  required: ['id', 'type', 'missing', 'text', 'url', 'ref_id', 'note', 'vault_item', 'voice'],
  properties: {
    id: uuid,
    type: nodeType,
    missing: { type: 'boolean', description: 'A ref node whose target was deleted: no content' },
    text: { type: 'string', nullable: true },
    url: { type: 'string', nullable: true },
    ref_id: { ...uuid, nullable: true },
    note: ENTITY({
      id: uuid,
      title: { type: 'string' },
      body: { type: 'string' },
      tags: { type: 'array', items: { type: 'string' } },
    }),
    vault_item: ENTITY({
      id: uuid,
      title: { type: 'string', nullable: true },
      excerpt: { type: 'string', nullable: true },
      url: { type: 'string', nullable: true },
      state: { type: 'string', enum: ['pending', 'ready', 'failed'] },
    }),
    voice: ENTITY({
      id: uuid,
      name: { type: 'string' },
      description: { type: 'string', nullable: true },
      base_voice: { type: 'string' },
      voice_blend: { type: 'string', nullable: true },
      language: { type: 'string' },
      speed: { type: 'number', format: 'double' },
    }),
  },
};

export const NeighborhoodBody: JsonSchema = {
  type: 'object',
  required: ['nodes', 'edges', 'truncated'],
  properties: {
    nodes: { type: 'array', items: HubNodeBody, description: 'The start node first, nearest first' },
    edges: { type: 'array', items: HubEdgeBody },
    truncated: { type: 'boolean', description: 'More nodes were reachable than the answer holds' },
  },
};

/** The query of a neighbours search. */
export const NeighborsQuery: JsonSchema = {
  type: 'object',
  properties: {
    depth: { type: 'integer', minimum: 1, maximum: NEIGHBOR_DEPTH_MAX, default: 1 },
    direction: { type: 'string', enum: [...DIRECTIONS], default: 'both' },
  },
};
