// Turns whatever a resolver or GraphQL itself threw into an error with one of our codes
// (lib/errors.ts) in `extensions.code`. Used by every subgraph and by the gateway.
import type { NextFunction, Request, Response } from 'express';
import { GraphQLError, GraphQLFormattedError, Kind } from 'graphql';
import { AppError, DEFAULT_MESSAGES, ERROR_STATUS, ErrorCode, isErrorCode } from './errors';
import { sendJson } from './http-app';
import type { Logger } from './logger';

interface ClassValidatorError {
  property: string;
  constraints?: Record<string, string>;
  children?: ClassValidatorError[];
}

/** class-validator's nested errors as `{ field: [messages] }`, with nested inputs flattened. */
function validationDetails(errors: ClassValidatorError[], into: Record<string, string[]> = {}) {
  for (const e of errors) {
    if (e.constraints) (into[e.property] ??= []).push(...Object.values(e.constraints));
    if (e.children?.length) validationDetails(e.children, into);
  }
  return into;
}

// Driver codes that mean "the database is not there right now", not "this request is wrong".
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_LOCK_WAIT_TIMEOUT',
  'SQLITE_BUSY',
  // A server going down mid-query, a name that does not resolve for now, a queue after a fatal error.
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  'ECONNABORTED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  'PROTOCOL_ENQUEUE_AFTER_QUIT',
  // The next hop (lib/http-client.ts, undici): connection lost or not made in time, no answer in
  // time, an answer cut short (on a connection the server meant to close, undici names it by the
  // length that did not arrive; a chunked one by the parser's state).
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
  'HPE_INVALID_EOF_STATE',
]);

// The next hop's own statuses for "not there right now" (lib/http-client.ts's postGraphQL keeps them).
const UNAVAILABLE_STATUSES = new Set([502, 503, 504]);

// NATS (the event log and object store on JetStream, lib/event-backends.ts, lib/blob-stores/nats.ts):
// no answer in time, no responder (JetStream not there), the connection lost or closed. The
// multi-host test saw every authenticated request answer 500 while JetStream was down (the
// revocation check reads the stream's head): the server is unreachable, a 503.
const UNAVAILABLE_NAMES = new Set([
  'TimeoutError',
  'NoResponders', // NoRespondersError's name
  'ConnectionError',
  'ClosedConnectionError',
  'DrainingConnectionError',
]);

/** True when the error (or what it wraps) says a dependency is unreachable: a 503, not a 500. */
export function isUnavailableError(err: unknown): boolean {
  type Wrapped = {
    code?: unknown;
    status?: unknown;
    name?: unknown;
    message?: unknown;
    driverError?: unknown;
    originalError?: unknown;
    cause?: unknown;
  };
  let e = err as Wrapped | undefined;
  for (let depth = 0; e && depth < 5; depth++) {
    if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
    if (typeof e.status === 'number' && UNAVAILABLE_STATUSES.has(e.status)) return true;
    if (typeof e.name === 'string' && UNAVAILABLE_NAMES.has(e.name)) return true;
    if (
      typeof e.message === 'string' &&
      /connect ECONNREFUSED|Connection lost|Pool is closed|closed state/i.test(e.message)
    )
      return true;
    e = (e.driverError ?? e.originalError ?? e.cause) as Wrapped | undefined;
  }
  return false;
}

// Lock conflicts a transaction loses to another one (MariaDB/MySQL: deadlock 1213, lock wait
// timeout 1205): the whole transaction was (or is, by the caller) rolled back and may be run again.
const LOCK_CONFLICT_CODES = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT']);
const LOCK_CONFLICT_ERRNOS = new Set([1213, 1205]);

/** True when the error (or what it wraps) is a transient lock conflict: run the transaction again. */
export function isLockConflictError(err: unknown): boolean {
  type Wrapped = { code?: unknown; errno?: unknown; driverError?: unknown; originalError?: unknown; cause?: unknown };
  let e = err as Wrapped | undefined;
  for (let depth = 0; e && depth < 5; depth++) {
    if (typeof e.code === 'string' && LOCK_CONFLICT_CODES.has(e.code)) return true;
    if (typeof e.errno === 'number' && LOCK_CONFLICT_ERRNOS.has(e.errno)) return true;
    e = (e.driverError ?? e.originalError ?? e.cause) as Wrapped | undefined;
  }
  return false;
}

/**
 * A variable's value that does not fit its type. graphql-js keeps the scalar's own error as its
 * `originalError`, so it is told apart by its one node, the variable's definition (as Apollo Server
 * tells it apart to mark it BAD_USER_INPUT).
 */
function isVariableValueError(e: GraphQLError): boolean {
  return e.nodes?.length === 1 && e.nodes[0].kind === Kind.VARIABLE_DEFINITION;
}

const GRAPHQL_INPUT_CODES = new Set([
  'GRAPHQL_VALIDATION_FAILED',
  'GRAPHQL_PARSE_FAILED',
  'BAD_USER_INPUT',
  'PERSISTED_QUERY_NOT_FOUND',
]);

/** The code a raw GraphQL error should carry; `internal_error` for anything unexpected. */
export function normalizeError(
  formatted: GraphQLFormattedError,
  original: unknown,
  logger?: Logger,
): GraphQLFormattedError {
  const ext = formatted.extensions ?? {};
  const code = ext.code;
  if (isErrorCode(code)) {
    // Already one of ours (from this process or a subgraph): keep only what is meant for callers.
    const { code: _c, details, retryAfter } = ext as Record<string, unknown>;
    return {
      message: formatted.message,
      path: formatted.path,
      extensions: { code, ...(details ? { details } : {}), ...(retryAfter !== undefined ? { retryAfter } : {}) },
    };
  }
  const validationErrors = (ext as { validationErrors?: ClassValidatorError[] }).validationErrors;
  if (Array.isArray(validationErrors)) {
    return {
      message: DEFAULT_MESSAGES.validation_error,
      path: formatted.path,
      extensions: { code: 'validation_error', details: validationDetails(validationErrors) },
    };
  }
  if (typeof code === 'string' && GRAPHQL_INPUT_CODES.has(code)) {
    return {
      message: formatted.message,
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: 'validation_error' },
    };
  }
  if (code === 'UNAUTHENTICATED')
    return { message: DEFAULT_MESSAGES.unauthorized, path: formatted.path, extensions: { code: 'unauthorized' } };
  if (code === 'FORBIDDEN')
    return { message: DEFAULT_MESSAGES.forbidden, path: formatted.path, extensions: { code: 'forbidden' } };
  if (
    original instanceof GraphQLError &&
    !original.path &&
    (!original.originalError || isVariableValueError(original))
  ) {
    // Errors of the document itself (unknown field, bad variable): the caller's mistake.
    return { message: formatted.message, locations: formatted.locations, extensions: { code: 'validation_error' } };
  }
  const cause = (original as GraphQLError)?.originalError ?? original;
  if (isUnavailableError(cause)) {
    logger?.warn({ err: cause }, 'dependency unavailable');
    return {
      message: DEFAULT_MESSAGES.service_unavailable,
      path: formatted.path,
      extensions: { code: 'service_unavailable' },
    };
  }
  logger?.error({ err: cause }, 'unexpected error in resolver');
  return { message: DEFAULT_MESSAGES.internal_error, path: formatted.path, extensions: { code: 'internal_error' } };
}

/** A GraphQL result of one error of ours: what an operation refused as a whole answers. */
export function errorResult(e: AppError): { errors: GraphQLFormattedError[] } {
  return { errors: [normalizeError(e.toJSON(), e)] };
}

/** What Express's body parser (raw-body, http-errors) puts on the errors it raises; any of it may be missing. */
export interface BodyReadError {
  status?: number;
  statusCode?: number;
  type?: string;
  limit?: number;
  charset?: string;
  code?: string;
  expose?: boolean;
  message?: unknown;
}

/** A /graphql body that cannot be read (bad JSON, too large, undecodable Content-Encoding): a 4xx GraphQL error. */
export function graphqlBodyError(err: BodyReadError | undefined, _req: Request, res: Response, next: NextFunction) {
  const status: number = err?.status ?? err?.statusCode ?? 500;
  if (res.headersSent || status >= 500) return next(err);
  const [code, message]: [ErrorCode, string] =
    err?.type === 'entity.too.large'
      ? ['payload_too_large', `The request body is larger than ${err.limit} bytes.`]
      : err?.type === 'entity.parse.failed'
        ? ['validation_error', 'The request body is not valid JSON.']
        : err?.type === 'encoding.unsupported' || err?.type === 'charset.unsupported'
          ? ['unsupported_media_type', String(err.message)]
          : ['validation_error', `The request body could not be read: ${String(err?.message)}.`];
  sendJson(res, ERROR_STATUS[code], errorResult(new AppError(code, message)));
}

export { AppError };
