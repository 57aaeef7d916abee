// The REST facade: Express, driven by the route table. It validates, runs the route's
// GraphQL operation and shapes the answer; it holds no business rules. Each kind of route has
// its handler (json-, upload-, download-, sse-handler.ts); a module's mounted routes bring theirs.
import express, { Express, NextFunction, Request, Response } from 'express';
import type { Config } from '../lib/config';
import type { BodyReadError } from '../lib/graphql-errors';
import type { Logger } from '../lib/logger';
import { createBaseApp, HEALTH_PATHS } from '../lib/http-app';
import { sharedExpensiveGate } from '../lib/kit/expensive';
import { bodyParsers, pathPattern } from './body-parsing';
import { clientMistake } from './client-mistakes';
import { API_PREFIX, DOCS_PATHS, mountDocs } from './docs-pages';
import { downloadHandler } from './download-handler';
import type { GraphQLClient } from './graphql-client';
import { routeHandler } from './json-handler';
import { openApiDocument } from './openapi';
import type { ModuleRoutes } from './route-spec';
import { routeTable } from './route-table';
import { sendError } from './errors';
import { streamHandler } from './sse-handler';
import { uploadHandler } from './upload-handler';

export interface FacadeOptions {
  config: Config;
  logger: Logger;
  graphql: GraphQLClient;
  /** Each module's routes, in order: the entry point hands them over (subgraphs/index.ts `facadeRoutes`), as the gateway is handed its subgraphs. */
  routes: ModuleRoutes[];
  /** Mounts what the entry point serves beside the facade (the gateway, the JWKS) before the fallbacks. */
  mount?: (app: Express) => void;
}

export function createFacadeApp(options: FacadeOptions): Express {
  const { config, logger, graphql } = options;
  const table = routeTable(options.routes);
  const { routes, mounted } = table;
  const app = createBaseApp({
    config,
    logger,
    checks: () => graphql.checks(),
    healthPrefixes: [API_PREFIX],
    browsers: true,
  });
  // No ETag hashed from every JSON body: answers that have a version carry it as their ETag, a
  // file its own; If-None-Match is honoured for those.
  app.set('etag', false);

  mountDocs(app, config, openApiDocument(table, config));
  options.mount?.(app);

  // ---- the route table -------------------------------------------------------------------
  const api = express.Router();
  api.use(...bodyParsers(routes, config));
  // The process's gate on expensive operations, shared with the modules running here (one process).
  const gate = sharedExpensiveGate(config);
  for (const route of routes) {
    const handler = route.stream
      ? streamHandler(route, graphql, config)
      : route.download
        ? downloadHandler(route, graphql, config)
        : route.upload
          ? uploadHandler(route, graphql, config)
          : routeHandler(route, graphql, gate);
    api[route.method](route.path, handler);
  }
  app.use(API_PREFIX, api);
  // The modules' endpoints beside /api/v1, with handlers of their own (route-spec.ts MountedRoute).
  for (const route of mounted) app.use(route.path, route.router({ graphql, config }));

  // ---- fallbacks -------------------------------------------------------------------------
  const known = [
    ...routes.map((r) => ({ pattern: pathPattern(`${API_PREFIX}${r.path}`), method: r.method.toUpperCase() })),
    ...mounted.map((r) => ({ pattern: pathPattern(r.path), method: r.method.toUpperCase() })),
    ...[...HEALTH_PATHS, ...HEALTH_PATHS.map((p) => API_PREFIX + p), ...DOCS_PATHS].map((p) => ({
      pattern: pathPattern(p),
      method: 'GET',
    })),
  ];
  app.use((req, res) => {
    const allowed = [...new Set(known.filter((k) => k.pattern.test(req.path)).map((k) => k.method))];
    if (!allowed.length) return sendError(res, 'not_found', `No route ${req.method} ${req.path}.`);
    if (allowed.includes('GET')) allowed.push('HEAD');
    res.setHeader('Allow', allowed.join(', '));
    sendError(res, 'method_not_allowed', `${req.method} is not allowed on ${req.path}; use ${allowed.join(', ')}.`);
  });
  app.use((err: BodyReadError | undefined, req: Request, res: Response, _next: NextFunction) => {
    if (clientMistake(err, req, res, config)) return;
    req.log?.error({ err }, 'unhandled error');
    sendError(res, 'internal_error');
  });
  return app;
}
