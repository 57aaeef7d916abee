// The vault module's REST routes, under /api/v1/vault: declarations only, each running one
// GraphQL operation of this module through the gateway (rest-facade/graphql-mapping.ts reads the
// selection off the response schema). Handed to the facade by module.ts.
import { camelCase } from '../../lib/naming';
import { configured } from '../../rest-facade/configured';
import { Arg, bodyArgs, queryArg } from '../../rest-facade/graphql-mapping';
import {
  EXPECTED_VERSION,
  EXPECTED_VERSION_ARG,
  idFrom,
  PAGE_ARGS,
  pageQuery,
  VERSION_QUERY,
} from '../../rest-facade/route-parts';
import type { RouteInput, RouteSpec } from '../../rest-facade/route-spec';
import { TRASH_DELETE_QUERY } from '../../rest-facade/trash-routes';
import { CommandAck, JsonSchema, pageSchema, patchBody, uuidParam } from '../../rest-facade/schemas';
import { URL_PATTERN } from './url-key';

const str = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', description, ...extra });
const nullable = (schema: JsonSchema): JsonSchema => ({ ...schema, nullable: true });
const TAGS: JsonSchema = {
  type: 'array',
  maxItems: 50,
  items: { type: 'string', minLength: 1, maxLength: 50 },
  description: 'Tags: 1 to 50 characters without spaces or commas, stored in lower case; at most 50',
};

/** The REST body's nested object as GraphQL input (camelCase keys), or left out. */
const nestedArg = (field: string, type: string): Arg => ({
  type,
  value: ({ body }: RouteInput) => {
    const value = body[field];
    if (value === undefined) return undefined;
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [camelCase(k), v]));
  },
});

// ---- items -------------------------------------------------------------------------------

const TAG_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['name', 'source'],
  properties: { name: { type: 'string' }, source: { type: 'string', enum: ['user', 'rule', 'auto'] } },
};
const CLASSIFICATION: JsonSchema = {
  type: 'object',
  required: ['by'],
  description: 'What decided the category: the user, a rule (rule_id), or the learned classifier (confidence, 0–1)',
  properties: {
    by: { type: 'string', nullable: true, enum: ['user', 'rule', 'auto', null] },
    rule_id: { type: 'string', format: 'uuid', nullable: true },
    confidence: { type: 'number', nullable: true },
  },
};

const ITEM_FIELDS: Record<string, JsonSchema> = {
  id: { type: 'string', format: 'uuid' },
  kind: { type: 'string', enum: ['link', 'text', 'file'] },
  url: nullable(str('The URL as given')),
  title: nullable({ type: 'string' }),
  excerpt: nullable(str('The first 300 characters of the text (or of the description)')),
  description: nullable(str("A page's description")),
  language: nullable(str("A page's language")),
  site_name: nullable({ type: 'string' }),
  media_type: nullable(str('A file: sniffed from its bytes; a link: as the server answered')),
  size_bytes: nullable({ type: 'number' }),
  sha256: nullable(str("A file's content hash (hex)")),
  file_name: nullable({ type: 'string' }),
  state: { type: 'string', enum: ['pending', 'ready', 'failed'] },
  error: nullable(str('Why it failed: timeout, too_large, blocked_address, http_404, parse_timeout, …')),
  error_message: nullable(
    str('What `error` means, in a sentence (for `blocked_address`: the setting that allows an internal host)'),
  ),
  category: nullable({ type: 'string' }),
  tags: { type: 'array', items: TAG_SCHEMA },
  classification: CLASSIFICATION,
  favorite: { type: 'boolean' },
  archived: { type: 'boolean' },
  version: { type: 'integer', minimum: 1 },
  owner_id: { type: 'string', format: 'uuid' },
  captured_at: { type: 'string', format: 'date-time' },
  updated_at: { type: 'string', format: 'date-time' },
};

/** In pages: everything but the text. */
export const VaultListedItem: JsonSchema = {
  type: 'object',
  required: Object.keys(ITEM_FIELDS),
  properties: ITEM_FIELDS,
};

export const VaultItemBody: JsonSchema = {
  type: 'object',
  required: [...Object.keys(ITEM_FIELDS), 'text'],
  properties: { ...ITEM_FIELDS, text: nullable(str('The readable text (at most VAULT_TEXT_MAX_CHARS characters)')) },
};

export const CaptureVaultItemRequest: JsonSchema = {
  type: 'object',
  additionalProperties: true, // unknown fields are ignored
  properties: {
    url: str('A link to fetch (http or https, at most 2048 characters); with `text`, where the text came from', {
      maxLength: 2048,
      pattern: URL_PATTERN,
    }),
    text: str('A text to keep: not only blanks, at most VAULT_TEXT_MAX_CHARS characters', { pattern: '\\S' }),
    title: str('At most 500 characters', { maxLength: 500 }),
    file: {
      type: 'object',
      required: ['name', 'content_base64'],
      'x-graphql-type': 'VaultFileInput',
      properties: {
        name: str('Its name, 1 to 255 characters', { minLength: 1, maxLength: 255, pattern: '\\S' }),
        media_type: str('What you say it is; the stored type is sniffed from the bytes', {
          maxLength: 255,
          pattern: '^[A-Za-z0-9_.+-]+/[A-Za-z0-9_.+-]+$',
        }),
        content_base64: str('The bytes in base64 (RFC 4648, with padding; checked by the service)', {
          minLength: 4,
          format: 'byte',
        }),
      },
    },
    tags: TAGS,
    category: {
      ...str('A category you set (classification.by: user); the classifier learns it', {
        minLength: 1,
        maxLength: 100,
      }),
      'x-trimmed': true,
    },
    favorite: { type: 'boolean' },
  },
  // One of: a link, a text (perhaps with where it came from), a file.
  oneOf: [
    { required: ['url'], not: { anyOf: [{ required: ['text'] }, { required: ['file'] }] } },
    { required: ['text'], not: { required: ['file'] } },
    { required: ['file'], not: { anyOf: [{ required: ['url'] }, { required: ['text'] }] } },
  ],
  'x-one-of-error': { field: 'body', message: 'give one of url, text or file' },
};

const UPDATE_FIELDS: Record<string, JsonSchema> = {
  title: nullable(str('At most 500 characters; null clears it', { maxLength: 500 })),
  category: {
    ...nullable(
      str('Set by hand: classification.by becomes user and the classifier learns it; null clears it', {
        minLength: 1,
        maxLength: 100,
      }),
    ),
    'x-trimmed': true,
  },
  tags: { ...TAGS, description: 'The whole list: tags kept keep their source, new ones are `user`' },
  favorite: { type: 'boolean' },
  archived: { type: 'boolean' },
};

export const UpdateVaultItemRequest = patchBody(UPDATE_FIELDS);

const COUNTS: JsonSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['name', 'count'],
    properties: { name: { type: 'string' }, count: { type: 'integer' } },
  },
};

// ---- rules -------------------------------------------------------------------------------

const RULE_WHEN: JsonSchema = {
  type: 'object',
  'x-graphql-type': 'VaultRuleWhenInput',
  description: 'Every condition given must hold',
  properties: {
    kind: nullable({ type: 'string', enum: ['link', 'text', 'file', null] }),
    url_host: nullable(str("The URL's host or a parent domain of it", { pattern: '^[A-Za-z0-9.-]{1,253}$' })),
    url_matches: nullable(
      str(
        'A glob over the whole URL (* within a segment, ** across /, ?, [classes], {a,b}; matched in time linear in the URL; parentheses and brace ranges are refused)',
        { minLength: 1, maxLength: 500 },
      ),
    ),
    text_contains: nullable({
      type: 'array',
      maxItems: 20,
      items: { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' },
      description: 'Any of these in the title, description or text (case-insensitive)',
    }),
    media_type: nullable(
      str('A media type or a family such as image/*', { pattern: '^[A-Za-z0-9_.+-]+/([A-Za-z0-9_.+-]+|[*])$' }),
    ),
  },
};
const RULE_THEN: JsonSchema = {
  type: 'object',
  'x-graphql-type': 'VaultRuleThenInput',
  description: 'What a matching rule does',
  properties: {
    category: nullable(
      str('The first matching rule that sets a category wins', { minLength: 1, maxLength: 100, pattern: '\\S' }),
    ),
    tags: nullable({ ...TAGS, description: 'Added with source `rule` by every matching rule' }),
    favorite: nullable({ type: 'boolean' }),
    archive: nullable({ type: 'boolean' }),
  },
};

export const VaultRuleBody: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'priority', 'when', 'then', 'version', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    priority: { type: 'integer', description: 'Lower runs first' },
    when: RULE_WHEN,
    then: RULE_THEN,
    version: { type: 'integer', minimum: 1 },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

const RULE_FIELDS: Record<string, JsonSchema> = {
  name: { ...str('1 to 100 characters', { minLength: 1, maxLength: 100 }), 'x-trimmed': true },
  priority: { type: 'integer', minimum: -1_000_000, maximum: 1_000_000, description: 'Lower runs first (default 100)' },
  when: RULE_WHEN,
  then: RULE_THEN,
};

export const CreateVaultRuleRequest: JsonSchema = {
  type: 'object',
  required: ['name', 'when', 'then'],
  additionalProperties: true,
  properties: RULE_FIELDS,
};
export const UpdateVaultRuleRequest = patchBody(RULE_FIELDS);

const ruleArgs = (schema: JsonSchema): Record<string, Arg> => {
  const { when: _w, then: _t, ...rest } = schema.properties as Record<string, JsonSchema>;
  const required = (schema.required as string[] | undefined) ?? [];
  return {
    ...bodyArgs({ ...schema, properties: rest }),
    when: nestedArg('when', required.includes('when') ? 'VaultRuleWhenInput!' : 'VaultRuleWhenInput'),
    then: nestedArg('then', required.includes('then') ? 'VaultRuleThenInput!' : 'VaultRuleThenInput'),
  };
};

// ---- the table ---------------------------------------------------------------------------

const ITEMS = '/vault/items';
const RULES = '/vault/rules';
const TAG = 'Vault';
const itemLocation = (r: Record<string, any>) => `/api/v1${ITEMS}/${r.id}`;
const ruleLocation = (r: Record<string, any>) => `/api/v1${RULES}/${r.id}`;
const ITEM_ID = { itemId: uuidParam };
const RULE_ID = { ruleId: uuidParam };
const FILTERS: Record<string, JsonSchema> = {
  kind: { type: 'string', enum: ['link', 'text', 'file'] },
  category: { type: 'string', minLength: 1, maxLength: 100 },
  tag: { type: 'string', minLength: 1, maxLength: 50 },
  state: { type: 'string', enum: ['pending', 'ready', 'failed'] },
  unclassified: { type: 'boolean', description: 'true: only items without a category' },
  favorite: { type: 'boolean' },
  archived: { type: 'string', enum: ['false', 'true', 'all'], default: 'false' },
  q: {
    type: 'string',
    minLength: 1,
    maxLength: 500,
    'x-max-terms': configured('SEARCH_MAX_TERMS', 'number'),
    description: `Full text over title, text and url, best match first; "quoted words" as a phrase; at most ${configured('SEARCH_MAX_TERMS')} words and phrases (\`x-max-terms\`; more: 400 \`validation_error\`)`,
  },
};

export const vaultRoutes: RouteSpec[] = [
  {
    operationId: 'captureVaultItem',
    method: 'post',
    path: ITEMS,
    tag: TAG,
    auth: true,
    summary: 'Capture a link, a text or a file',
    description:
      'The body is one of `{ url }`, `{ text, title?, url? }` or `{ file: { name, media_type?, content_base64 } }`, each with ' +
      '`tags`, `category` and `favorite` if you like. The item starts `pending` and is enriched in the background (links are ' +
      'fetched behind the SSRF guard; files have their type sniffed), then classified; follow `vault.item.ready` / ' +
      `\`vault.item.failed\`. A file holds at most ${configured('VAULT_MAX_FILE_BYTES', 'bytes')} (VAULT_MAX_FILE_BYTES) decoded, and this route takes ` +
      `bodies up to ${configured('VAULT_CAPTURE_BODY_LIMIT_BYTES', 'bytes')}. The same normalised URL (scheme and host in lower case, no default port, ` +
      'fragment or tracking parameters) or the same file bytes already in your vault: 409 `conflict` with `details.existing_id`. ' +
      `Caps: ${configured('VAULT_ITEMS_PER_USER')} items and ${configured('VAULT_FILE_BYTES_PER_USER', 'bytes')} of files (409 \`conflict\`); ` +
      `${configured('VAULT_PENDING_PER_USER')} items pending at once (429 with Retry-After). Each refusal has \`details: { limit, max, count }\`.`,
    body: CaptureVaultItemRequest,
    bodyLimit: (config) => config.VAULT_CAPTURE_BODY_LIMIT_BYTES,
    graphql: {
      kind: 'mutation',
      field: 'captureVaultItem',
      args: {
        ...bodyArgs({
          ...CaptureVaultItemRequest,
          properties: { ...(CaptureVaultItemRequest.properties as object), file: { type: 'string' } },
        }),
        file: nestedArg('file', 'VaultFileInput'),
      },
      select: '{ id }',
    },
    status: 202,
    ack: 'Captured; it is being enriched.',
    location: itemLocation,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'conflict', 'payload_too_large', 'rate_limit_exceeded'],
  },
  {
    operationId: 'listVaultItems',
    method: 'get',
    path: ITEMS,
    tag: TAG,
    auth: true,
    expensive: { kind: 'search', whenQuery: 'q' },
    summary: 'Your vault items, newest first (best match first with q), a page at a time',
    description:
      'Pages carry each item without its `text` (the `excerpt` is there). With `q`, a full-text search over title, text and url ' +
      "with the database's own index over your words only (SQLite FTS5 unicode61 without diacritics; InnoDB FULLTEXT; a run of " +
      'CJK text is one word); every word must match; at most SEARCH_MAX_TERMS words and phrases (400 beyond); the cursor is ' +
      'opaque. Searches are expensive operations: beyond EXPENSIVE_PER_USER of yours at once, 429 with `Retry-After`.',
    query: pageQuery(FILTERS),
    graphql: {
      kind: 'query',
      field: 'vaultItems',
      args: {
        ...PAGE_ARGS,
        kind: queryArg('kind', 'String'),
        category: queryArg('category', 'String'),
        tag: queryArg('tag', 'String'),
        state: queryArg('state', 'String'),
        unclassified: queryArg('unclassified', 'Boolean'),
        favorite: queryArg('favorite', 'Boolean'),
        archived: queryArg('archived', 'String'),
        q: queryArg('q', 'String'),
      },
    },
    status: 200,
    response: pageSchema(VaultListedItem),
    errors: ['validation_error', 'unauthorized', 'rate_limit_exceeded'],
  },
  {
    operationId: 'getVaultItem',
    method: 'get',
    path: `${ITEMS}/:itemId`,
    tag: TAG,
    auth: true,
    summary: 'One of your vault items, with its text',
    description: "Another user's item is `not_found`, like an unknown id.",
    params: ITEM_ID,
    graphql: { kind: 'query', field: 'vaultItem', args: idFrom('itemId') },
    status: 200,
    etag: (r) => `"${r.version}"`,
    response: VaultItemBody,
    errors: ['validation_error', 'unauthorized', 'not_found'],
  },
  {
    operationId: 'updateVaultItem',
    method: 'patch',
    path: `${ITEMS}/:itemId`,
    tag: TAG,
    auth: true,
    summary: 'Change an item at the version you expect',
    description:
      'Setting `category` marks `classification.by: user` and teaches your classifier. Name the version with `?version=N` or ' +
      '`If-Match`; a stale one is 409 `conflict` with `details.current_version`.',
    params: ITEM_ID,
    ...EXPECTED_VERSION,
    body: UpdateVaultItemRequest,
    graphql: {
      kind: 'mutation',
      field: 'updateVaultItem',
      args: { ...idFrom('itemId'), version: EXPECTED_VERSION_ARG, ...bodyArgs(UpdateVaultItemRequest) },
      select: '{ id version }',
    },
    status: 202,
    ack: 'Changed the item.',
    location: itemLocation,
    etag: (r) => `"${r.version}"`,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'not_found', 'conflict'],
  },
  {
    operationId: 'deleteVaultItem',
    method: 'delete',
    path: `${ITEMS}/:itemId`,
    tag: TAG,
    auth: true,
    summary: 'Delete an item at the version you expect: to the trash, or for good',
    description: `To the trash (\`vault.item.trashed\`) for ${configured('TRASH_RETENTION_DAYS')} days (TRASH_RETENTION_DAYS): gone from lists, search, counts and hub nodes (\`missing: true\`), still counted by the caps (its file too) until purged. \`permanent=true\`: deleted at once with its stored file (\`vault.item.deleted\`). \`?version=\` is the version you expect (else 409 \`conflict\`).`,
    params: ITEM_ID,
    query: TRASH_DELETE_QUERY,
    graphql: {
      kind: 'mutation',
      field: 'deleteVaultItem',
      args: {
        ...idFrom('itemId'),
        version: queryArg('version', 'Int!'),
        permanent: queryArg('permanent', 'Boolean'),
      },
      select: '{ id }',
    },
    status: 202,
    ack: 'Deleted the item.',
    location: itemLocation,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'not_found', 'conflict'],
  },
  {
    operationId: 'restoreVaultItem',
    method: 'post',
    path: '/trash/vault_item/:itemId/restore',
    tag: 'Trash',
    auth: true,
    summary: 'Bring a vault item back from the trash',
    description:
      'The item comes back as it was (a new version, `vault.item.restored`): its tags, its file, and hub nodes pointing at it show `missing: false` again. Not in your trash: `not_found`.',
    params: ITEM_ID,
    graphql: { kind: 'mutation', field: 'restoreVaultItem', args: idFrom('itemId'), select: '{ id }' },
    status: 202,
    ack: 'Restored the item.',
    location: itemLocation,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'not_found'],
  },
  {
    operationId: 'purgeVaultItem',
    method: 'delete',
    path: '/trash/vault_item/:itemId',
    tag: 'Trash',
    auth: true,
    summary: 'Delete a vault item in the trash for good',
    description:
      'With its stored file; emits `vault.item.deleted` and frees its place in the caps. Not in your trash: `not_found`.',
    params: ITEM_ID,
    graphql: { kind: 'mutation', field: 'purgeVaultItem', args: idFrom('itemId'), select: '{ id }' },
    status: 202,
    ack: 'Purged the item.',
    location: () => '/api/v1/trash',
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'not_found'],
  },
  {
    operationId: 'refetchVaultItem',
    method: 'post',
    path: `${ITEMS}/:itemId/refetch`,
    tag: TAG,
    auth: true,
    summary: 'Enrich a link again',
    description: 'The link becomes `pending` and is fetched again. Another kind: 409 `conflict`.',
    params: ITEM_ID,
    graphql: { kind: 'mutation', field: 'refetchVaultItem', args: idFrom('itemId'), select: '{ id }' },
    status: 202,
    ack: 'The link is fetched again.',
    location: itemLocation,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'not_found', 'conflict', 'rate_limit_exceeded'],
  },
  {
    operationId: 'classifyVaultItem',
    method: 'post',
    path: `${ITEMS}/:itemId/classify`,
    tag: TAG,
    auth: true,
    summary: 'Classify an item again: your rules, your classifier, keywords',
    description: 'Classifies the item now, as enrichment does; the tags and a category you set yourself stay.',
    params: ITEM_ID,
    graphql: { kind: 'mutation', field: 'classifyVaultItem', args: idFrom('itemId'), select: '{ id }' },
    status: 202,
    ack: 'Classified the item.',
    location: itemLocation,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'not_found', 'conflict'],
  },
  {
    operationId: 'getVaultItemContent',
    method: 'get',
    path: `${ITEMS}/:itemId/content`,
    tag: TAG,
    auth: true,
    summary: "A file item's bytes (with Range support)",
    description:
      'Sent as an attachment (`Content-Disposition: attachment`) with the type sniffed from the bytes (application/octet-stream ' +
      'until enrichment has sniffed it), `X-Content-Type-Options: nosniff` and a sandboxing Content-Security-Policy: nothing a ' +
      'user stored is ever shown inline. One byte range answers 206; a range past the end, 416. An item without a file: 404.',
    params: ITEM_ID,
    graphql: {
      kind: 'query',
      field: 'vaultItemContent',
      args: idFrom('itemId'),
      select: '{ bytes etag content_type: contentType file_name: fileName }',
    },
    download: {
      chunk: `query VaultItemContentChunk($id: ID!, $offset: Int!, $length: Int!) { result: vaultItemContent(id: $id) { chunk(offset: $offset, length: $length) } }`,
      contentType: 'application/octet-stream',
      attachment: true,
    },
    status: 200,
    response: { type: 'string', format: 'binary' },
    errors: ['validation_error', 'unauthorized', 'not_found', 'range_not_satisfiable'],
  },
  {
    operationId: 'listVaultCategories',
    method: 'get',
    path: '/vault/categories',
    tag: TAG,
    auth: true,
    summary: 'Your categories and how many items each has',
    description: 'Every category of your items with how many items are in it: the whole list, not paged.',
    graphql: { kind: 'query', field: 'vaultCategories', select: '{ name count }' },
    status: 200,
    response: COUNTS,
    errors: ['unauthorized'],
  },
  {
    operationId: 'listVaultTags',
    method: 'get',
    path: '/vault/tags',
    tag: TAG,
    auth: true,
    summary: 'Your tags and how many items each has',
    description: 'Every tag of your items with how many items carry it: the whole list, not paged.',
    graphql: { kind: 'query', field: 'vaultTags', select: '{ name count }' },
    status: 200,
    response: COUNTS,
    errors: ['unauthorized'],
  },
  {
    operationId: 'createVaultRule',
    method: 'post',
    path: RULES,
    tag: TAG,
    auth: true,
    summary: 'A classification rule',
    description: `Rules run in priority order (lower first). The first matching rule that sets a category wins it; every matching rule adds its tags (source \`rule\`). At most ${configured('VAULT_RULES_PER_USER')} rules (409 \`conflict\` with \`details: { limit, max, count }\`).`,
    body: CreateVaultRuleRequest,
    graphql: { kind: 'mutation', field: 'createVaultRule', args: ruleArgs(CreateVaultRuleRequest), select: '{ id }' },
    status: 202,
    ack: 'Created the rule.',
    location: ruleLocation,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'conflict'],
  },
  {
    operationId: 'listVaultRules',
    method: 'get',
    path: RULES,
    tag: TAG,
    auth: true,
    summary: 'All your rules, in the order they run',
    description: `At most ${configured('VAULT_RULES_PER_USER')} (VAULT_RULES_PER_USER), all in one answer: \`{ items }\`.`,
    graphql: { kind: 'query', field: 'vaultRules' },
    status: 200,
    response: {
      type: 'object',
      required: ['items'],
      properties: { items: { type: 'array', items: VaultRuleBody } },
    },
    errors: ['unauthorized'],
  },
  {
    operationId: 'getVaultRule',
    method: 'get',
    path: `${RULES}/:ruleId`,
    tag: TAG,
    auth: true,
    summary: 'One of your rules',
    description: 'One of your classification rules: its condition, its actions and its version.',
    params: RULE_ID,
    graphql: { kind: 'query', field: 'vaultRule', args: idFrom('ruleId') },
    status: 200,
    etag: (r) => `"${r.version}"`,
    response: VaultRuleBody,
    errors: ['validation_error', 'unauthorized', 'not_found'],
  },
  {
    operationId: 'updateVaultRule',
    method: 'patch',
    path: `${RULES}/:ruleId`,
    tag: TAG,
    auth: true,
    summary: 'Change a rule at the version you expect',
    description: 'Changes the fields you send; the version you expect goes in `?version=` or `If-Match` (else 409).',
    params: RULE_ID,
    ...EXPECTED_VERSION,
    body: UpdateVaultRuleRequest,
    graphql: {
      kind: 'mutation',
      field: 'updateVaultRule',
      args: { ...idFrom('ruleId'), version: EXPECTED_VERSION_ARG, ...ruleArgs(UpdateVaultRuleRequest) },
      select: '{ id version }',
    },
    status: 202,
    ack: 'Changed the rule.',
    location: ruleLocation,
    etag: (r) => `"${r.version}"`,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'not_found', 'conflict'],
  },
  {
    operationId: 'deleteVaultRule',
    method: 'delete',
    path: `${RULES}/:ruleId`,
    tag: TAG,
    auth: true,
    summary: 'Delete a rule at the version you expect',
    description: 'The rule no longer applies to items classified from now on; `?version=` is the version you expect.',
    params: RULE_ID,
    query: VERSION_QUERY,
    graphql: {
      kind: 'mutation',
      field: 'deleteVaultRule',
      args: { ...idFrom('ruleId'), version: queryArg('version', 'Int!') },
      select: '{ id }',
    },
    status: 202,
    ack: 'Deleted the rule.',
    location: ruleLocation,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'not_found', 'conflict'],
  },
];
