// One process: every subgraph, the gateway executing them in-process, the event stream and
// the REST facade, on one port. Zero configuration: SQLite under ./data.
import 'reflect-metadata';
import type { Express } from 'express';
import { createGateway, Gateway } from '../gateway';
import { startEvents } from '../gateway/events';
import type { Config } from '../lib/config';
import { EventLog } from '../lib/event-log';
import { GatewayLink } from '../lib/gateway-link';
import { ApiKeyExchange } from '../lib/api-keys';
import { IdempotencyStore } from '../lib/idempotency';
import { listen, runService } from '../lib/http-server';
import { createLogger } from '../lib/logger';
import { RunningSubgraph, startSubgraph } from '../lib/subgraph';
import { jwks, KeyMaterial, loadKeys, TokenVerifier } from '../lib/tokens';
import { createFacadeApp } from '../rest-facade/app';
import { facadeRoutes, selectSubgraphs } from '../subgraphs';

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

export interface ServerInternals {
  subgraphs: RunningSubgraph[];
  /** The gateway, whose `execute` is the facade's direct path. */
  gateway: Gateway;
  keys: KeyMaterial;
  log: EventLog;
}

export interface StartOptions {
  /** Extra routes beside the facade (benchmarks mount their baselines here). */
  mount?: (app: Express, internals: ServerInternals) => void;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const logger = createLogger(config);
  const keys = loadKeys(config);
  const log = await EventLog.open(config, logger);
  const subgraphs: RunningSubgraph[] = [];
  // Bound to the gateway once it exists (created after the subgraphs it composes).
  const link = new GatewayLink();
  for (const def of await selectSubgraphs(config.SUBGRAPHS))
    subgraphs.push(await startSubgraph(def, { config, logger, keys, events: log, gateway: link }));
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
    subgraphs: subgraphs.map((s) => ({ name: s.name, local: s })),
    beside: events,
    idempotency: { store: new IdempotencyStore(log.dataSource, config, logger), callers: log },
    apiKeys,
  });
  link.bind((r) => gateway.execute(r));
  const app = createFacadeApp({
    config,
    logger,
    routes: facadeRoutes,
    graphql: {
      execute: (r) => gateway.execute(r),
      knownUser: (authorization) => gateway.knownUser(authorization),
      subscribe: (r) => events.subscribe(r),
      checks: async () => {
        const [report, events] = await Promise.all([gateway.readiness(), log.ready()]);
        return { ...report, checks: { ...report.checks, events: events ? 'up' : 'down' } };
      },
    },
    mount: (a) => {
      a.use(events.router);
      a.use(gateway.router);
      a.get('/.well-known/jwks.json', (_req, res) => res.json(jwks(keys)));
      options.mount?.(a, { subgraphs, gateway, keys, log });
    },
  });
  const http = await listen(app, config.PORT, config.HOST);
  logger.info({ address: http.address, url: http.url, subgraphs: subgraphs.map((s) => s.name) }, 'ready');
  return {
    url: http.url,
    async close() {
      const closing = http.close(); // ends open event streams with a final comment at once
      await events.stop();
      await closing;
      await gateway.stop();
      for (const s of subgraphs) await s.stop();
      await log.close();
    },
  };
}

if (require.main === module) runService(startServer, 'all-in-one');
