// The shape of one row of the route table.
import type { ErrorCode } from '../lib/errors';
import type { JsonSchema } from './schemas';

export interface RouteInput {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
}

export interface RouteSpec {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Below /api/v1, with `:name` parameters. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  /** Needs `Authorization: Bearer <access token>`; the token is passed on to GraphQL. */
  auth: boolean;
  params?: Record<string, JsonSchema>;
  query?: { schema: JsonSchema; required?: string[] };
  body?: JsonSchema;
  /** The GraphQL operation; its root field is aliased `result` and its fields named as in REST. */
  operation: string;
  variables?: (input: RouteInput) => Record<string, unknown>;
  /** 202 for commands, 200 for queries. */
  status: 200 | 202;
  location?: (result: Record<string, any>, input: RouteInput) => string;
  /** The body, when it is not the result itself (e.g. a list wrapped as `{ items }`). */
  present?: (result: any) => unknown;
  /** For commands acknowledged as `{ id, message }`: the message; `id` is `result.id`. */
  ack?: string;
  response: JsonSchema;
  errors: ErrorCode[];
}
