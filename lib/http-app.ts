// What every HTTP process here starts with (facade, gateway, subgraph): request ids,
// JSON access logs, the proxy setting, and the two health endpoints.
import type http from 'node:http';
import { isIP } from 'node:net';
import express, { Express, NextFunction, Request, Response } from 'express';
import { CORS_PATHS, corsMiddleware, securityHeaders } from './browser';
import type { Config } from './config';
import type { Logger } from './logger';
import { answerJson, jsonBody } from './json-text';
import { httpRequestDuration, metricsHandler, secondsSince } from './metrics';
import { REQUEST_ID_HEADER, requestIdFrom, requestScope } from './request-context';
import { serveTraced } from './tracing';

/** `degraded`: it works, but not fully (e.g. no synthesis worker alive); readiness stays 200. */
export type CheckState = 'up' | 'down' | 'degraded';
export type Checks = Record<string, CheckState>;

/** Checks, and figures that explain them (`details.synthesis.live_workers`, …). */
export interface ReadinessReport {
  checks: Checks;
  details?: Record<string, unknown>;
}

export const isReadinessReport = (r: Checks | ReadinessReport): r is ReadinessReport =>
  typeof (r as ReadinessReport).checks === 'object';

/** Express's "trust proxy" from TRUST_PROXY: `true`/`false`, a hop count, or addresses/names (docs/client-addresses.md). */
function trustProxy(value: string): boolean | number | string {
  if (value === 'true' || value === 'false') return value === 'true';
  return /^\d+$/.test(value) ? Number(value) : value;
}

/**
 * The client address: the farthest address in X-Forwarded-For that trusted hops vouch for, as
 * Express reads it, but only while each one parses as an IP. A claim that does not (`<script>`,
 * `host:port`) is ignored and logged: the hop that sent it is the client. Addresses end up in
 * sessions, rate-limit keys and events that users and administrators read.
 */
function forwardedClientAddress(req: Request): string {
  let address = req.socket.remoteAddress ?? '';
  // req.ips: farthest first, up to the first address not trusted; walked from our side outwards.
  const claims = req.ips;
  for (let i = claims.length - 1; i >= 0; i--) {
    if (!isIP(claims[i])) {
      req.log.warn(
        { forwarded_for: claims[i].slice(0, 100), used: address },
        'ignored a forwarded client address that is not an IP',
      );
      break;
    }
    address = claims[i];
  }
  return address;
}

export interface BaseAppOptions {
  config: Pick<
    Config,
    | 'TRUST_PROXY'
    | 'CORS_ORIGINS'
    | 'CORS_MAX_AGE_SECONDS'
    | 'METRICS_PORT'
    | 'METRICS_ENABLED'
    | 'METRICS_PUBLIC'
    | 'NODE_ENV'
  >;
  logger: Logger;
  /** Readiness: 503 when an entry is `down`, else 200 (`degraded` entries included). */
  checks: () => Promise<Checks | ReadinessReport>;
  /** Where else the health endpoints are served besides the root (the facade: /api/v1). */
  healthPrefixes?: string[];
  /** Serves browsers (the facade, the gateway): CORS for CORS_ORIGINS on the API paths. */
  browsers?: boolean;
}

export const HEALTH_PATHS = ['/health/live', '/health/ready'];

declare module 'http' {
  interface IncomingMessage {
    /** The process's logger with the request's `request_id`: made when first asked for. */
    log: Logger;
  }
}

/**
 * The route template a request matched (never the raw path, which would make a label per id).
 * Express matches paths regardless of case, and `baseUrl` is the mount's part of the path as it
 * was sent: lower-cased, it is the mount's template (no mount here has parameters). A mount's own
 * root route (`router.post('/')` at /v1/audio/speech) is the mount's path, without a trailing
 * slash. What no route or mount took is one value, so that the labels are bounded by the code,
 * not by clients. Express leaves `req.route` set after a route passes a request on (`next()`):
 * a route must not pass on what another answers, or its template would label that answer.
 */
export function routeLabel(req: Request): string {
  // `baseUrl` is set only while a router handles the request: a request no router took has none.
  const base = (req.baseUrl ?? '').toLowerCase();
  const route = req.route as { path: unknown } | undefined; // Express types it `any`
  if (route) return base && route.path === '/' ? base : `${base}${String(route.path)}`;
  return base || 'unmatched'; // middleware mounted at a path (/graphql), or nothing matched
}

/**
 * A listener on a request's or response's events. An exception thrown there escapes every
 * handler and ends the process; here it is logged, so that no request can take a process down.
 */
export function afterResponse(logger: Logger, listener: () => void): () => void {
  return () => {
    try {
      listener();
    } catch (err) {
      logger.error({ err }, 'a response listener failed');
    }
  };
}

/** The methods served anywhere here; any other is one label value. */
const SERVED_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
export const methodLabel = (method: string | undefined) => (method && SERVED_METHODS.has(method) ? method : 'other');

/**
 * The request's line: method, route template, status, duration and, for a request that carried
 * a token and was not refused, the user it names (every hop behind checks the signature). The
 * request itself, headers included (Authorization redacted), only at debug; its URL never with a
 * query string on /graphql, where GET requests carry operations and their variables.
 */
function requestLine(req: Request, res: http.ServerResponse, durationMs: number, logger: Logger) {
  const userId = res.statusCode < 400 ? tokenSubject(req.headers.authorization) : undefined;
  return {
    method: req.method,
    route: routeLabel(req),
    status: res.statusCode,
    duration_ms: durationMs,
    ...(userId ? { user_id: userId } : {}),
    ...(logger.isLevelEnabled('debug')
      ? { req: { method: req.method, url: loggedUrl(req), headers: req.headers, remoteAddress: req.ip } }
      : {}),
  };
}

const loggedUrl = (req: Request) =>
  req.originalUrl.startsWith('/graphql') ? req.originalUrl.split('?')[0] : req.originalUrl;

/** The `sub` a bearer JWT claims, read without verifying it: for log lines only. */
function tokenSubject(authorization: string | undefined): string | undefined {
  const payload = authorization?.startsWith('Bearer ') ? authorization.split('.')[1] : undefined;
  if (!payload) return undefined;
  try {
    const { sub } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: unknown };
    return typeof sub === 'string' && sub.length <= 64 ? sub : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A JSON answer, written directly. Express's res.json parsed the media type again to add its
 * charset, turned the text into a Buffer and checked freshness on every answer: a few per cent
 * of a session read (issue 14). Routes with an ETag check freshness themselves (`req.fresh`).
 */
export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  // Top-level values serialised ahead of time (./json-text.ts) are written as they are, not serialised again.
  const parts = jsonBody(body);
  if (parts) {
    res.statusCode = status;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader(
      'Content-Length',
      parts.reduce((n, p) => n + p.length, 0),
    );
    for (const part of parts) res.write(part);
    return void res.end();
  }
  // A GraphQL answer holding kept arrays (./plain-lists.ts) gets their texts as they are.
  sendJsonText(res, status, answerJson(body));
}

/** JSON already made, written as sendJson writes it. */
export function sendJsonText(res: http.ServerResponse, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text)); // also on a HEAD answer, which has no body
  res.end(text);
}

export function createBaseApp({
  config,
  logger,
  checks,
  healthPrefixes = [],
  browsers = false,
}: BaseAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', trustProxy(config.TRUST_PROXY));
  app.set('json spaces', 0);

  // `req.log`, made only for the requests that log something of their own (errors, mostly): a
  // child logger per request cost more than the line below.
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: Request) {
      const log = logger.child({ request_id: this.headers[REQUEST_ID_HEADER] });
      Object.defineProperty(this, 'log', { value: log, configurable: true, writable: true });
      return log;
    },
  });
  // req.ip, read once per request (the warning above is logged once).
  Object.defineProperty(app.request, 'ip', {
    configurable: true,
    get(this: Request) {
      const ip = forwardedClientAddress(this);
      Object.defineProperty(this, 'ip', { value: ip, configurable: true, writable: true });
      return ip;
    },
  });
  const metrics = config.METRICS_ENABLED;
  app.use((req: Request, res: Response, next: NextFunction) => {
    const id = requestIdFrom(req.headers);
    req.headers[REQUEST_ID_HEADER] = id;
    res.setHeader('X-Request-Id', id);
    // The access log: one line per request when it ends (finished or cut off), built only at a
    // level that writes it. Health checks and scrapes are left out.
    const start = process.hrtime.bigint();
    const logged = !(req.url === '/metrics' || req.url.startsWith('/health'));
    // Tracing on: the request's trace (and its server span when sampled), which the rest of the
    // request runs in (lib/tracing/). Health checks and scrapes would drown the traces that matter.
    const trace = logged ? serveTraced(req, res, routeLabel) : undefined;
    res.once(
      'close',
      afterResponse(logger, () => {
        const seconds = secondsSince(start);
        // Answered: finished, or a stream the client closed (its status was sent). A request cut
        // off before any answer has no status to count.
        if (metrics && (res.writableFinished || res.headersSent)) {
          httpRequestDuration.observe(
            {
              method: methodLabel(req.method),
              route: routeLabel(req),
              status_class: `${Math.floor(res.statusCode / 100)}xx`,
            },
            seconds,
          );
        }
        if (!logged) return;
        const failed = res.statusCode >= 500;
        if (!logger.isLevelEnabled(failed ? 'error' : 'info')) return;
        const line: Record<string, unknown> = {
          request_id: id,
          ...(trace ? { trace_id: trace.traceId, span_id: trace.spanId } : {}),
          ...requestLine(req, res, Math.round(seconds * 1000), logger),
        };
        if (failed)
          logger.error({ ...line, err: new Error(`failed with status code ${res.statusCode}`) }, 'request failed');
        else logger.info(line, 'request completed');
      }),
    );
    if (trace) requestScope.run(trace, next);
    else next();
  });
  app.use(securityHeaders());
  const cors = browsers ? corsMiddleware(config) : undefined;
  // Before every route, so that a preflight (OPTIONS) is answered here.
  if (cors) app.use(CORS_PATHS, cors);

  const live = (_req: Request, res: Response) => res.json({ status: 'ok' });
  const ready = async (_req: Request, res: Response) => {
    const answer = await checks();
    const report = isReadinessReport(answer) ? answer : { checks: answer };
    const ok = Object.values(report.checks).every((v) => v !== 'down');
    res.status(ok ? 200 : 503).json({
      status: ok ? 'ready' : 'not_ready',
      checks: report.checks,
      ...(report.details ? { details: report.details } : {}),
    });
  };
  // With METRICS_PORT set, metrics are served there instead (lib/http-server.ts). In production
  // they are not on the public port unless METRICS_PUBLIC says so: they need no token.
  if (config.METRICS_ENABLED && config.METRICS_PORT === undefined) {
    if (config.NODE_ENV !== 'production' || config.METRICS_PUBLIC) app.get('/metrics', metricsHandler);
    else {
      app.get('/metrics', (_req, res) =>
        sendJson(res, 403, {
          error: 'forbidden',
          message:
            'Metrics are not served on the public port in production: set METRICS_PORT to serve them on a port of their own (or METRICS_PUBLIC=true).',
        }),
      );
    }
  }
  for (const prefix of ['', ...healthPrefixes]) {
    app.get(`${prefix}/health/live`, live);
    app.get(`${prefix}/health/ready`, ready);
  }
  return app;
}
