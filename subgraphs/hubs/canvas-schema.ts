// JSON Canvas 1.0 (https://jsoncanvas.org/spec/1.0/), written once from the spec: the JSON Schema
// the import checks with ajv (canvas.ts), and the same document as OpenAPI 3.0 can state it for
// the REST routes (rest-schemas.ts, routes.ts: no if/then, so every node type's fields on one node
// object).
import type { JsonSchema } from '../../rest-facade/schemas';
import { ENDS, SIDES } from './hub-rules';

const string = { type: 'string' } as const;
const integer = { type: 'integer' } as const;

/**
 * The spec's colour: a string, a preset "1"–"6" or a hex colour "#RRGGBB". Any other string is
 * still a JSON Canvas document (the spec's own schema types a colour as a string): the import
 * drops such a colour rather than refuse the canvas (canvas.ts), and hubs store only these two forms.
 */
const canvasColor = { type: 'string', description: 'A preset "1"–"6", or a hex colour "#RRGGBB"' } as const;

const NODE_KINDS = ['text', 'file', 'link', 'group'] as const;
const BACKGROUND_STYLES = ['cover', 'ratio', 'repeat'] as const;

/** The fields every node has. */
const NODE_REQUIRED = ['id', 'type', 'x', 'y', 'width', 'height'];
const nodeFields = (kinds: JsonSchema) => ({
  id: string,
  type: kinds,
  x: integer,
  y: integer,
  width: integer,
  height: integer,
  color: canvasColor,
});

/** Each node type's own fields, and which of them it needs. */
const BY_KIND: Record<(typeof NODE_KINDS)[number], { required?: string[]; fields: (e: Enum) => JsonSchema }> = {
  text: { required: ['text'], fields: () => ({ text: string }) },
  file: { required: ['file'], fields: () => ({ file: string, subpath: { type: 'string', pattern: '^#' } }) },
  link: { required: ['url'], fields: () => ({ url: string }) },
  group: {
    fields: (e) => ({ label: string, background: string, backgroundStyle: e(BACKGROUND_STYLES) }),
  },
};

const edgeFields = (e: Enum) => ({
  id: string,
  fromNode: string,
  fromSide: e(SIDES),
  fromEnd: e(ENDS),
  toNode: string,
  toSide: e(SIDES),
  toEnd: e(ENDS),
  color: canvasColor,
  label: string,
});
const EDGE_REQUIRED = ['id', 'fromNode', 'toNode'];

/** How each form writes a closed list of strings (OpenAPI adds its type). */
type Enum = (values: readonly string[]) => JsonSchema;

/** A canvas's two lists: its nodes with `node`'s fields, its edges with their lists written by `e`. */
const canvasLists = (node: JsonSchema, e: Enum) => ({
  nodes: { type: 'array', items: { type: 'object', required: NODE_REQUIRED, ...node } },
  edges: { type: 'array', items: { type: 'object', required: EDGE_REQUIRED, properties: edgeFields(e) } },
});

/** The JSON Schema of a JSON Canvas 1.0 document, checked by the import (ajv): each node type's fields by its type. */
const jsonSchemaEnum: Enum = (values) => ({ enum: [...values] });
export const JSON_CANVAS_SCHEMA = {
  $id: 'https://jsoncanvas.org/spec/1.0/',
  title: 'JSON Canvas 1.0',
  type: 'object',
  properties: canvasLists(
    {
      properties: nodeFields(jsonSchemaEnum(NODE_KINDS)),
      allOf: NODE_KINDS.map((kind) => ({
        if: { properties: { type: { const: kind } } },
        then: {
          ...(BY_KIND[kind].required ? { required: BY_KIND[kind].required } : {}),
          properties: BY_KIND[kind].fields(jsonSchemaEnum),
        },
      })),
    },
    jsonSchemaEnum,
  ),
};

/**
 * The same document as OpenAPI 3.0 states it (no if/then): every node type's fields on one node,
 * each saying which type has it; the subgraph checks each type's own (JSON_CANVAS_SCHEMA).
 */
const openApiEnum: Enum = (values) => ({ type: 'string', enum: [...values] });
export const CANVAS_DOCUMENT: JsonSchema = {
  type: 'object',
  description: 'A JSON Canvas 1.0 document (jsoncanvas.org/spec/1.0)',
  properties: canvasLists(
    {
      properties: {
        ...nodeFields(openApiEnum(NODE_KINDS)),
        ...Object.fromEntries(
          NODE_KINDS.flatMap((kind) =>
            Object.entries(BY_KIND[kind].fields(openApiEnum)).map(([name, schema]) => [
              name,
              { ...(schema as JsonSchema), description: `${kind} nodes` },
            ]),
          ),
        ),
      },
    },
    openApiEnum,
  ),
};
