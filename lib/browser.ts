// What browsers are told: which other origins may call the API from scripts (CORS), and the
// security headers, with a Content-Security-Policy under which the docs page and the GraphQL
// explorer run from this server's own files only.
import cors from 'cors';
import helmet from 'helmet';
import type { RequestHandler } from 'express';
import type { Config } from './config';

/** The paths a browser app on another origin calls. */
export const CORS_PATHS = ['/api/v1', '/graphql'];

/** Request headers the API reads, and response headers scripts may read. */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Last-Event-ID',
  'X-Request-Id',
  'If-Match',
  'If-None-Match',
  'If-Range',
  'Range',
];
export const CORS_EXPOSED_HEADERS = [
  'Location',
  'Retry-After',
  'X-Request-Id',
  'WWW-Authenticate',
  'Content-Range',
  'ETag',
];

/**
 * CORS for the exact origins in CORS_ORIGINS; undefined when there are none (then no
 * Access-Control-* header is ever sent). Tokens travel in the Authorization header, never in
 * cookies, so credentials are not allowed.
 */
export function corsMiddleware(
  config: Pick<Config, 'CORS_ORIGINS' | 'CORS_MAX_AGE_SECONDS'>,
): RequestHandler | undefined {
  if (!config.CORS_ORIGINS.length) return undefined;
  return cors({
    origin: config.CORS_ORIGINS, // exact string matches only
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    credentials: false,
    maxAge: config.CORS_MAX_AGE_SECONDS,
  });
}

/**
 * helmet's headers; scripts, styles, fonts and connections only from this origin. They are the
 * same for every request (no nonces), so helmet runs once, here, and each request gets its
 * recorded headers: its thirteen middlewares and the policy string built per request were a
 * cost of their own on every answer.
 */
export function securityHeaders(): RequestHandler {
  const headers: [string, string][] = [];
  const recorder = {
    setHeader: (name: string, value: string) => void headers.push([name, String(value)]),
    removeHeader: () => undefined, // X-Powered-By: the apps never send it (`x-powered-by` disabled)
  };
  let done = false;
  helmetMiddleware()({} as never, recorder as never, () => (done = true));
  if (!done) throw new Error('helmet did not finish synchronously: its headers cannot be recorded');
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  };
}

function helmetMiddleware() {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        'default-src': ["'self'"],
        'script-src': ["'self'"],
        // Swagger UI and GraphiQL set inline styles on their elements.
        'style-src': ["'self'", "'unsafe-inline'"],
        'img-src': ["'self'", 'data:'],
        'font-src': ["'self'", 'data:'],
        'connect-src': ["'self'"],
        'object-src': ["'none'"],
        'base-uri': ["'self'"],
        'form-action': ["'self'"],
        'frame-ancestors': ["'none'"],
        // No upgrade-insecure-requests: the service is often reached over plain HTTP on a
        // private network or behind a proxy that terminates TLS.
      },
    },
  });
}
