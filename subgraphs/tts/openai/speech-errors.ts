// OpenAI's error shape, `{ error: { message, type, param, code } }`, for the speech endpoint:
// its own refusals, the GraphQL errors of its operations, and what the body parser refused.
import type { NextFunction, Request, Response } from 'express';
import type { GraphQLFormattedError } from 'graphql';
import type { Config } from '../../../lib/config';
import { DEFAULT_MESSAGES, ERROR_STATUS, ErrorCode, errorHeaders, isErrorCode } from '../../../lib/errors';
import { sendJson } from '../../../lib/http-app';
import { snakeCase } from '../../../lib/naming';

export function sendOpenAiError(
  res: Response,
  code: ErrorCode,
  message: string = DEFAULT_MESSAGES[code],
  param: string | null = null,
  retryAfter?: number,
): void {
  if (res.headersSent) return;
  // Every 429 says when to come back (OpenAI's SDKs wait for it before they retry).
  res.setHeaders(new Map(Object.entries(errorHeaders(code, retryAfter))));
  sendJson(res, ERROR_STATUS[code], { error: { message, type: code, param, code } });
}

/** The body field a GraphQL argument came from. */
const PARAMS = new Map([
  ['text', 'input'],
  ['voice', 'voice'],
  ['speed', 'speed'],
  ['voice_id', 'voice'],
]);

/**
 * A GraphQL error in OpenAI's terms. `details` are a field's messages only for validation errors;
 * other codes carry figures there (a queue's `limit` and `active`), which are not about a field.
 */
export function openAiError(error: GraphQLFormattedError): {
  code: ErrorCode;
  message: string;
  param: string | null;
  retryAfter?: number;
} {
  const ext = (error.extensions ?? {}) as { code?: unknown; details?: unknown; retryAfter?: unknown };
  const code: ErrorCode = isErrorCode(ext.code) ? ext.code : 'internal_error';
  const retryAfter = typeof ext.retryAfter === 'number' ? ext.retryAfter : undefined;
  if (code === 'internal_error') return { code, message: DEFAULT_MESSAGES.internal_error, param: null };
  const [key, messages] =
    code === 'validation_error' && ext.details && typeof ext.details === 'object'
      ? (Object.entries(ext.details)[0] ?? [])
      : [];
  if (key === undefined || !Array.isArray(messages)) return { code, message: error.message, param: null, retryAfter };
  const field = snakeCase(key);
  const param = PARAMS.get(field) ?? field;
  return { code, message: `${param}: ${messages.map(String).join('; ')}`, param, retryAfter };
}

/** What the body parser (or anything else) refused, in OpenAI's shape too: never REST's, never a 500 for input. */
export const refusedInOpenAiShape =
  (config: Config) =>
  (
    err: { type?: string; status?: number; expose?: boolean; message?: string },
    req: Request,
    res: Response,
    _next: NextFunction,
  ) => {
    const status = Number(err?.status);
    if (err?.type === 'entity.too.large')
      return sendOpenAiError(
        res,
        'payload_too_large',
        `The request body is larger than ${config.BODY_LIMIT_BYTES} bytes.`,
      );
    if (err?.type === 'entity.parse.failed')
      return sendOpenAiError(res, 'validation_error', 'The request body is not valid JSON.');
    if (status >= 400 && status < 500) {
      const code =
        status === 415 ? 'unsupported_media_type' : status === 413 ? 'payload_too_large' : 'validation_error';
      return sendOpenAiError(
        res,
        code,
        err.expose && typeof err.message === 'string' ? err.message : DEFAULT_MESSAGES[code],
      );
    }
    req.log.error({ err }, 'speech request failed');
    if (res.headersSent) return void res.destroy();
    sendOpenAiError(res, 'internal_error');
  };
