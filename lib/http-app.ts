// What every HTTP process here starts with (facade, gateway, subgraph): request ids,
// JSON access logs, the proxy setting, and the two health endpoints.
import express, { Express, Request, Response } from 'express';
import { pinoHttp } from 'pino-http';
import { CORS_PATHS, corsMiddleware, securityHeaders } from './browser';
import type { Config } from './config';
import type { Logger } from './logger';
import { REQUEST_ID_HEADER, requestIdFrom } from './request-context';

export type Checks = Record<string, 'up' | 'down'>;

/** Express's "trust proxy" from TRUST_PROXY: `true`/`false`, a hop count, or addresses/names. */
function trustProxy(value: string): boolean | number | string {
  if (value === 'true' || value === 'false') return value === 'true';
  return /^\d+$/.test(value) ? Number(value) : value;
}

export interface BaseAppOptions {
  config: Pick<Config, 'TRUST_PROXY' | 'CORS_ORIGINS' | 'CORS_MAX_AGE_SECONDS'>;
  logger: Logger;
  /** Readiness: every entry must be `up` for a 200. */
  checks: () => Promise<Checks>;
  /** Where else the health endpoints are served besides the root (the facade: /api/v1). */
  healthPrefixes?: string[];
  /** Serves browsers (the facade, the gateway): CORS for CORS_ORIGINS on the API paths. */
  browsers?: boolean;
}

export const HEALTH_PATHS = ['/health/live', '/health/ready'];

export function createBaseApp({ config, logger, checks, healthPrefixes = [], browsers = false }: BaseAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', trustProxy(config.TRUST_PROXY));
  app.set('json spaces', 0);

  app.use((req, res, next) => {
    const id = requestIdFrom(req.headers);
    req.headers[REQUEST_ID_HEADER] = id;
    res.setHeader('X-Request-Id', id);
    next();
  });
  app.use(securityHeaders());
  const cors = browsers ? corsMiddleware(config) : undefined;
  // Before every route, so that a preflight (OPTIONS) is answered here.
  if (cors) app.use(CORS_PATHS, cors);
  app.use(
    pinoHttp({
      logger,
      genReqId: (req) => req.headers[REQUEST_ID_HEADER] as string,
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
      autoLogging: { ignore: (req) => req.url?.startsWith('/health') ?? false },
    }),
  );

  const live = (_req: Request, res: Response) => res.json({ status: 'ok' });
  const ready = async (_req: Request, res: Response) => {
    const result = await checks();
    const ok = Object.values(result).every((v) => v === 'up');
    res.status(ok ? 200 : 503).json({ status: ok ? 'ready' : 'not_ready', checks: result });
  };
  for (const prefix of ['', ...healthPrefixes]) {
    app.get(`${prefix}/health/live`, live);
    app.get(`${prefix}/health/ready`, ready);
  }
  return app;
}
