// The JSON Schemas every module's routes share (the error object, a command's acknowledgement, a
// page, trimmed text, an id in the path), and the helpers to write them. A module's own bodies are
// declared in its routes.ts (subgraphs/<name>/routes.ts); they are used to validate requests, to
// write the OpenAPI document and (graphql-mapping.ts) to read each answer from GraphQL.
import { ERROR_STATUS } from '../lib/errors';

export type JsonSchema = Record<string, unknown>;

export const ErrorObject: JsonSchema = {
  type: 'object',
  required: ['error', 'message'],
  properties: {
    error: { type: 'string', description: 'Error code', enum: Object.keys(ERROR_STATUS) },
    message: { type: 'string', description: 'Human-readable message' },
    details: { type: 'object', additionalProperties: true, description: 'Extra information, e.g. messages per field' },
  },
};

export const CommandAck: JsonSchema = {
  type: 'object',
  required: ['id', 'message'],
  properties: { id: { type: 'string', format: 'uuid' }, message: { type: 'string' } },
};

/** A list a page at a time: `{ items, next_cursor }`. */
export const pageSchema = (item: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['items', 'next_cursor'],
  properties: {
    items: { type: 'array', items: item },
    next_cursor: {
      type: 'string',
      nullable: true,
      description: 'Pass as `cursor` for the next page; null on the last page',
    },
  },
});

/**
 * Text whose length is counted once surrounding white space is trimmed (the service stores it
 * trimmed): validation.ts trims before it checks, and the document states the rule as a pattern.
 */
export const trimmedText = (minLength: number, maxLength: number, description: string): JsonSchema => ({
  type: 'string',
  minLength,
  maxLength,
  'x-trimmed': true,
  description,
});

export const uuidParam: JsonSchema = { type: 'string', format: 'uuid' };

/**
 * A PATCH body: each of `fields` optional, a field left out stays as it is, and at least one known
 * field given (unknown ones are ignored, so they do not count); `extra` adds to the schema (a description).
 */
export const patchBody = (fields: Record<string, JsonSchema>, extra: JsonSchema = {}): JsonSchema => ({
  type: 'object',
  additionalProperties: true,
  ...extra,
  anyOf: Object.keys(fields).map((field) => ({ required: [field] })),
  'x-one-of-error': { field: 'body', message: `give at least one of ${Object.keys(fields).join(', ')}` },
  properties: fields,
});

export const Health: JsonSchema = {
  type: 'object',
  required: ['status'],
  properties: {
    status: { type: 'string', enum: ['ok', 'ready', 'not_ready'] },
    checks: { type: 'object', additionalProperties: { type: 'string', enum: ['up', 'down', 'degraded'] } },
    details: {
      type: 'object',
      additionalProperties: true,
      description: 'Figures behind the checks, e.g. `synthesis.live_workers`, `synthesis.oldest_queued_age_seconds`',
    },
  },
};

/** The schemas of the facade's own answers that the document names; each module hands the facade its own. */
export const FACADE_SCHEMAS: Record<string, JsonSchema> = { ErrorObject, CommandAck, Health };
