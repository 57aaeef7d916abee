// How the facade reads request bodies: JSON only (415 otherwise), within BODY_LIMIT_BYTES or the
// route's own limit, large ones parsed off the event loop (lib/large-bodies.ts); an upload's raw
// body is left to its handler (upload-handler.ts).
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Config } from '../lib/config';
import { jsonBody } from '../lib/large-bodies';
import type { RouteSpec } from './route-spec';
import { sendError } from './errors';

const hasBody = (req: Request) =>
  Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;

/** A route's path as a pattern that matches a request's (`:name` one segment, a trailing slash allowed). */
export const pathPattern = (p: string) => new RegExp(`^${p.replace(/:(\w+)/g, '[^/]+')}/?$`);

/** The body parsers of the route table, in order: the media type check, then the parser of the route's limit. */
export function bodyParsers(routes: readonly RouteSpec[], config: Config): RequestHandler[] {
  const uploads = routes
    .filter((r) => r.upload)
    .map((r) => ({ pattern: pathPattern(r.path), method: r.method.toUpperCase() }));
  const isUpload = (req: Request) => uploads.some((u) => u.method === req.method && u.pattern.test(req.path));
  const mediaType = (req: Request, res: Response, next: NextFunction) => {
    if (isUpload(req)) return next();
    if (hasBody(req) && !req.is(['application/json', 'application/*+json']))
      return sendError(res, 'unsupported_media_type');
    next();
  };
  const jsonParser = (limit: number) =>
    jsonBody(config, limit, (res, e) => sendError(res, e.code, e.message, e.details, e.retryAfter));
  const defaultParser = jsonParser(config.BODY_LIMIT_BYTES);
  // Each route's body limit: BODY_LIMIT_BYTES, or its own (a hub import takes a whole canvas).
  const ownLimits = routes
    .filter((r) => r.bodyLimit)
    .map((r) => ({
      pattern: pathPattern(r.path),
      method: r.method.toUpperCase(),
      parser: jsonParser(r.bodyLimit!(config)),
    }));
  const parse = (req: Request, res: Response, next: NextFunction) => {
    if (isUpload(req)) return next();
    const own = ownLimits.find((o) => o.method === req.method && o.pattern.test(req.path));
    (own?.parser ?? defaultParser)(req, res, next);
  };
  return [mediaType, parse];
}
