// Sending the error object, and turning GraphQL errors into it. The status of
// an error always comes from lib/errors.ts.
import type { Response } from 'express';
import type { GraphQLFormattedError } from 'graphql';
import {
  DEFAULT_MESSAGES,
  ERROR_STATUS,
  ErrorBody,
  ErrorCode,
  ErrorDetails,
  errorHeaders,
  isErrorCode,
} from '../lib/errors';
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
  res.setHeaders(new Map(Object.entries(errorHeaders(code, retryAfter))));
  const body: ErrorBody = { error: code, message, ...(details ? { details } : {}) };
  sendJson(res, ERROR_STATUS[code], body);
}

/**
 * Field names in details follow the REST naming (snake_case), except paths into a JSON Canvas
 * document (`canvas.edges.0.fromNode`): those name the fields as the client's canvas spells them.
 */
function restDetailKeys(details: ErrorDetails): ErrorDetails {
  const canvasPaths = Object.keys(details).filter((key) => key.startsWith('canvas.'));
  if (!canvasPaths.length) return snakeKeys(details);
  const converted = snakeKeys(Object.fromEntries(Object.entries(details).filter(([k]) => !k.startsWith('canvas.'))));
  return { ...converted, ...Object.fromEntries(canvasPaths.map((k) => [k, details[k]])) };
}

/** The first error decides; field names in details follow the REST naming (snake_case). */
export function sendGraphQLError(res: Response, errors: readonly GraphQLFormattedError[]): void {
  const first = errors[0];
  const ext = (first.extensions ?? {}) as { code?: unknown; details?: ErrorDetails; retryAfter?: number };
  const code: ErrorCode = isErrorCode(ext.code) ? ext.code : 'internal_error';
  const message = code === 'internal_error' ? DEFAULT_MESSAGES.internal_error : first.message;
  const details = ext.details ? restDetailKeys(ext.details) : undefined;
  sendError(res, code, message, details, ext.retryAfter);
}
