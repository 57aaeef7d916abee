// `npm run start:subgraph -- <name>`: one subgraph as its own HTTP service (distributed mode).
// POST /graphql serves its Federation 2 schema to gateways; it verifies every token itself.
import '../lib/tracing'; // first: it instruments the modules imported below
import 'reflect-metadata';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express from 'express';
import type { Config } from '../lib/config';
import { normalizeError } from '../lib/graphql-errors';
import { EventLog } from '../lib/event-log';
import { createBaseApp } from '../lib/http-app';
import { listen, runService } from '../lib/http-server';
import { createLogger } from '../lib/logger';
import { operationMetricsPlugin } from '../lib/metrics';
import { startSubgraph, SubgraphContext } from '../lib/subgraph';
import { loadKeys } from '../lib/tokens';
import { selectSubgraphs } from '../subgraphs';

export async function startSubgraphServer(config: Config, name: string) {
  const [definition] = selectSubgraphs([name]);
  const logger = createLogger(config).child({ subgraph: name });
  const events = await EventLog.open(config, logger);
  const subgraph = await startSubgraph(definition, { config, logger, keys: loadKeys(config), events });
  const apollo = new ApolloServer<SubgraphContext>({
    schema: subgraph.schema,
    formatError: (formatted, error) => normalizeError(formatted, error, logger),
    includeStacktraceInErrorResponses: false,
    // Shutdown is ours (lib/http-server.ts): Apollo's own signal handler would race it.
    stopOnTerminationSignals: false,
    // Traces are for Apollo's hosted studio, which is not used here.
    plugins: [ApolloServerPluginInlineTraceDisabled(), operationMetricsPlugin()],
  });
  await apollo.start();

  const app = createBaseApp({ config, logger, checks: () => subgraph.readiness() });
  app.use(
    '/graphql',
    express.json({ limit: config.BODY_LIMIT_BYTES }),
    expressMiddleware(apollo, { context: ({ req }) => subgraph.createContext({ headers: req.headers, clientIp: req.ip ?? '' }) }),
  );
  const http = await listen(app, config.PORT, config.HOST);
  logger.info({ address: http.address, url: `${http.url}/graphql` }, 'subgraph ready');
  return {
    url: http.url,
    async close() {
      await http.close();
      await apollo.stop();
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
