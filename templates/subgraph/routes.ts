// The examples module's REST routes, under /api/v1/examples: declarations only, each running one
// GraphQL operation of this module through the gateway (rest-facade/graphql-mapping.ts reads the
// selection off the response schema and the arguments off the body schema). Handed to the
// facade by the module's definition (module.ts). A field is declared here once per schema it appears in.
import { bodyArgs, queryArg } from '../../rest-facade/graphql-mapping';
import {
  EXPECTED_VERSION,
  EXPECTED_VERSION_ARG,
  idFrom,
  PAGE_ARGS,
  PAGE_QUERY,
  VERSION_QUERY,
} from '../../rest-facade/route-parts';
import type { RouteSpec } from '../../rest-facade/route-spec';
import { CommandAck, JsonSchema, pageSchema, patchBody, trimmedText, uuidParam } from '../../rest-facade/schemas';

/** The fields a client sets: on create, and (each optional) on PATCH. */
const FIELDS: Record<string, JsonSchema> = {
  title: trimmedText(1, 200, '1 to 200 characters, trimmed'),
};

export const CreateExampleItemRequest: JsonSchema = {
  type: 'object',
  required: ['title'],
  additionalProperties: true, // unknown fields are ignored
  properties: FIELDS,
};

export const UpdateExampleItemRequest = patchBody(FIELDS);

export const ExampleItemBody: JsonSchema = {
  type: 'object',
  required: ['id', ...Object.keys(FIELDS), 'version', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    ...FIELDS,
    version: {
      type: 'integer',
      minimum: 1,
      description: '1 when created; every change adds 1. PATCH and DELETE name it.',
    },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

export const ExampleItemPageBody = pageSchema(ExampleItemBody);

const PATH = '/examples/example-items';
// Declare the tag, with a description, in module.ts's routes: the document's lint test requires it.
const TAG = 'ExampleItem';
const location = (r: Record<string, any>) => `/api/v1${PATH}/${r.id}`;

export const examplesRoutes: RouteSpec[] = [
  {
    operationId: 'listExampleItems',
    method: 'get',
    path: PATH,
    tag: TAG,
    auth: true,
    summary: 'Your example items, oldest first, a page at a time',
    description: 'Pass `next_cursor` back as `cursor` for the next page; it is null on the last.',
    query: PAGE_QUERY,
    graphql: { kind: 'query', field: 'exampleItems', args: PAGE_ARGS },
    status: 200,
    response: ExampleItemPageBody,
    errors: ['validation_error', 'unauthorized'],
  },
  {
    operationId: 'getExampleItem',
    method: 'get',
    path: `${PATH}/:exampleItemId`,
    tag: TAG,
    auth: true,
    summary: 'One of your example items',
    description: "Another user's example item is `not_found`, like an unknown id.",
    params: { exampleItemId: uuidParam },
    graphql: { kind: 'query', field: 'exampleItem', args: idFrom('exampleItemId') },
    status: 200,
    etag: (r) => `"${r.version}"`,
    response: ExampleItemBody,
    errors: ['validation_error', 'unauthorized', 'not_found'],
  },
  {
    operationId: 'createExampleItem',
    method: 'post',
    path: PATH,
    tag: TAG,
    auth: true,
    summary: 'Create an example item (version 1)',
    description: 'Answers 202 with the new id and its Location; GET it for the item as stored.',
    body: CreateExampleItemRequest,
    graphql: {
      kind: 'mutation',
      field: 'createExampleItem',
      args: bodyArgs(CreateExampleItemRequest),
      select: '{ id }',
    },
    status: 202,
    ack: 'Created the example item.',
    location,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized'],
  },
  {
    operationId: 'updateExampleItem',
    method: 'patch',
    path: `${PATH}/:exampleItemId`,
    tag: TAG,
    auth: true,
    summary: 'Change an example item at the version you expect',
    description:
      'A field left out stays as it is. Name the version you expect with `?version=N` or `If-Match: "N"` (the ETag of GET); ' +
      'it must equal the stored version, else `conflict` with `details.current_version`.',
    params: { exampleItemId: uuidParam },
    ...EXPECTED_VERSION,
    body: UpdateExampleItemRequest,
    graphql: {
      kind: 'mutation',
      field: 'updateExampleItem',
      args: { ...idFrom('exampleItemId'), version: EXPECTED_VERSION_ARG, ...bodyArgs(UpdateExampleItemRequest) },
      select: '{ id version }',
    },
    status: 202,
    ack: 'Changed the example item.',
    location,
    etag: (r) => `"${r.version}"`,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'not_found', 'conflict'],
  },
  {
    operationId: 'deleteExampleItem',
    method: 'delete',
    path: `${PATH}/:exampleItemId`,
    tag: TAG,
    auth: true,
    summary: 'Delete an example item at the version you expect',
    description: '`version` must equal the stored version, else `conflict` with `details.current_version`.',
    params: { exampleItemId: uuidParam },
    query: VERSION_QUERY,
    graphql: {
      kind: 'mutation',
      field: 'deleteExampleItem',
      args: { ...idFrom('exampleItemId'), version: queryArg('version', 'Int!') },
      select: '{ id }',
    },
    status: 202,
    ack: 'Deleted the example item.',
    location,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'not_found', 'conflict'],
  },
];
