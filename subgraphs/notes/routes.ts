// The notes module's REST routes, under /api/v1/notes (CONTRACT.md "Notes"): declarations only,
// each running one GraphQL operation of this module through the gateway (rest-facade/graphql-mapping.ts
// reads the selection off the response schema and the arguments off the body schema). Listed for
// the facade by module.ts. The folder and tag routes come before `/notes/:noteId`.
import { bodyArgs, pathArg, queryArg } from '../../rest-facade/graphql-mapping';
import { configured } from '../../rest-facade/configured';
import {
  EXPECTED_VERSION,
  EXPECTED_VERSION_ARG,
  idFrom,
  PAGE_ARGS,
  PAGE_QUERY,
  pageQuery,
  VERSION_QUERY,
} from '../../rest-facade/route-parts';
import type { RouteSpec } from '../../rest-facade/route-spec';
import { TRASH_DELETE_QUERY } from '../../rest-facade/trash-routes';
import { CommandAck, JsonSchema, pageSchema, patchBody, uuidParam } from '../../rest-facade/schemas';

const TAG_TEXT = 'lower-case, 1–50 characters of a-z 0-9 _ - and / between parts (`project/alpha`)';
/** A tag as a client may write it: upper case is lower-cased. */
const TAG_PATTERN = '^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$';
const tagSchema: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 50,
  pattern: TAG_PATTERN,
  description: TAG_TEXT,
};

/** The fields a client sets: on create, and (each optional) on PATCH. */
const FIELDS: Record<string, JsonSchema> = {
  title: {
    type: 'string',
    nullable: true,
    maxLength: 200,
    description: "0 to 200 characters once trimmed; empty or null: the body's first line (without a heading's #)",
  },
  body: { type: 'string', maxLength: 100_000, description: 'Markdown, at most 100,000 characters' },
  folder_id: { type: 'string', format: 'uuid', nullable: true, description: 'One of your folders; null: none' },
  tags: {
    type: 'array',
    nullable: true,
    maxItems: 50,
    items: tagSchema,
    description: `Tags besides the body's #hashtags: ${TAG_TEXT}; at most 50 with the hashtags`,
  },
  pinned: { type: 'boolean', nullable: true, description: 'Pinned notes come first' },
};

export const CreateNoteRequest: JsonSchema = {
  type: 'object',
  required: ['body'],
  additionalProperties: true, // unknown fields are ignored
  properties: FIELDS,
};

export const UpdateNoteRequest = patchBody(FIELDS);

const COMMON: Record<string, JsonSchema> = {
  id: { type: 'string', format: 'uuid' },
  owner_id: { type: 'string', format: 'uuid' },
  title: { type: 'string' },
  folder_id: { type: 'string', format: 'uuid', nullable: true },
  tags: { type: 'array', items: { type: 'string' }, description: 'Given tags and #hashtags, lower-case' },
  pinned: { type: 'boolean' },
  archived: { type: 'boolean' },
  archived_at: { type: 'string', format: 'date-time', nullable: true },
  version: {
    type: 'integer',
    minimum: 1,
    description: '1 when created; every change adds 1. PATCH and DELETE name it.',
  },
  created_at: { type: 'string', format: 'date-time' },
  updated_at: { type: 'string', format: 'date-time' },
};

export const NoteBody: JsonSchema = {
  type: 'object',
  required: Object.keys(COMMON).concat('body'),
  properties: { ...COMMON, body: { type: 'string' } },
};

/** A note in a listing: its excerpt, not its body. */
export const NoteListItem: JsonSchema = {
  type: 'object',
  required: Object.keys(COMMON).concat('excerpt'),
  properties: { ...COMMON, excerpt: { type: 'string', description: 'The first 300 characters of the body' } },
};

export const NotePageBody = pageSchema(NoteListItem);

const NOTE_FILTERS: Record<string, JsonSchema> = {
  folder_id: { type: 'string', format: 'uuid', description: 'Only the notes in this folder' },
  tag: {
    ...tagSchema,
    description: 'Only notes with this tag or one nested in it (`project` matches `project/alpha`)',
  },
  archived: {
    type: 'string',
    enum: ['false', 'true', 'all'],
    default: 'false',
    description: '`false`: not archived (default); `true`: archived only; `all`',
  },
  pinned: { type: 'boolean', description: 'Only pinned (true) or unpinned (false) notes' },
  q: {
    type: 'string',
    minLength: 1,
    maxLength: 200,
    // Machine-readable for clients and the conformance test; a JSON Schema cannot count terms.
    'x-max-terms': configured('SEARCH_MAX_TERMS', 'number'),
    description: `Full-text search over title and body (the database's own index): every word must match, as a word or the start of one; "quoted words" as a phrase; accents are ignored; at most ${configured('SEARCH_MAX_TERMS')} words and phrases (\`x-max-terms\`; more: 400 \`validation_error\`). Best match first; the cursor belongs to this query. A query without a letter or digit matches nothing. See docs/notes.md for what each database matches.`,
  },
};

export const FolderBody: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'parent_id', 'path', 'note_count', 'version', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    parent_id: { type: 'string', format: 'uuid', nullable: true },
    path: { type: 'string', description: 'The names from the top down, joined with "/"' },
    note_count: { type: 'integer', minimum: 0, description: 'Notes directly in it, archived ones included' },
    version: { type: 'integer', minimum: 1 },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

const FolderList: JsonSchema = {
  type: 'object',
  required: ['items'],
  properties: { items: { type: 'array', items: FolderBody } },
};

const FOLDER_FIELDS: Record<string, JsonSchema> = {
  name: {
    type: 'string',
    // 1 to 100 characters once trimmed, none of them "/".
    pattern: '^\\s*[^/\\s](?:[^/]{0,98}[^/\\s])?\\s*$',
    description: '1 to 100 characters without "/" once trimmed, unique among its siblings (ignoring case)',
  },
  parent_id: {
    type: 'string',
    format: 'uuid',
    nullable: true,
    description: 'The folder to put it in; null: at the top',
  },
};
const CreateFolderRequest: JsonSchema = {
  type: 'object',
  required: ['name'],
  additionalProperties: true,
  properties: FOLDER_FIELDS,
};
const UpdateFolderRequest = patchBody(FOLDER_FIELDS);

const TagCounts: JsonSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['tag', 'count'],
    properties: { tag: { type: 'string' }, count: { type: 'integer', minimum: 1 } },
  },
};
const RenameTagRequest: JsonSchema = {
  type: 'object',
  required: ['from', 'to'],
  additionalProperties: true,
  properties: { from: tagSchema, to: tagSchema },
};

const NOTES = '/notes';
const FOLDERS = '/notes/folders';
const NOTE_TAG = 'Note';
const FOLDER_TAG = 'Note folder';
const noteLocation = (r: Record<string, any>) => `/api/v1${NOTES}/${r.id}`;
const folderLocation = () => `/api/v1${FOLDERS}`;
const versionOf = (r: Record<string, any>) => `"${r.version}"`;

/** A command on one note at the version the caller expects (`?version=N`), answered 202. */
const noteCommand = (
  operationId: string,
  method: 'post' | 'delete',
  suffix: string,
  field: string,
  summary: string,
  ack: string,
): RouteSpec => ({
  operationId,
  method,
  path: `${NOTES}/:noteId${suffix}`,
  tag: NOTE_TAG,
  auth: true,
  summary,
  description: '`version` must equal the stored version, else `conflict` with `details.current_version`.',
  params: { noteId: uuidParam },
  query: VERSION_QUERY,
  graphql: {
    kind: 'mutation',
    field,
    args: { ...idFrom('noteId'), version: queryArg('version', 'Int!') },
    select: '{ id version }',
  },
  status: 202,
  ack,
  location: noteLocation,
  response: CommandAck,
  errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found', 'conflict'],
});

export const notesRoutes: RouteSpec[] = [
  // ---- folders and tags (before /notes/:noteId) -------------------------------------------
  {
    operationId: 'listNoteFolders',
    method: 'get',
    path: FOLDERS,
    tag: FOLDER_TAG,
    auth: true,
    summary: 'Every folder of yours, by path, with its note count',
    description: 'Every folder you have, by path, with how many notes each holds: the whole list, not paged.',
    graphql: { kind: 'query', field: 'noteFolders', select: FolderBody },
    status: 200,
    present: (items) => ({ items }),
    response: FolderList,
    errors: ['unauthorized', 'forbidden'],
  },
  {
    operationId: 'createNoteFolder',
    method: 'post',
    path: FOLDERS,
    tag: FOLDER_TAG,
    auth: true,
    summary: 'Create a folder',
    description: `Folders nest at most 10 deep and you keep at most ${configured('NOTE_FOLDERS_PER_USER')} (409 \`conflict\` with \`details: { limit, max, count }\` beyond). A sibling with the same name (ignoring case): 409 with \`details.reason: "name_taken"\`.`,
    body: CreateFolderRequest,
    graphql: { kind: 'mutation', field: 'createNoteFolder', args: bodyArgs(CreateFolderRequest), select: '{ id }' },
    status: 202,
    ack: 'Created the folder.',
    location: folderLocation,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found', 'conflict'],
  },
  {
    operationId: 'updateNoteFolder',
    method: 'patch',
    path: `${FOLDERS}/:folderId`,
    tag: FOLDER_TAG,
    auth: true,
    summary: 'Rename or move a folder at the version you expect',
    description:
      'A move into the folder itself or below it: 409 with `details.reason: "cycle"`; deeper than 10: 409 with `details.limit`. Name the version with `?version=N` or `If-Match`.',
    params: { folderId: uuidParam },
    ...EXPECTED_VERSION,
    body: UpdateFolderRequest,
    graphql: {
      kind: 'mutation',
      field: 'updateNoteFolder',
      args: { ...idFrom('folderId'), version: EXPECTED_VERSION_ARG, ...bodyArgs(UpdateFolderRequest) },
      select: '{ id version }',
    },
    status: 202,
    ack: 'Changed the folder.',
    location: folderLocation,
    etag: versionOf,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found', 'conflict'],
  },
  {
    operationId: 'deleteNoteFolder',
    method: 'delete',
    path: `${FOLDERS}/:folderId`,
    tag: FOLDER_TAG,
    auth: true,
    summary: 'Delete an empty folder at the version you expect',
    description: 'A folder with notes or folders in it: 409 with `details.note_count` and `details.folder_count`.',
    params: { folderId: uuidParam },
    query: VERSION_QUERY,
    graphql: {
      kind: 'mutation',
      field: 'deleteNoteFolder',
      args: { ...idFrom('folderId'), version: queryArg('version', 'Int!') },
      select: '{ id }',
    },
    status: 202,
    ack: 'Deleted the folder.',
    location: folderLocation,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found', 'conflict'],
  },
  {
    operationId: 'listNoteTags',
    method: 'get',
    path: '/notes/tags',
    tag: NOTE_TAG,
    auth: true,
    summary: 'Every tag of your notes with how many carry it',
    description: 'Every tag on your notes with how many notes carry it: the whole list, not paged.',
    graphql: { kind: 'query', field: 'noteTags', select: '{ tag count }' },
    status: 200,
    response: TagCounts,
    errors: ['unauthorized', 'forbidden'],
  },
  {
    operationId: 'renameNoteTag',
    method: 'post',
    path: '/notes/tags/rename',
    tag: NOTE_TAG,
    auth: true,
    summary: 'Rename a tag (and the tags nested in it) in every note of yours',
    description:
      'Answers at once; the notes change in the background, #hashtags in bodies included, each with a new version and a `note.updated` event. `to` may not be nested in `from`. Users are served in turn; past `JOBS_PENDING_PER_USER` renames of yours waiting, 429 with `Retry-After`.',
    body: RenameTagRequest,
    graphql: { kind: 'mutation', field: 'renameNoteTag', args: bodyArgs(RenameTagRequest), select: '{ id }' },
    status: 202,
    ack: 'Renaming the tag.',
    location: () => '/api/v1/notes/tags',
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'rate_limit_exceeded'],
  },
  // ---- notes ---------------------------------------------------------------------------------
  {
    operationId: 'listNotes',
    method: 'get',
    path: NOTES,
    tag: NOTE_TAG,
    auth: true,
    expensive: { kind: 'search', whenQuery: 'q' },
    summary: 'Your notes, pinned first, then the newest change first, a page at a time',
    description:
      'Listings carry `excerpt` (the first 300 characters), not the body. With `q`: best match first, over your notes only; ' +
      'at most SEARCH_MAX_TERMS words and phrases (400 beyond). A search is an expensive operation: beyond ' +
      'EXPENSIVE_PER_USER of yours at once, 429 with `Retry-After`.',
    query: pageQuery(NOTE_FILTERS),
    graphql: {
      kind: 'query',
      field: 'notes',
      args: {
        ...PAGE_ARGS,
        folderId: queryArg('folder_id', 'ID'),
        tag: queryArg('tag', 'String'),
        archived: queryArg('archived', 'String'),
        pinned: queryArg('pinned', 'Boolean'),
        q: queryArg('q', 'String'),
      },
    },
    status: 200,
    response: NotePageBody,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'rate_limit_exceeded'],
  },
  {
    operationId: 'createNote',
    method: 'post',
    path: NOTES,
    tag: NOTE_TAG,
    auth: true,
    summary: 'Create a note (version 1)',
    description: `Tags are the given ones and the body's #hashtags outside code. You keep at most ${configured('NOTES_PER_USER')} notes (409 \`conflict\` with \`details: { limit, max, count }\` beyond). The body of this request may be up to ${configured('NOTES_BODY_LIMIT_BYTES', 'bytes')}.`,
    body: CreateNoteRequest,
    bodyLimit: (config) => config.NOTES_BODY_LIMIT_BYTES,
    graphql: { kind: 'mutation', field: 'createNote', args: bodyArgs(CreateNoteRequest), select: '{ id }' },
    status: 202,
    ack: 'Created the note.',
    location: noteLocation,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found', 'conflict', 'payload_too_large'],
  },
  {
    operationId: 'getNote',
    method: 'get',
    path: `${NOTES}/:noteId`,
    tag: NOTE_TAG,
    auth: true,
    summary: 'One of your notes, with its body',
    description: "Another user's note is `not_found`, like an unknown id.",
    params: { noteId: uuidParam },
    graphql: { kind: 'query', field: 'note', args: idFrom('noteId') },
    status: 200,
    etag: versionOf,
    response: NoteBody,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found'],
  },
  {
    operationId: 'updateNote',
    method: 'patch',
    path: `${NOTES}/:noteId`,
    tag: NOTE_TAG,
    auth: true,
    summary: 'Change a note at the version you expect',
    description: `A field left out stays as it is; \`tags\` replaces the given tags (the body's #hashtags stay). Name the version with \`?version=N\` or \`If-Match: "N"\` (the ETag of GET); another is \`conflict\` with \`details.current_version\`. The body of this request may be up to ${configured('NOTES_BODY_LIMIT_BYTES', 'bytes')}.`,
    params: { noteId: uuidParam },
    ...EXPECTED_VERSION,
    body: UpdateNoteRequest,
    bodyLimit: (config) => config.NOTES_BODY_LIMIT_BYTES,
    graphql: {
      kind: 'mutation',
      field: 'updateNote',
      args: { ...idFrom('noteId'), version: EXPECTED_VERSION_ARG, ...bodyArgs(UpdateNoteRequest) },
      select: '{ id version }',
    },
    status: 202,
    ack: 'Changed the note.',
    location: noteLocation,
    etag: versionOf,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found', 'conflict', 'payload_too_large'],
  },
  noteCommand(
    'archiveNote',
    'post',
    '/archive',
    'archiveNote',
    'Archive a note at the version you expect',
    'Archived the note.',
  ),
  noteCommand(
    'unarchiveNote',
    'post',
    '/unarchive',
    'unarchiveNote',
    'Bring an archived note back at the version you expect',
    'Unarchived the note.',
  ),
  {
    ...noteCommand(
      'deleteNote',
      'delete',
      '',
      'deleteNote',
      'Delete a note at the version you expect: to the trash, or for good',
      'Deleted the note.',
    ),
    description: `To the trash (\`note.trashed\`) for ${configured('TRASH_RETENTION_DAYS')} days (TRASH_RETENTION_DAYS): gone from lists, search, tags, backlinks and hub nodes (\`missing: true\`), still counted by NOTES_PER_USER until purged. \`permanent=true\`: deleted at once (\`note.deleted\`). \`version\` must equal the stored version, else \`conflict\` with \`details.current_version\`.`,
    query: TRASH_DELETE_QUERY,
    graphql: {
      kind: 'mutation',
      field: 'deleteNote',
      args: { ...idFrom('noteId'), version: queryArg('version', 'Int!'), permanent: queryArg('permanent', 'Boolean') },
      select: '{ id version }',
    },
  },
  {
    operationId: 'restoreNote',
    method: 'post',
    path: '/trash/note/:noteId/restore',
    tag: 'Trash',
    auth: true,
    summary: 'Bring a note back from the trash',
    description:
      'The note comes back as it was (a new version, `note.restored`): its tags, its folder (the top when the folder was deleted meanwhile), its links and backlinks, and hub nodes pointing at it show `missing: false` again. Not in your trash: `not_found`.',
    params: { noteId: uuidParam },
    graphql: { kind: 'mutation', field: 'restoreNote', args: idFrom('noteId'), select: '{ id version }' },
    status: 202,
    ack: 'Restored the note.',
    location: noteLocation,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found'],
  },
  {
    operationId: 'purgeNote',
    method: 'delete',
    path: '/trash/note/:noteId',
    tag: 'Trash',
    auth: true,
    summary: 'Delete a note in the trash for good',
    description: 'Emits `note.deleted` and frees its place in NOTES_PER_USER. Not in your trash: `not_found`.',
    params: { noteId: uuidParam },
    graphql: { kind: 'mutation', field: 'purgeNote', args: idFrom('noteId'), select: '{ id }' },
    status: 202,
    ack: 'Purged the note.',
    location: () => '/api/v1/trash',
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found'],
  },
  {
    operationId: 'listNoteBacklinks',
    method: 'get',
    path: `${NOTES}/:noteId/backlinks`,
    tag: NOTE_TAG,
    auth: true,
    summary: 'The notes of yours that link to this one',
    description:
      'Notes whose body has `[[its title]]` (case-insensitive) or `[[its id]]` outside code, oldest first; links written before the note had that title count too.',
    params: { noteId: uuidParam },
    query: PAGE_QUERY,
    graphql: {
      kind: 'query',
      field: 'noteBacklinks',
      args: { id: pathArg('noteId'), ...PAGE_ARGS },
      select: NotePageBody,
    },
    status: 200,
    response: NotePageBody,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found'],
  },
];
