// `npm run start:facade`: the REST facade as its own HTTP service (distributed mode). It sends
// GraphQL operations to the gateway(s) at GATEWAY_URL.
import 'reflect-metadata';
import type { Config } from '../lib/config';
import { listen, runService } from '../lib/http-server';
import { createLogger } from '../lib/logger';
import { createFacadeApp } from '../rest-facade/app';
import { httpGraphQLClient } from '../rest-facade/graphql-client';
import { facadeRoutes } from '../subgraphs';

export async function startFacadeServer(config: Config) {
  if (!config.GATEWAY_URL.length)
    throw new Error('GATEWAY_URL is not set: the facade needs a gateway, e.g. http://127.0.0.1:4000');
  const logger = createLogger(config).child({ service: 'facade' });
  const app = createFacadeApp({
    config,
    logger,
    graphql: httpGraphQLClient(config.GATEWAY_URL, config.SUBGRAPH_SECRET),
    routes: facadeRoutes,
  });
  const http = await listen(app, config.PORT, config.HOST);
  logger.info({ address: http.address, url: http.url, gateway: config.GATEWAY_URL }, 'facade ready');
  return { url: http.url, close: () => http.close() };
}

if (require.main === module) runService(startFacadeServer, 'facade');
