// `npm run start:subgraph -- <name>`: one subgraph as its own HTTP service (distributed mode).
// POST /graphql serves its Federation 2 schema to gateways; it verifies every token itself.
import '../lib/tracing'; // first: it instruments the modules imported below
import 'reflect-metadata';
import express, { Request, Response } from 'express';
import { parseRequestParams, RequestParams } from 'graphql-http';
import type { Config } from '../lib/config';
import { AppError, ErrorCode } from '../lib/errors';
import { normalizeError } from '../lib/graphql-errors';
import { EventLog } from '../lib/event-log';
import { createBaseApp, sendJson } from '../lib/http-app';
import { listen, runService } from '../lib/http-server';
import { createLogger } from '../lib/logger';
import { observeOperation, secondsSince } from '../lib/metrics';
import { RunningSubgraph, startSubgraph } from '../lib/subgraph';
import { loadKeys } from '../lib/tokens';
import { selectSubgraphs } from '../subgraphs';

/** A request /graphql does not take, as a GraphQL error. */
function refuse(res: Response, status: number, code: ErrorCode, message: string) {
  const e = new AppError(code, message);
  sendJson(res, status, { errors: [normalizeError(e.toJSON(), e)] });
}

/**
 * POST /graphql: the request read as GraphQL over HTTP says (graphql-http), run by the subgraph's
 * own executor, the one the gateway calls in one process. Apollo Server, here before, ran a
 * plugin pipeline and hashed every query text for its cache: most of this process's own CPU per
 * request besides the resolvers (issue 14). Request errors (unparsable, invalid) are 400, as
 * Apollo answered them; an answer with `data` is 200.
 */
function graphqlEndpoint(subgraph: RunningSubgraph, metrics: boolean) {
  return async (req: Request, res: Response) => {
    const start = process.hrtime.bigint();
    // Gateways POST; a GET would need its own check against mutations (and CSRF) for no user.
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return refuse(res, 405, 'method_not_allowed', 'POST a GraphQL request as JSON.');
    }
    let params: RequestParams;
    try {
      const parsed = await parseRequestParams({ method: req.method, url: req.url, headers: req.headers, body: req.body, raw: req, context: undefined });
      if (!('query' in parsed)) return refuse(res, 415, 'unsupported_media_type', 'POST a GraphQL request as JSON (Content-Type: application/json).');
      params = parsed;
    } catch (err) {
      return refuse(res, 400, 'validation_error', `Not a GraphQL request: ${(err as Error).message}.`);
    }
    const answer = await subgraph.execute(
      { query: params.query, variables: params.variables, operationName: params.operationName },
      { headers: req.headers, clientIp: req.ip ?? '' },
    );
    const { operation, ...body } = answer;
    sendJson(res, 'data' in body ? 200 : 400, body);
    if (metrics) {
      const code = body.errors?.[0]?.extensions?.code;
      observeOperation(params.operationName ?? operation?.name?.value, operation?.operation, body.errors?.length ? String(code ?? 'error') : 'ok', secondsSince(start));
    }
  };
}

export async function startSubgraphServer(config: Config, name: string) {
  const [definition] = selectSubgraphs([name]);
  const logger = createLogger(config).child({ subgraph: name });
  const events = await EventLog.open(config, logger);
  const subgraph = await startSubgraph(definition, { config, logger, keys: loadKeys(config), events });
  const app = createBaseApp({ config, logger, checks: () => subgraph.readiness() });
  app.use(
    '/graphql',
    express.json({ limit: config.BODY_LIMIT_BYTES }),
    graphqlEndpoint(subgraph, config.METRICS_ENABLED),
  );
  const http = await listen(app, config.PORT, config.HOST);
  logger.info({ address: http.address, url: `${http.url}/graphql` }, 'subgraph ready');
  return {
    url: http.url,
    async close() {
      await http.close();
      await subgraph.stop();
      await events.close();
    },
  };
}

if (require.main === module) {
  const name = process.argv[2];
  if (!name) {
    console.error('usage: npm run start:subgraph -- <name>');
    process.exit(2);
  }
  runService((config) => startSubgraphServer(config, name));
}
