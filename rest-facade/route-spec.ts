// The shape of one row of the route table.
import type { Router } from 'express';
import type { Config } from '../lib/config';
import type { ErrorCode } from '../lib/errors';
import type { ExpensiveKind } from '../lib/kit/expensive';
import type { GraphQLClient } from './graphql-client';
import type { GraphQLCall } from './graphql-mapping';
import type { JsonSchema } from './schemas';

export interface RouteInput {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
}

export interface RouteSpec {
  /** The OpenAPI operationId (what generated SDKs name the method), and the GraphQL operation's name capitalised. Never renamed. */
  operationId: string;
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Below /api/v1, with `:name` parameters. */
  path: string;
  tag: string;
  summary: string;
  /** May name configured limits with `configured()`: the document states the live values. */
  description?: string;
  /** Needs `Authorization: Bearer <access token>`; the token is passed on to GraphQL. */
  auth: boolean;
  params?: Record<string, JsonSchema>;
  query?: { schema: JsonSchema; required?: string[] };
  body?: JsonSchema;
  /** A body limit of its own (e.g. a hub import), instead of BODY_LIMIT_BYTES. */
  bodyLimit?: (config: Config) => number;
  /** Request headers the route reads, for the OpenAPI document (their checks go in `check`). */
  headerParams?: { name: string; schema: JsonSchema; description: string }[];
  /**
   * Runs an expensive operation (lib/kit/expensive.ts), always or only when the query parameter
   * `whenQuery` is given: a caller whose slots are all taken is refused (429) before anything
   * else about the request is looked at, where the process can tell (one process).
   */
  expensive?: { kind: ExpensiveKind; whenQuery?: string };
  /** Checks across parameters that the schemas cannot express (e.g. `?version` or `If-Match`). */
  check?: (input: RouteInput) => Record<string, string[]> | null;
  /**
   * A subscription served as Server-Sent Events: each result becomes a frame (`frame` says how),
   * with a comment line now and then to keep idle connections open.
   */
  stream?: { frame: (result: Record<string, any>) => { id: string; event: string; data: unknown } };
  /**
   * A text answer instead of JSON when `?<param>=<value>` (e.g. WebVTT captions for `?format=vtt`):
   * the GraphQL query field `field`, with the route's arguments, answers the text itself.
   */
  text?: { param: string; value: string; field: string; contentType: string };
  /**
   * A file sent in pieces, with Range support: `operation` answers `{ content_type, bytes, etag }`,
   * `chunk` (the same variables plus `$offset` and `$length`) answers `{ chunk }` in base64.
   */
  download?: {
    chunk: string;
    contentType: string;
    /**
     * Formats the file is served in, by `?format=` (which wins) or `Accept` (none, or any type:
     * the first): name → content type. The chosen name is put in `query.format` before the
     * operation runs; an `Accept` that matches none is 406 `not_acceptable`.
     */
    formats?: Record<string, string>;
    /**
     * Read while the file is being made (its `bytes` are null: the first request for a format):
     * `query`, with `$offset` and `$length`, answers `{ chunk end }`; sent as it comes, without
     * Range, asked again after a pause growing to `pollMs` while nothing comes, and cut short
     * after `maxWaitMs` without a byte.
     */
    stream?: { query: string; pollMs: (config: Config) => number; maxWaitMs: (config: Config) => number };
    /**
     * Content a user stored: sent as an attachment (named by the answer's `file_name`) with
     * `nosniff` and a sandboxing CSP, so that no browser renders it inline; the answer's
     * `content_type`, when it has one, is sent instead of `contentType`.
     */
    attachment?: boolean;
  };
  /**
   * A raw body of any type (a file to import), streamed through GraphQL a piece at a time and
   * never held whole: the route's operation begins it and answers `{ id }`; the mutation `append`
   * (`id`, `offset`, `chunk` in base64) takes each piece; `finish` (`id`) answers the result, read
   * with the response schema; `abort` (`id`) gives it up when the body breaks off or passes
   * `maxBytes` (413, whose details name that setting). Documented as an `application/octet-stream`
   * body of `description`.
   */
  upload?: {
    append: string;
    finish: string;
    abort: string;
    maxBytes: NumericSetting;
    description: string;
  };
  /** The GraphQL operation it runs (graphql-mapping.ts builds it): its root field, arguments and what it reads. */
  graphql: GraphQLCall;
  /** 202 for commands, 200 for queries. */
  status: 200 | 202;
  location?: (result: Record<string, any>, input: RouteInput) => string;
  /** An ETag header for the answer (e.g. a voice's version, for If-Match). */
  etag?: (result: Record<string, any>) => string;
  /**
   * The body, when it is not the result itself (e.g. a list wrapped as `{ items }`). With
   * `graphql.also`, `result` is every root field's answer by name (`result` the first). A promise
   * is awaited: a large answer may be built a chunk at a time (lib/json-text.ts buildJsonArray).
   */
  present?: (result: any, input: RouteInput) => unknown;
  /** For commands acknowledged as `{ id, message }`: the message; `id` is `result.id`. */
  ack?: string;
  response: JsonSchema;
  errors: ErrorCode[];
  /** The answer carries credentials (tokens, a key, a ticket), so no cache may keep it (`Cache-Control: no-store`). */
  noStore?: boolean;
}

/** The name of a setting whose value is a number (e.g. a limit a refusal names). */
export type NumericSetting = { [K in keyof Config]-?: Config[K] extends number ? K : never }[keyof Config];

/** What the facade hands a mounted route's handler: the only way it reaches a module is GraphQL. */
export interface MountHost {
  graphql: GraphQLClient;
  config: Config;
}

/**
 * An endpoint a module serves beside /api/v1 with a handler of its own, for what the route table
 * cannot state: a compatibility surface that speaks another API (its own path, body parsing and
 * error shape, several operations per request). The facade mounts its router at `path`, documents
 * `openapi` there and answers 405 for the other methods; the handler reaches its module only
 * through GraphQL operations (`host.graphql`), the ones it lists in `operations`.
 */
export interface MountedRoute {
  method: RouteSpec['method'];
  /** Its whole path (not below /api/v1). */
  path: string;
  /** Its OpenAPI operation, as written (its own error shapes: nothing is added). */
  openapi: Record<string, unknown>;
  /** The tag its operation names, listed after the API's own and Health's. */
  tag: { name: string; description: string };
  /** Every GraphQL operation it sends, checked against the composed schema by the tests. */
  operations: readonly string[];
  /** Its router, made once when the facade is built. */
  router: (host: MountHost) => Router;
}

/** What one module hands the facade: its routes, and the schemas and tags the OpenAPI document names. */
export interface ModuleRoutes {
  /** Served and documented in this order (a literal path before a parameter that would match it). */
  routes: RouteSpec[];
  /** Named in the document (components/schemas) and referred to wherever used; a name is used once across modules. */
  schemas?: Record<string, JsonSchema>;
  /** Its OpenAPI tags that have a place in the document's tag list (and a description), in order. */
  tags?: { name: string; description?: string }[];
  /** Its endpoints beside /api/v1 with handlers of their own, documented after the API's own paths. */
  mounted?: MountedRoute[];
}

/** Whether a route's answer holds credentials: the one rule for `Cache-Control: no-store`, served and documented. */
export const carriesCredentials = (route: RouteSpec): boolean => route.noStore ?? false;

/** What answers with credentials are sent with. */
export const NO_STORE_HEADERS = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;
