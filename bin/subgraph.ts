// `npm run start:subgraph -- <name>`: one subgraph as its own HTTP service (distributed mode).
// POST /graphql serves its Federation 2 schema to gateways; it verifies every token itself.
import 'reflect-metadata';
import type { Request, Response } from 'express';
import type { Config } from '../lib/config';
import { AppError, ERROR_STATUS, ErrorCode } from '../lib/errors';
import { errorResult, graphqlBodyError } from '../lib/graphql-errors';
import { EventLog } from '../lib/event-log';
import { hopClientAddress, hopJsonBody, HopSecret, requireHopSecret, subgraphHost } from '../lib/hop';
import { createBaseApp, sendJson, sendJsonText } from '../lib/http-app';
import { KEPT_JSON_HEADER, keptAnswerJson } from '../lib/json-text';
import { listen, runService } from '../lib/http-server';
import { createLogger } from '../lib/logger';
import { GatewayLink } from '../lib/gateway-link';
import { httpGraphQLClient } from '../rest-facade/graphql-client';
import { RunningSubgraph, startSubgraph, SubgraphRequest } from '../lib/subgraph';
import { loadKeys } from '../lib/tokens';
import { selectSubgraphs } from '../subgraphs';

function refuse(res: Response, code: ErrorCode, message: string) {
  sendJson(res, ERROR_STATUS[code], errorResult(new AppError(code, message)));
}

/** The request in a JSON body (GraphQL over HTTP's parameters), or why it is none. */
function requestParams(body: unknown): SubgraphRequest | string {
  if (Array.isArray(body)) return 'batched requests are not served: send one operation per request';
  if (!body || typeof body !== 'object') return 'the body must be a JSON object';
  const { query, variables, operationName } = body as Record<string, unknown>;
  if (typeof query !== 'string') return '`query` must be a string (persisted queries are not served)';
  if (variables != null && (typeof variables !== 'object' || Array.isArray(variables)))
    return '`variables` must be an object';
  if (operationName != null && typeof operationName !== 'string') return '`operationName` must be a string';
  return {
    query,
    variables: variables as Record<string, unknown> | null,
    operationName: operationName as string | null,
  };
}

/**
 * POST /graphql: the operation pipeline (lib/operation-pipeline) over the subgraph's schema, the
 * limits and the answer-size cap included: anyone who reaches the port may send anything. Apollo
 * Server, here before, ran a plugin pipeline and hashed every query text for its cache: about a
 * third of this process's CPU per session read (issue 14). JSON bodies only (express.json reads
 * them, within BODY_LIMIT_BYTES); request errors are 400 with their code, answers (with `data`) 200.
 */
function graphqlEndpoint(subgraph: RunningSubgraph, hop: HopSecret) {
  return async (req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store'); // answers are per caller
    // Gateways POST; a GET would need its own checks against mutations (and CSRF) for no user.
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return refuse(res, 'method_not_allowed', 'POST a GraphQL request as JSON.');
    }
    if (!req.is('application/json'))
      return refuse(res, 'unsupported_media_type', 'POST a GraphQL request as JSON (Content-Type: application/json).');
    const params = requestParams(req.body);
    if (typeof params === 'string') return refuse(res, 'validation_error', `Not a GraphQL request: ${params}.`);
    const hopped = hop.presentedBy(req.headers);
    const { operation: _operation, ...answer } = await subgraph.serve(
      params,
      { headers: req.headers, clientIp: hopClientAddress(req, hop) },
      hopped,
    );
    // To the gateway, where the texts of kept arrays lie in the answer, so that it keeps them too.
    const kept = hopped ? keptAnswerJson(answer) : undefined;
    if (!kept) return sendJson(res, 'data' in answer ? 200 : 400, answer);
    res.setHeader(KEPT_JSON_HEADER, JSON.stringify(kept.ranges));
    sendJsonText(res, 200, kept.text);
  };
}

export async function startSubgraphServer(config: Config, name: string) {
  const [definition] = await selectSubgraphs([name]);
  const logger = createLogger(config).child({ subgraph: name });
  const events = await EventLog.open(config, logger);
  // Background work acting as a user (imports) reaches the gateways at GATEWAY_URL.
  const gateway = new GatewayLink();
  if (config.GATEWAY_URL.length) {
    const client = httpGraphQLClient(config.GATEWAY_URL, config.SUBGRAPH_SECRET);
    gateway.bind((r) => client.execute(r));
  }
  const subgraph = await startSubgraph(definition, { config, logger, keys: loadKeys(config), events, gateway });
  const app = createBaseApp({ config, logger, checks: () => subgraph.readiness() });
  const hop = new HopSecret(config.SUBGRAPH_SECRET);
  app.use(
    '/graphql',
    // In production only the gateway is answered, before a body is read (lib/hop.ts).
    requireHopSecret(config, hop),
    hopJsonBody(config, hop),
    graphqlEndpoint(subgraph, hop),
    graphqlBodyError,
  );
  const http = await listen(app, config.PORT, subgraphHost(config, logger));
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
  runService((config) => startSubgraphServer(config, name), `subgraph-${name}`);
}
