// The transfer module's REST routes (the contract's "Bringing data in and taking it out"):
// declarations only, each running GraphQL operations of this module through the gateway. The
// import's raw body is streamed by the facade's upload machinery (route.upload) into
// beginImport / appendImportBytes / finishImportUpload, a piece at a time.
import type { Config } from '../../lib/config';
import { queryArg } from '../../rest-facade/graphql-mapping';
import { configured } from '../../rest-facade/configured';
import { idFrom, PAGE_ARGS, PAGE_QUERY } from '../../rest-facade/route-parts';
import type { RouteSpec } from '../../rest-facade/route-spec';
import { CommandAck, JsonSchema, pageSchema, uuidParam } from '../../rest-facade/schemas';
import { IMPORT_FORMATS, SERVED_IMPORT_FORMATS } from './transfer-rules';

const count = { type: 'integer', minimum: 0 };
const timestamp = { type: 'string', format: 'date-time' };

export const ImportJobBody: JsonSchema = {
  type: 'object',
  required: ['id', 'format', 'state', 'progress', 'counts', 'errors', 'created_at', 'finished_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    format: { type: 'string', enum: [...IMPORT_FORMATS] },
    state: { type: 'string', enum: ['queued', 'running', 'succeeded', 'failed', 'canceled'] },
    progress: {
      type: 'object',
      required: ['done', 'total'],
      description: 'Records done of the total (0 until the file has been read).',
      properties: { done: count, total: count },
    },
    counts: {
      type: 'object',
      required: ['notes', 'folders', 'vault_items', 'hubs', 'skipped', 'duplicates'],
      properties: {
        notes: count,
        folders: count,
        vault_items: count,
        hubs: count,
        skipped: { ...count, description: 'Records that could not be imported (see errors)' },
        duplicates: { ...count, description: 'Records already there: nothing created' },
      },
    },
    errors: {
      type: 'array',
      maxItems: 100,
      description: 'Records passed over and why, and why the job failed (at most 100)',
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: { path: { type: 'string' }, message: { type: 'string' } },
      },
    },
    created_at: timestamp,
    finished_at: { ...timestamp, type: ['string', 'null'] },
  },
};

const PATH = '/imports';
const TAG = 'Imports';
const location = (r: Record<string, any>) => `/api/v1${PATH}/${r.id}`;

export const ExportJobBody: JsonSchema = {
  type: 'object',
  required: ['id', 'state', 'progress', 'errors', 'created_at', 'finished_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    state: { type: 'string', enum: ['queued', 'running', 'succeeded', 'failed', 'canceled'] },
    progress: ImportJobBody.properties && (ImportJobBody.properties as Record<string, JsonSchema>).progress,
    bytes: { type: 'number', minimum: 0, description: 'The size of the zip once it has succeeded' },
    errors: (ImportJobBody.properties as Record<string, JsonSchema>).errors,
    created_at: timestamp,
    finished_at: { ...timestamp, type: ['string', 'null'] },
  },
};

export const StartExportRequest: JsonSchema = {
  type: 'object',
  additionalProperties: true,
  properties: {
    include: {
      type: 'array',
      maxItems: 10,
      items: { type: 'string', enum: ['notes', 'vault', 'hubs', 'voices', 'audio'] },
      description: 'What to export; left out: all but audio',
    },
  },
};

const EXPORTS = '/exports';
const EXPORT_TAG = 'Exports';

export const transferRoutes: RouteSpec[] = [
  {
    operationId: 'startImport',
    method: 'post',
    path: PATH,
    tag: TAG,
    auth: true,
    summary: 'Import a file (bookmarks) as a background job',
    description:
      'The body is the file itself, with its own Content-Type (not JSON), up to ' +
      `${configured('IMPORT_MAX_BYTES', 'bytes')} (IMPORT_MAX_BYTES; larger: 413). It is stored as it arrives and ` +
      'imported in the background: follow `GET /imports/{id}` or the events `import.progress` and `import.finished`. ' +
      '`netscape`: the bookmark HTML every browser exports; each link becomes a vault item (enriched like any capture), ' +
      'its folder path and TAGS its tags. `markdown`: a zip of Markdown files (an Obsidian vault, a Joplin or Bear ' +
      'export): folders become note folders (under `target_folder_id` if given), YAML front matter gives the title and ' +
      'tags, other files become vault files and links to them point at the vault items; a zip past ' +
      `${configured('IMPORT_ZIP_MAX_ENTRIES')} entries or ${configured('IMPORT_ZIP_MAX_UNCOMPRESSED_BYTES', 'bytes')} inflated, ` +
      'or with `..` or absolute paths, fails the job before anything is written. What is already there is counted as ' +
      '`duplicates`, so the same file imported twice creates nothing the second time. A cap reached fails the job with that error and keeps what ' +
      'was imported. `export`: a zip this service exported (its manifest.json says format_version 1), brought back. ' +
      '`canvas`: one JSON Canvas 1.0 file or a zip of `.canvas` files, each a hub named after its file. ' +
      '`karakeep` is not served yet (400).',
    query: {
      schema: {
        type: 'object',
        properties: {
          format: { type: 'string', enum: [...SERVED_IMPORT_FORMATS] },
          target_folder_id: { type: 'string', format: 'uuid' },
        },
      },
      required: ['format'],
    },
    upload: {
      append: 'appendImportBytes',
      finish: 'finishImportUpload',
      abort: 'abortImportUpload',
      maxBytes: (config: Config) => config.IMPORT_MAX_BYTES,
      limit: 'IMPORT_MAX_BYTES',
      description: 'The file to import, as exported (e.g. bookmarks.html)',
    },
    graphql: {
      kind: 'mutation',
      field: 'beginImport',
      args: { format: queryArg('format', 'String!'), targetFolderId: queryArg('target_folder_id', 'ID') },
    },
    status: 202,
    location,
    response: ImportJobBody,
    errors: ['validation_error', 'unauthorized', 'payload_too_large', 'rate_limit_exceeded'],
  },
  {
    operationId: 'listImports',
    method: 'get',
    path: PATH,
    tag: TAG,
    auth: true,
    summary: 'Your imports, newest first, a page at a time',
    description: 'Pass `next_cursor` back as `cursor` for the next page; it is null on the last.',
    query: PAGE_QUERY,
    graphql: { kind: 'query', field: 'importJobs', args: PAGE_ARGS },
    status: 200,
    response: pageSchema(ImportJobBody),
    errors: ['validation_error', 'unauthorized'],
  },
  {
    operationId: 'getImport',
    method: 'get',
    path: `${PATH}/:importId`,
    tag: TAG,
    auth: true,
    summary: 'One of your imports: its state, progress, counts and errors',
    description: "Another user's import is `not_found`, like an unknown id.",
    params: { importId: uuidParam },
    graphql: { kind: 'query', field: 'importJob', args: idFrom('importId') },
    status: 200,
    response: ImportJobBody,
    errors: ['validation_error', 'unauthorized', 'not_found'],
  },
  {
    operationId: 'cancelImport',
    method: 'delete',
    path: `${PATH}/:importId`,
    tag: TAG,
    auth: true,
    summary: 'Cancel an import',
    description:
      'A queued or running import stops at its next batch (`canceled`, with `import.finished`); what was already ' +
      'imported stays. A finished import is left as it is.',
    params: { importId: uuidParam },
    graphql: { kind: 'mutation', field: 'cancelImport', args: idFrom('importId'), select: '{ id }' },
    status: 202,
    ack: 'Canceled the import.',
    location,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'not_found'],
  },
  {
    operationId: 'startExport',
    method: 'post',
    path: EXPORTS,
    tag: EXPORT_TAG,
    auth: true,
    summary: 'Export your whole account as a zip, in the background',
    description:
      'The zip holds notes/<folder path>/<title>.md (YAML front matter, the body as stored), vault/bookmarks.html ' +
      '(Netscape), vault/items.json, vault/files/…, hubs/<name>.canvas (JSON Canvas 1.0), voices.json and manifest.json. ' +
      'One export runs per user at a time (409 `conflict`). Follow `GET /exports/{id}`, then download it; it is kept ' +
      `${configured('EXPORT_RETENTION_DAYS')} days (EXPORT_RETENTION_DAYS).`,
    body: StartExportRequest,
    graphql: {
      kind: 'mutation',
      field: 'startExport',
      args: { include: { type: '[String!]', value: ({ body }) => body.include } },
      select: '{ id }',
    },
    status: 202,
    ack: 'Started the export.',
    location: (r) => `/api/v1${EXPORTS}/${r.id}`,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'conflict', 'rate_limit_exceeded'],
  },
  {
    operationId: 'getExport',
    method: 'get',
    path: `${EXPORTS}/:exportId`,
    tag: EXPORT_TAG,
    auth: true,
    summary: 'One of your exports: its state and progress',
    description:
      "`state` goes queued → running → succeeded (then download it) or failed (with `errors`). Another user's export is " +
      '`not_found`, like an unknown id.',
    params: { exportId: uuidParam },
    graphql: { kind: 'query', field: 'exportJob', args: idFrom('exportId') },
    status: 200,
    response: ExportJobBody,
    errors: ['validation_error', 'unauthorized', 'not_found'],
  },
  {
    operationId: 'deleteExport',
    method: 'delete',
    path: `${EXPORTS}/:exportId`,
    tag: EXPORT_TAG,
    auth: true,
    summary: 'Remove an export and its zip before it expires',
    description:
      `Exports are removed after ${configured('EXPORT_RETENTION_DAYS')} days (EXPORT_RETENTION_DAYS); this removes one earlier, ` +
      'a running one included.',
    params: { exportId: uuidParam },
    graphql: { kind: 'mutation', field: 'deleteExport', args: idFrom('exportId'), select: '{ id }' },
    status: 202,
    ack: 'Removed the export.',
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'not_found'],
  },
  {
    operationId: 'downloadExport',
    method: 'get',
    path: `${EXPORTS}/:exportId/download`,
    tag: EXPORT_TAG,
    auth: true,
    summary: "A succeeded export's zip (with Range support)",
    description:
      'application/zip, as an attachment. One byte range answers 206; a range past the end, 416. Before the export has ' +
      'succeeded: 409 `conflict`.',
    params: { exportId: uuidParam },
    graphql: {
      kind: 'query',
      field: 'exportFile',
      args: idFrom('exportId'),
      select: '{ bytes etag content_type: contentType file_name: fileName }',
    },
    download: {
      chunk: `query ExportChunk($id: ID!, $offset: Int!, $length: Int!) { result: exportFile(id: $id) { chunk(offset: $offset, length: $length) } }`,
      contentType: 'application/zip',
      attachment: true,
    },
    status: 200,
    response: { type: 'string', format: 'binary' },
    errors: ['validation_error', 'unauthorized', 'not_found', 'conflict', 'range_not_satisfiable'],
  },
];
