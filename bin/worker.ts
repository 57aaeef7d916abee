// `npm run start:worker [-- <name> ...]`: the background work of subgraphs (rendering speech
// for tts) in a process of its own, with no HTTP port. Several may run against one database:
// each job is taken by one of them. Default: every subgraph that has background work.
import 'reflect-metadata';
import type { Config } from '../lib/config';
import { EventLog } from '../lib/event-log';
import { runService } from '../lib/http-server';
import { createLogger } from '../lib/logger';
import { BackgroundWork, startSubgraphWorker } from '../lib/subgraph';
import { loadKeys } from '../lib/tokens';
import { selectSubgraphs } from '../subgraphs';

export async function startWorker(config: Config, names: string[]) {
  const logger = createLogger(config).child({ role: 'worker' });
  const definitions = names.length ? selectSubgraphs(names) : selectSubgraphs(config.SUBGRAPHS).filter((d) => d.worker);
  const events = await EventLog.open(config, logger);
  const keys = loadKeys(config);
  const works: BackgroundWork[] = [];
  for (const definition of definitions) works.push(await startSubgraphWorker(definition, { config, logger, keys, events }));
  logger.info({ subgraphs: definitions.map((d) => d.name) }, 'worker ready');
  return {
    async close() {
      for (const work of works) await work.stop();
      await events.close();
    },
  };
}

if (require.main === module) runService((config) => startWorker(config, process.argv.slice(2)));
