// Error codes and their HTTP statuses: the single table every layer uses. Subgraphs throw
// AppError (a GraphQLError whose extensions carry the code); the facade turns the code
// into the status from ERROR_STATUS.
import { GraphQLError } from 'graphql';

export const ERROR_STATUS = {
  validation_error: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  /** An `Accept` that names none of the formats a resource is served in. */
  not_acceptable: 406,
  conflict: 409,
  /** Resuming the event stream from a position older than what is kept. */
  resync_required: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  /** A byte range that lies past the end of the file. */
  range_not_satisfiable: 416,
  rate_limit_exceeded: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const DEFAULT_MESSAGES: Record<ErrorCode, string> = {
  validation_error: 'The request is invalid.',
  unauthorized: 'Authentication is required or the credentials are invalid.',
  forbidden: 'You are not allowed to do this.',
  not_found: 'The resource does not exist.',
  method_not_allowed: 'The method is not allowed on this resource.',
  not_acceptable: 'None of the formats named in Accept is served here.',
  conflict: 'The request conflicts with the current state of the resource.',
  resync_required: 'Events from that position are no longer kept; start again without a position and reload your data.',
  payload_too_large: 'The request body is too large.',
  unsupported_media_type: 'The request body must be JSON (Content-Type: application/json).',
  range_not_satisfiable: 'The requested range lies outside the file.',
  rate_limit_exceeded: 'Too many requests; try again later.',
  internal_error: 'An unexpected error occurred.',
  service_unavailable: 'A dependency is unavailable; try again later.',
};

export type ErrorDetails = Record<string, unknown>;

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  details?: ErrorDetails;
}

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(ERROR_STATUS, code);
}

/**
 * The headers an error answer carries, whoever sends it (REST, GraphQL, streams, the speech endpoint):
 * `unauthorized` challenges for a bearer token, and every 429 says when to come back (1 s unless told).
 * Lower-case names: Node's and the Fetch API's headers take them as they are.
 */
export function errorHeaders(code: ErrorCode, retryAfter?: number): Record<string, string> {
  const headers: Record<string, string> = {};
  if (code === 'unauthorized') headers['www-authenticate'] = 'Bearer';
  if (retryAfter !== undefined || code === 'rate_limit_exceeded') headers['retry-after'] = String(retryAfter ?? 1);
  return headers;
}

/** A domain error: safe to show to the caller, mapped to a status by its code. */
export class AppError extends GraphQLError {
  constructor(
    readonly code: ErrorCode,
    message: string = DEFAULT_MESSAGES[code],
    readonly details?: ErrorDetails,
    /** Seconds, for rate_limit_exceeded. */
    readonly retryAfter?: number,
  ) {
    super(message, {
      extensions: {
        code,
        ...(details ? { details } : {}),
        ...(retryAfter !== undefined ? { retryAfter } : {}),
      },
    });
  }
}

export const validationError = (details: Record<string, string[]>, message = 'The request is invalid.') =>
  new AppError('validation_error', message, details);
