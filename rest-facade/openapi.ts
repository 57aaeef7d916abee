// The OpenAPI 3.0 document, written from the same route table that serves the requests, with
// the limits of the live configuration (configured.ts).
import type { Config } from '../lib/config';
import { DEFAULT_MESSAGES, ERROR_STATUS, ErrorCode } from '../lib/errors';
import { configured, fillConfigured } from './configured';
import { carriesCredentials, NO_STORE_HEADERS, RouteSpec } from './route-spec';
import type { RouteTable } from './route-table';
import { Health, JsonSchema } from './schemas';

/** The named schemas of the document being written (the route table's), by identity. */
type Names = Map<unknown, string>;
const schemaOrRef = (names: Names, s: JsonSchema) =>
  names.has(s) ? { $ref: `#/components/schemas/${names.get(s)}` } : s;

/** Only the server reads these: the GraphQL side of a field (graphql-mapping.ts), and the trimming rule (stated as a pattern instead). */
const INTERNAL = new Set(['x-graphql', 'x-graphql-type', 'x-trimmed']);
const LENGTHS = new Set(['minLength', 'maxLength']);

/** `min`–`max` characters once surrounding white space is trimmed (JavaScript's `\s` is what trim() removes). */
export function trimmedPattern(min: number, max: number): string {
  if (max === 1) return '^\\s*\\S\\s*$';
  const inner =
    min <= 2 ? `(?:[\\s\\S]{0,${max - 2}}\\S)${min === 1 ? '?' : ''}` : `[\\s\\S]{${min - 2},${max - 2}}\\S`;
  return `^\\s*\\S${inner}\\s*$`;
}

/**
 * A value as the document shows it: named schemas by reference, configured limits filled in,
 * what only the server reads left out. `top` is the component being written itself.
 */
function published(value: unknown, config: Config, names: Names, top?: unknown): unknown {
  if (typeof value === 'string') return fillConfigured(value, config);
  if (Array.isArray(value)) return value.map((v) => published(v, config, names));
  if (!value || typeof value !== 'object') return value;
  if (value !== top && names.has(value)) return { $ref: `#/components/schemas/${names.get(value)}` };
  const schema = value as JsonSchema;
  const trimmed = schema['x-trimmed']
    ? { pattern: trimmedPattern(schema.minLength as number, schema.maxLength as number) }
    : {};
  const kept = Object.entries(schema).filter(([k]) => !INTERNAL.has(k) && !(schema['x-trimmed'] && LENGTHS.has(k)));
  const out = { ...Object.fromEntries(kept.map(([k, v]) => [k, published(v, config, names)])), ...trimmed };
  return { ...out, ...oneType(out) };
}

/**
 * OpenAPI 3.0 has one `type` per schema: JSON Schema's (and 3.1's) `type: [T, "null"]` is written
 * `type: T, nullable: true`, with null added to an `enum` (3.0.3 checks the enum after nullable).
 * A schema may so be declared either way, and the document stays 3.0; two non-null types cannot be.
 */
export function oneType(schema: JsonSchema): JsonSchema {
  if (!Array.isArray(schema.type)) return {};
  const types = (schema.type as string[]).filter((t) => t !== 'null');
  if (types.length !== 1) throw new Error(`OpenAPI 3.0 cannot state type ${JSON.stringify(schema.type)}`);
  if (types.length === schema.type.length) return { type: types[0] };
  const withNull = Array.isArray(schema.enum) && !schema.enum.includes(null) ? { enum: [...schema.enum, null] } : {};
  return { type: types[0], nullable: true, ...withNull };
}
const errorResponse = (code: ErrorCode) => ({
  description: `\`${code}\`: ${DEFAULT_MESSAGES[code]}`,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorObject' } } },
  ...(code === 'rate_limit_exceeded'
    ? { headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait' } } }
    : {}),
  ...(code === 'unauthorized'
    ? { headers: { 'WWW-Authenticate': { schema: { type: 'string', example: 'Bearer' } } } }
    : {}),
});

/** Every operation reads it; one that does not match is replaced by a new id rather than refused. */
const REQUEST_ID_PARAM = {
  name: 'X-Request-Id',
  in: 'header',
  required: false,
  schema: { type: 'string', pattern: '^[\\w.:-]{1,128}$' },
  description: "Echoed in the answer's X-Request-Id and the logs; a value that does not match is replaced by a new id",
};

/** Every signed-in POST command honours it (lib/idempotency.ts, docs/integrations.md). */
const IDEMPOTENCY_KEY_PARAM = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
  description:
    'A retry with the same key and body within IDEMPOTENCY_TTL_SECONDS answers the first answer (status, body, Location) ' +
    'without a second effect; another body with the key is 409 `conflict` (`details.reason: "idempotency_key_reused"`); ' +
    'while the first still runs, 409 with `Retry-After`. Keys are per user; send a new UUID for each new request',
};

// Not an upload: its body is streamed in pieces, which a replayed first answer cannot stand for.
const takesIdempotencyKey = (route: RouteSpec) =>
  route.method === 'post' && route.auth && !route.stream && !route.upload;

/** Every response may also be one of these. */
const ALWAYS: ErrorCode[] = ['internal_error', 'service_unavailable'];

/**
 * Every media type the answer may be sent as: a file in each of its formats (`?format=` or
 * `Accept`), JSON or its text form (`?format=vtt`), and stored content in whatever type was sniffed
 * from its bytes, which no list can name: any type.
 */
function answerContent(route: RouteSpec, names: Names): Record<string, { schema: unknown }> {
  const schema = schemaOrRef(names, route.response);
  const types = route.stream
    ? ['text/event-stream']
    : route.download?.attachment
      ? ['*/*']
      : route.download
        ? [route.download.contentType, ...Object.values(route.download.formats ?? {})]
        : ['application/json'];
  return {
    ...Object.fromEntries(types.map((type) => [type, { schema }])),
    ...(route.text ? { [route.text.contentType]: { schema: { type: 'string' } } } : {}),
  };
}

function answerDescription(route: RouteSpec): string {
  if (route.status === 202) return 'Accepted';
  if (route.stream) return 'An event stream (Server-Sent Events)';
  if (route.download?.attachment)
    return 'The whole file, as the type sniffed from its bytes (application/octet-stream until it has been sniffed)';
  if (route.download?.formats) return 'The whole file, in the format asked for (`?format=`, else `Accept`)';
  if (route.download) return 'The whole file';
  if (route.text) return `OK: JSON, or \`${route.text.contentType}\` with \`?${route.text.param}=${route.text.value}\``;
  return 'OK';
}

function operation(route: RouteSpec, names: Names) {
  const responses: Record<string, unknown> = {
    [route.status]: {
      description: answerDescription(route),
      content: answerContent(route, names),
      ...(route.location || route.etag
        ? {
            headers: {
              ...(route.location
                ? { Location: { schema: { type: 'string' }, description: 'Where the resource concerned is' } }
                : {}),
              ...(route.etag
                ? {
                    ETag: {
                      schema: { type: 'string', example: '"3"' },
                      description: 'The version, quoted: send it back as If-Match',
                    },
                  }
                : {}),
            },
          }
        : {}),
      ...(route.download
        ? {
            headers: {
              ETag: { schema: { type: 'string' } },
              'Accept-Ranges': { schema: { type: 'string', example: 'bytes' } },
            },
          }
        : {}),
    },
    ...(route.download
      ? {
          206: {
            description: 'The one byte range asked for with `Range`',
            content: answerContent(route, names),
            headers: { 'Content-Range': { schema: { type: 'string', example: 'bytes 0-1023/88244' } } },
          },
          304: { description: 'Not modified (If-None-Match matched the ETag)' },
        }
      : {}),
  };
  if (carriesCredentials(route)) {
    // Tokens must not be kept by a browser or proxy cache.
    const ok = responses[route.status] as { headers?: Record<string, unknown> };
    ok.headers = {
      ...ok.headers,
      ...Object.fromEntries(
        Object.entries(NO_STORE_HEADERS).map(([name, value]) => [
          name,
          { schema: { type: 'string', enum: [value] }, description: 'The answer carries tokens: never stored' },
        ]),
      ),
    };
  }
  const codes = [
    ...route.errors,
    // A route that needs a token needs a scope too: a role without it answers 403 (docs/roles-and-scopes.md).
    ...(route.auth ? (['unauthorized', 'forbidden'] as ErrorCode[]) : []),
    ...(route.body || route.upload ? (['payload_too_large', 'unsupported_media_type'] as ErrorCode[]) : []),
    // An upload is a large body: LARGE_BODIES_PER_USER at once (lib/large-bodies.ts).
    ...(route.upload ? (['rate_limit_exceeded'] as ErrorCode[]) : []),
    // A route with a larger body limit may take a large body: LARGE_BODIES_PER_USER at once (lib/large-bodies.ts).
    ...(route.bodyLimit ? (['rate_limit_exceeded'] as ErrorCode[]) : []),
    // Idempotency-Key: a key reused with another request, or one still running, is 409.
    ...(takesIdempotencyKey(route) ? (['conflict'] as ErrorCode[]) : []),
    ...ALWAYS,
  ];
  for (const code of codes) {
    const status = String(ERROR_STATUS[code]);
    if (!responses[status]) responses[status] = errorResponse(code);
  }
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(route.auth
      ? { security: route.stream ? [{ bearerAuth: [] }, { streamTicket: [] }] : [{ bearerAuth: [] }] }
      : { security: [] }),
    parameters: [
      ...(route.download
        ? [
            {
              name: 'Range',
              in: 'header',
              required: false,
              schema: { type: 'string', example: 'bytes=0-1023' },
              description: 'One byte range',
            },
            {
              name: 'If-Range',
              in: 'header',
              required: false,
              schema: { type: 'string' },
              description: 'The ETag: Range applies only while it matches',
            },
          ]
        : []),
      ...(route.headerParams ?? []).map(({ name, schema, description }) => ({
        name,
        in: 'header',
        required: false,
        schema,
        description,
      })),
      REQUEST_ID_PARAM,
      ...(takesIdempotencyKey(route) ? [IDEMPOTENCY_KEY_PARAM] : []),
      ...Object.entries(route.params ?? {}).map(([name, schema]) => ({ name, in: 'path', required: true, schema })),
      ...Object.entries((route.query?.schema.properties ?? {}) as Record<string, JsonSchema>).map(([name, schema]) => ({
        name,
        in: 'query',
        required: route.query?.required?.includes(name) ?? false,
        schema,
      })),
    ],
    ...(route.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOrRef(names, route.body) } } } }
      : {}),
    ...(route.upload
      ? {
          requestBody: {
            required: true,
            description: route.upload.description,
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
          },
        }
      : {}),
    responses,
  };
}

/** The facade's own tags; each module declares its own with its routes (route-table.ts). */
const FACADE_TAGS = [
  { name: 'Health', description: 'Liveness and readiness, for load balancers and orchestrators; no token needed.' },
];

/**
 * Every tag an operation uses, declared (code generators group by them and linters require a
 * description): the declared ones in their order, then any that an operation uses undeclared
 * (without a description, which the document's lint test reports).
 */
function declaredTags(
  paths: Record<string, Record<string, unknown>>,
  declared: { name: string; description?: string }[],
): { name: string; description?: string }[] {
  const used = new Set(
    Object.values(paths).flatMap((methods) =>
      Object.values(methods).flatMap((op) => (op as { tags?: string[] }).tags ?? []),
    ),
  );
  const known = new Set(declared.map((t) => t.name));
  return [
    ...declared.filter((t) => used.has(t.name)),
    ...[...used].filter((n) => !known.has(n)).map((name) => ({ name })),
  ];
}

const health = (
  names: Names,
  operationId: string,
  summary: string,
  description: string,
  extra: Record<string, unknown> = {},
) => ({
  get: {
    operationId,
    tags: ['Health'],
    summary,
    description,
    security: [],
    responses: {
      200: { description: 'OK', content: { 'application/json': { schema: schemaOrRef(names, Health) } } },
      ...extra,
    },
  },
});

export function openApiDocument(table: RouteTable, config: Config) {
  const names: Names = new Map(Object.entries(table.schemas).map(([k, v]) => [v, k]));
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of table.routes) {
    const path = `/api/v1${route.path.replace(/:(\w+)/g, '{$1}')}`;
    (paths[path] ??= {})[route.method] = operation(route, names);
  }
  const notReady = {
    503: {
      description: 'A database or subgraph is down',
      content: { 'application/json': { schema: schemaOrRef(names, Health) } },
    },
  };
  for (const [prefix, suffix] of [
    ['', ''],
    ['/api/v1', 'UnderApi'],
  ]) {
    paths[`${prefix}/health/live`] = health(
      names,
      `getLiveness${suffix}`,
      'Liveness: the process runs',
      'Answers 200 while the process can answer at all, without asking a database or subgraph: restart it when this fails.',
    );
    paths[`${prefix}/health/ready`] = health(
      names,
      `getReadiness${suffix}`,
      'Readiness: every database and subgraph answers',
      'Asks every database and subgraph: 200 while none is `down` (`degraded` still serves), else 503; `checks` says which. Send traffic only on 200.',
      notReady,
    );
  }
  // The endpoints beside /api/v1 last, each as its module wrote it.
  for (const route of table.mounted) (paths[route.path] ??= {})[route.method] = route.openapi;
  return published(
    {
      openapi: '3.0.3',
      info: {
        title: 'Federated auth & voice API',
        version: '1.0.0',
        description:
          'Commands answer 202 Accepted with a Location header; queries answer 200. Every failure is the error object ' +
          "`{ error, message, details? }`. Each response carries `X-Request-Id` (the caller's, when it sent one). " +
          `Request bodies are limited to ${configured('BODY_LIMIT_BYTES', 'bytes')} (BODY_LIMIT_BYTES; 413 beyond). Unknown body fields are ignored. ` +
          `The GraphQL API beside it (\`POST /graphql\`) checks each operation before running it: at most ${configured('GRAPHQL_MAX_TOKENS')} tokens, ` +
          `depth ${configured('GRAPHQL_MAX_DEPTH')}, ${configured('GRAPHQL_MAX_ALIASES')} aliases, ${configured('GRAPHQL_MAX_ROOT_FIELDS')} root fields, ` +
          `${configured('GRAPHQL_MAX_DIRECTIVES')} directives and a cost of ${configured('GRAPHQL_MAX_COST')} (${configured('GRAPHQL_MAX_COST_ANONYMOUS')} ` +
          'without a token; a field with `first`/`limit` counts its selection once per item); answers are at most ' +
          `${configured('GRAPHQL_MAX_RESPONSE_BYTES', 'bytes')} and audio chunks ${configured('GRAPHQL_MAX_AUDIO_BYTES', 'bytes')} per operation. ` +
          'Beyond: 400 `validation_error` naming the limit.',
      },
      servers: [{ url: '/' }],
      tags: declaredTags(paths, [...table.tags, ...FACADE_TAGS, ...table.mountedTags]),
      paths,
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          streamTicket: {
            type: 'apiKey',
            in: 'query',
            name: 'ticket',
            description: 'For browsers: a single-use ticket from POST /api/v1/auth/stream-ticket',
          },
        },
        schemas: Object.fromEntries(
          Object.entries(table.schemas).map(([name, schema]) => [name, published(schema, config, names, schema)]),
        ),
      },
    },
    config,
    names,
  ) as OpenApiDocument;
}

/** What the document is to its readers here (tests, the server that serves it). */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string };
  paths: Record<
    string,
    Record<
      string,
      {
        operationId?: string;
        requestBody?: { content: Record<string, { schema: JsonSchema }> };
        [key: string]: unknown;
      }
    >
  >;
  components: { schemas: Record<string, JsonSchema>; [key: string]: unknown };
  [key: string]: unknown;
}
