// Sending the error object, and turning GraphQL errors into it. The status of
// an error always comes from lib/errors.ts.
import type { Response } from 'express';
import type { GraphQLFormattedError } from 'graphql';
import { DEFAULT_MESSAGES, ERROR_STATUS, ErrorBody, ErrorCode, ErrorDetails, isErrorCode } from '../lib/errors';
import { sendJson } from '../lib/http-app';
import { snakeKeys } from '../lib/naming';

export function sendError(
  res: Response,
  code: ErrorCode,
  message = DEFAULT_MESSAGES[code],
  details?: ErrorDetails,
  retryAfter?: number,
): void {
  if (res.headersSent) return;
  if (code === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer');
  if (retryAfter !== undefined) res.setHeader('Retry-After', String(retryAfter));
  const body: ErrorBody = { error: code, message, ...(details ? { details } : {}) };
  sendJson(res, ERROR_STATUS[code], body);
}

/** The first error decides; field names in details follow the REST naming (snake_case). */
export function sendGraphQLError(res: Response, errors: readonly GraphQLFormattedError[]): void {
  const first = errors[0];
  const ext = (first.extensions ?? {}) as { code?: unknown; details?: ErrorDetails; retryAfter?: number };
  const code: ErrorCode = isErrorCode(ext.code) ? ext.code : 'internal_error';
  const message = code === 'internal_error' ? DEFAULT_MESSAGES.internal_error : first.message;
  const details = ext.details ? snakeKeys(ext.details) : undefined;
  sendError(res, code, message, details, ext.retryAfter);
}
