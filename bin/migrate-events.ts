// `npm run migrate-events`: copies the table event log (the `events` database) into the JetStream
// stream that EVENT_LOG_URL names, once, keeping each event's id (Nats-Msg-Id) and position (the
// stream's sequence = the table's seq: consumers' positions and SSE ids carry over). Run it with
// the relays stopped (or before the first process starts with EVENT_LOG_URL); running it again
// copies nothing twice. Exit 0 when the stream holds the table's events, 1 on failure, 2 on a
// bad setting.
import 'reflect-metadata';
import { loadConfig } from '../lib/config';
import { openDatabase } from '../lib/database/open';
import { JetStreamBackend, TableBackend } from '../lib/event-backends';
import { eventLogSpec } from '../lib/event-log';
import { createLogger } from '../lib/logger';

export async function migrateEvents(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const config = loadConfig(env);
  const logger = createLogger(config).child({ role: 'migrate-events' });
  if (!config.EVENT_LOG_URL) {
    logger.fatal('EVENT_LOG_URL is not set: it names the NATS servers whose stream the log is copied into');
    return 2;
  }
  const dataSource = await openDatabase(config, eventLogSpec, logger);
  let stream: JetStreamBackend | undefined;
  try {
    stream = await JetStreamBackend.connect({
      url: config.EVENT_LOG_URL,
      stream: config.EVENT_LOG_STREAM,
      retentionSeconds: config.EVENT_RETENTION_SECONDS,
      dedupWindowSeconds: config.EVENT_LOG_DEDUP_WINDOW_SECONDS,
      replicas: config.EVENT_LOG_REPLICAS,
      logger,
    });
    const result = await stream.copyFrom(new TableBackend(dataSource), (copied) =>
      logger.info({ copied }, 'copying events'),
    );
    logger.info({ stream: config.EVENT_LOG_STREAM, ...result }, 'event log copied into the stream');
    process.stdout.write(
      result.copied
        ? `copied ${result.copied} events (${result.skipped} already there) into ${config.EVENT_LOG_STREAM}, positions ${result.from + 1}–${result.through}\n`
        : `nothing to copy: ${config.EVENT_LOG_STREAM} already holds the table's events (through ${result.through})\n`,
    );
    return 0;
  } finally {
    await stream?.close();
    await dataSource.destroy();
  }
}

if (require.main === module)
  migrateEvents().then(
    (code) => process.exit(code),
    (err: Error) => {
      process.stderr.write(`migrate-events failed: ${err.message}\n`);
      process.exit(1);
    },
  );
