// The HTTP side of /graphql/stream: which requests graphql-sse is handed, and how an operation
// refused before its stream starts is answered (a plain HTTP error with the GraphQL error body).
import type { NextFunction, Request, Response } from 'express';
import { AppError, ERROR_STATUS, errorHeaders, isErrorCode } from '../lib/errors';
import { errorResult } from '../lib/graphql-errors';
import { sendJson } from '../lib/http-app';
import type { FormattedResult } from '../lib/operation-pipeline';

/**
 * Only graphql-sse's distinct-connections mode is served: each operation is one request that asks
 * for `text/event-stream` and gets its own stream. Its single-connection mode (a stream reserved
 * by PUT, operations POSTed beside it) would otherwise answer an empty 404.
 */
export function distinctConnectionsOnly(req: Request, res: Response, next: NextFunction) {
  if (req.method === 'OPTIONS') return next(); // CORS preflights are answered before (lib/browser.ts)
  if (req.method !== 'GET' && req.method !== 'POST') {
    res.setHeader('Allow', 'GET, POST');
    return sendJson(
      res,
      405,
      errorResult(
        new AppError(
          'method_not_allowed',
          `${req.method} is not served: /graphql/stream serves each operation on a connection of its own (POST, or GET with ?query=, and Accept: text/event-stream); single-connection mode is not served.`,
        ),
      ),
    );
  }
  const accept = req.headers.accept ?? '';
  if (!/(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept)) {
    return sendJson(
      res,
      400,
      errorResult(
        new AppError(
          'validation_error',
          'Ask for the event stream with Accept: text/event-stream: /graphql/stream answers each operation as a stream of its own (GraphQL over SSE, distinct connections). Queries and mutations go to /graphql.',
        ),
      ),
    );
  }
  // graphql-sse compares the header as a whole.
  req.headers.accept = 'text/event-stream';
  next();
}

/** graphql-sse's answer for an operation refused before its stream starts: [body, init]. */
export function refusedBeforeStream(
  result: FormattedResult,
): [string, { status: number; statusText: string; headers: Record<string, string> }] {
  const first = result.errors?.[0]?.extensions;
  const code = (first?.code ?? 'internal_error') as keyof typeof ERROR_STATUS;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  // retryAfter: a number, set by AppError.
  if (isErrorCode(code)) Object.assign(headers, errorHeaders(code, first?.retryAfter as number | undefined));
  return [JSON.stringify(result), { status: isErrorCode(code) ? ERROR_STATUS[code] : 500, statusText: code, headers }];
}
