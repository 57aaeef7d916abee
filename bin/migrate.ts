// `npm run migrate`: runs the pending migrations of every database this build owns (each
// subgraph's, SUBGRAPHS to choose, and the shared event log), then exits. For deployments that
// migrate in a step of their own and start their servers with MIGRATIONS_RUN=false. Safe to
// run beside starting servers and other migrate runs: each database is migrated under a lock.
import 'reflect-metadata';
import { ConfigError, loadConfig } from '../lib/config';
import { openDatabase, StartupError } from '../lib/database/open';
import { eventLogSpec } from '../lib/event-log';
import { createLogger } from '../lib/logger';
import { startupFailure } from '../lib/http-server';
import { selectSubgraphs } from '../subgraphs';

async function main(): Promise<void> {
  const config = { ...loadConfig(), MIGRATIONS_RUN: true };
  const logger = createLogger({ LOG_LEVEL: config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL });
  const specs = [
    ...(await selectSubgraphs(config.SUBGRAPHS)).map((d) => ({
      name: d.name,
      entities: d.entities,
      migrations: d.migrations,
    })),
    eventLogSpec,
  ];
  for (const spec of specs) {
    const before = Date.now();
    let ran: string[] = [];
    const dataSource = await openDatabase(config, spec, logger, (names) => (ran = names));
    await dataSource.destroy();
    console.log(`${spec.name}: ${ran.length ? `ran ${ran.join(', ')}` : 'up to date'} (${Date.now() - before} ms)`);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    console.error(`migrate failed: ${startupFailure(err)}`);
    if (!(err instanceof StartupError) || process.env.LOG_LEVEL === 'debug') console.error(err);
    process.exit(1);
  },
);
