// `npm run start:worker [-- <name> ...]`: the background work of subgraphs (rendering speech
// for tts) in a process of its own. Several may run against one database: each job is taken
// by one of them. Its HTTP port serves only /health/live and /health/ready.
// Default: every subgraph that has background work.
import 'reflect-metadata';
import type { Config } from '../lib/config';
import { EventLog } from '../lib/event-log';
import { createBaseApp } from '../lib/http-app';
import { listen, runService } from '../lib/http-server';
import { createLogger } from '../lib/logger';
import { startSubgraphWorker } from '../lib/subgraph';
import { loadKeys } from '../lib/tokens';
import { selectSubgraphs } from '../subgraphs';

export async function startWorker(config: Config, names: string[]) {
  const logger = createLogger(config).child({ role: 'worker' });
  const definitions = names.length
    ? await selectSubgraphs(names)
    : (await selectSubgraphs(config.SUBGRAPHS)).filter((d) => d.worker !== undefined);
  const events = await EventLog.open(config, logger);
  const keys = loadKeys(config);
  const works: Awaited<ReturnType<typeof startSubgraphWorker>>[] = [];
  for (const definition of definitions)
    works.push(await startSubgraphWorker(definition, { config, logger, keys, events }));
  const app = createBaseApp({
    config,
    logger,
    checks: async () =>
      Object.fromEntries(
        await Promise.all(works.map(async (w) => [w.name, (await w.ready()) ? 'up' : 'down'] as const)),
      ),
  });
  const http = await listen(app, config.PORT, config.HOST);
  logger.info({ address: http.address, url: http.url, subgraphs: works.map((w) => w.name) }, 'worker ready');
  return {
    async close() {
      await http.close();
      for (const work of works) await work.stop();
      await events.close();
    },
  };
}

if (require.main === module) runService((config) => startWorker(config, process.argv.slice(2)), 'worker');
