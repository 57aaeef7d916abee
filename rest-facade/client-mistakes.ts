// What Express and its body parser raise for what the client sent, answered as error objects.
import type { Request, Response } from 'express';
import type { Config } from '../lib/config';
import type { BodyReadError } from '../lib/graphql-errors';
import { DEFAULT_MESSAGES, ERROR_STATUS, ErrorCode } from '../lib/errors';
import { sendError } from './errors';

/** Encodings the JSON body parser inflates. */
const CONTENT_ENCODINGS = ['identity', 'gzip', 'deflate', 'br'];

/**
 * Errors raised by Express and its body parser for what the client sent: answered with the
 * error object and a 4xx, never a 500. True when it was one of these and has been answered.
 */
export function clientMistake(err: BodyReadError | undefined, req: Request, res: Response, config: Config): boolean {
  const encoding =
    String(req.headers['content-encoding'] ?? 'identity')
      .trim()
      .toLowerCase() || 'identity';
  const status = Number(err?.status ?? err?.statusCode);
  const encodingDetails = {
    content_encoding: [`must be one of ${CONTENT_ENCODINGS.join(', ')}, and the body encoded with it`],
  };
  if (err?.type === 'entity.too.large') {
    const limit = Number((err as { limit?: number }).limit) || config.BODY_LIMIT_BYTES;
    sendError(res, 'payload_too_large', `The request body is larger than ${limit} bytes.`);
  } else if (err?.type === 'entity.parse.failed') {
    sendError(res, 'validation_error', 'The request body is not valid JSON.', { body: ['is not valid JSON'] });
  } else if (err?.type === 'charset.unsupported') {
    sendError(
      res,
      'unsupported_media_type',
      `The charset "${String(err.charset)}" is not supported; send JSON in UTF-8.`,
      {
        content_type: ['charset must be utf-8'],
      },
    );
  } else if (err?.type === 'encoding.unsupported') {
    sendError(res, 'unsupported_media_type', `Content-Encoding "${encoding}" is not supported.`, encodingDetails);
  } else if (err instanceof URIError) {
    // Express decodes path parameters with decodeURIComponent: %zz, a lone %, a cut-off or overlong UTF-8 sequence.
    sendError(res, 'validation_error', 'The request path has malformed percent-encoding.', {
      path: ['%XX escapes must spell valid UTF-8'],
    });
  } else if (status >= 400 && status < 500 && encoding !== 'identity' && /^(Z_|ERR_)/.test(String(err?.code ?? ''))) {
    // A body that says it is gzip, deflate or br but is not.
    sendError(
      res,
      'unsupported_media_type',
      `The request body could not be decoded as Content-Encoding "${encoding}".`,
      encodingDetails,
    );
  } else if (status >= 400 && status < 500) {
    // Anything else a parser refused (an aborted body, a wrong Content-Length, …).
    const code =
      (Object.keys(ERROR_STATUS) as ErrorCode[]).find((c) => ERROR_STATUS[c] === status) ?? 'validation_error';
    sendError(res, code, err?.expose && typeof err.message === 'string' ? err.message : DEFAULT_MESSAGES[code]);
  } else {
    return false;
  }
  return true;
}
