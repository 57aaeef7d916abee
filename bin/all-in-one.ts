// One process: every subgraph, the gateway executing them in-process, and the REST facade,
// on one port. Zero configuration: SQLite under ./data.
import 'reflect-metadata';
import { createGateway } from '../gateway';
import type { Config } from '../lib/config';
import { listen, runService } from '../lib/http-server';
import { createLogger } from '../lib/logger';
import { RunningSubgraph, startSubgraph } from '../lib/subgraph';
import type { Express } from 'express';
import { jwks, KeyMaterial, loadKeys } from '../lib/tokens';
import { createFacadeApp } from '../rest-facade/app';
import { selectSubgraphs } from '../subgraphs';

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

export interface ServerInternals {
  subgraphs: RunningSubgraph[];
  keys: KeyMaterial;
}

export interface StartOptions {
  /** Extra routes beside the facade (benchmarks mount their baselines here). */
  mount?: (app: Express, internals: ServerInternals) => void;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const logger = createLogger(config);
  const keys = loadKeys(config);
  const subgraphs: RunningSubgraph[] = [];
  for (const def of selectSubgraphs(config.SUBGRAPHS)) subgraphs.push(await startSubgraph(def, { config, logger, keys }));
  const gateway = await createGateway({ config, logger, keys, subgraphs: subgraphs.map((s) => ({ name: s.name, local: s })) });
  const app = createFacadeApp({
    config,
    logger,
    graphql: { execute: (r) => gateway.execute(r), checks: () => gateway.checks() },
    mount: (a) => {
      a.use(gateway.router);
      a.get('/.well-known/jwks.json', (_req, res) => res.json(jwks(keys)));
      options.mount?.(a, { subgraphs, keys });
    },
  });
  const http = await listen(app, config.PORT, config.HOST);
  logger.info({ url: http.url, subgraphs: subgraphs.map((s) => s.name) }, 'ready');
  return {
    url: http.url,
    async close() {
      await http.close();
      await gateway.stop();
      for (const s of subgraphs) await s.stop();
    },
  };
}

if (require.main === module) runService(startServer);
