// `npm run start:gateway`: the Apollo gateway as its own HTTP service (distributed mode).
// It loads the supergraph composed ahead of time (SUPERGRAPH_PATH, reloaded when the file
// changes) and reaches each subgraph at its address in SUBGRAPH_URLS.
import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { createGateway } from '../gateway';
// The module list installs the scope catalogue tokens and the event stream check against (lib/scopes.ts); it loads no module's code.
import '../subgraphs';
import { startEvents } from '../gateway/events';
import { EventLog } from '../lib/event-log';
import { ApiKeyExchange } from '../lib/api-keys';
import { IdempotencyStore } from '../lib/idempotency';
import type { Config } from '../lib/config';
import { createBaseApp } from '../lib/http-app';
import { listen, runService } from '../lib/http-server';
import { createLogger } from '../lib/logger';
import { jwks, loadKeys, TokenVerifier } from '../lib/tokens';

export async function startGatewayServer(config: Config) {
  const logger = createLogger(config).child({ service: 'gateway' });
  const keys = loadKeys(config);
  const subgraphs = Object.entries(config.subgraphUrls).map(([name, url]) => ({ name, url }));
  if (!subgraphs.length)
    throw new Error('SUBGRAPH_URLS is empty: name the subgraphs, e.g. auth=http://127.0.0.1:4001/graphql');
  const file = path.resolve(config.SUPERGRAPH_PATH ?? 'supergraph.graphql');
  // Without a composed file, compose from the running subgraphs (handy in development).
  // Subscriptions are served beside the supergraph, from the shared event log.
  const log = await EventLog.open(config, logger);
  const apiKeys = new ApiKeyExchange(config.API_KEY_CACHE_SECONDS, log);
  const events = await startEvents({
    config,
    logger,
    log,
    verifier: new TokenVerifier(keys, config.JWT_ISSUER),
    apiKeys,
  });
  const gateway = await createGateway({
    config,
    logger,
    keys,
    subgraphs,
    supergraphPath: fs.existsSync(file) ? file : undefined,
    beside: events,
    idempotency: { store: new IdempotencyStore(log.dataSource, config, logger), callers: log },
    apiKeys,
  });

  const app = createBaseApp({
    config,
    logger,
    browsers: true,
    checks: async () => {
      const [report, events] = await Promise.all([gateway.readiness(), log.ready()]);
      return { ...report, checks: { ...report.checks, events: events ? 'up' : 'down' } };
    },
  });
  app.use(events.router);
  app.use(gateway.router);
  app.get('/.well-known/jwks.json', (_req, res) => res.json(jwks(keys)));
  const http = await listen(app, config.PORT, config.HOST);
  logger.info(
    { address: http.address, url: `${http.url}/graphql`, subgraphs: subgraphs.map((s) => s.name) },
    'gateway ready',
  );
  return {
    url: http.url,
    async close() {
      const closing = http.close(); // ends open event streams with a final comment at once
      await events.stop();
      await closing;
      await gateway.stop();
      await log.close();
    },
  };
}

if (require.main === module) runService(startGatewayServer, 'gateway');
