// Opening a subgraph's data source: its MySQL database made if missing, its migrations run under
// a lock (or checked to have run), and a start-up failure told in one line.
import fs from 'node:fs';
import { DataSource, MigrationExecutor } from 'typeorm';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { watchPool } from '../metrics';
import { traceStatements } from '../tracing';
import { dataSourceOptions, DataSourceSpec } from '../../ormconfig';
import { createMysqlDatabase } from './mysql-admin';
import { isMysql, mysqlDatabaseName, mysqlServer } from './mysql-url';

/** A start-up failure with a one-line message meant for the operator (no stack needed). */
export class StartupError extends Error {
  constructor(
    message: string,
    readonly cause?: unknown,
  ) {
    super(message);
  }
}

/** Driver codes that mean the database server could not be reached at all. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'PROTOCOL_CONNECTION_LOST',
]);

function unreachable(err: unknown, config: Config): StartupError | undefined {
  const e = err as { code?: string; errors?: { code?: string }[]; driverError?: { code?: string } };
  const code = e?.code ?? e?.driverError?.code ?? e?.errors?.[0]?.code;
  if (!code || !UNREACHABLE.has(code)) return undefined;
  const { host, port } = mysqlServer(config);
  return new StartupError(`database unreachable at ${host}:${port} (${code})`, err);
}

export async function openDatabase(
  config: Config,
  spec: DataSourceSpec,
  logger?: Logger,
  onMigrated?: (names: string[]) => void,
): Promise<DataSource> {
  try {
    return await openAndMigrate(config, spec, logger, onMigrated);
  } catch (err) {
    if (err instanceof StartupError) throw err;
    throw unreachable(err, config) ?? err;
  }
}

async function openAndMigrate(
  config: Config,
  spec: DataSourceSpec,
  logger?: Logger,
  onMigrated?: (names: string[]) => void,
): Promise<DataSource> {
  if (isMysql(config)) {
    await createMysqlDatabase(config, mysqlDatabaseName(config, spec.name));
  } else {
    fs.mkdirSync(config.dataDir, { recursive: true });
  }
  const dataSource = new DataSource(dataSourceOptions(config, spec));
  await dataSource.initialize();
  watchPool(spec.name, dataSource);
  // Tracing on: a span per statement of a sampled request (lib/tracing/).
  traceStatements(dataSource, spec.name);
  try {
    if (config.MIGRATIONS_RUN) {
      const ran = await runMigrationsLocked(dataSource, config.MIGRATION_LOCK_TIMEOUT_SECONDS);
      if (ran.length) logger?.info({ database: spec.name, migrations: ran }, 'migrations ran');
      onMigrated?.(ran);
    } else if (await dataSource.showMigrations()) {
      // Migrated in a separate step (npm run migrate): a server must not run on an older schema.
      throw new StartupError(
        `the ${spec.name} database has migrations that have not run; run \`npm run migrate\` first (MIGRATIONS_RUN=false here)`,
      );
    }
  } catch (err) {
    await dataSource.destroy().catch(() => undefined);
    throw err;
  }
  return dataSource;
}

/**
 * Runs pending migrations while holding a lock on the database, so that processes starting at
 * the same moment take turns: the first migrates, the others then find nothing pending. MySQL:
 * GET_LOCK on a connection of its own (released when that connection ends, even if the
 * process dies). SQLite is used by one process, whose migrations run in a transaction.
 * Answers the names of the migrations that ran; a failure names its migration.
 */
export async function runMigrationsLocked(dataSource: DataSource, lockTimeoutSeconds: number): Promise<string[]> {
  for (const migration of dataSource.migrations) {
    const name = migration.name ?? migration.constructor.name;
    const up = migration.up.bind(migration);
    migration.up = (queryRunner) =>
      up(queryRunner).catch((err: unknown) => {
        throw new StartupError(
          `migration "${name}" of the ${databaseLabel(dataSource)} database failed: ${(err as Error)?.message ?? err}`,
          err,
        );
      });
  }
  if (dataSource.options.type !== 'mysql')
    return (await dataSource.runMigrations({ transaction: 'each' })).map((m) => m.name);
  const lock = dataSource.createQueryRunner();
  const name = `fav_migrations:${dataSource.options.database}`.slice(0, 64); // MySQL's limit for lock names
  try {
    const [row] = (await lock.query('SELECT GET_LOCK(?, ?) AS taken', [name, lockTimeoutSeconds])) as {
      taken?: unknown;
    }[];
    if (Number(row?.taken) !== 1) {
      throw new StartupError(
        `the ${databaseLabel(dataSource)} database is being migrated by another process and its lock was not free within ${lockTimeoutSeconds} s (MIGRATION_LOCK_TIMEOUT_SECONDS)`,
      );
    }
    try {
      // On the lock's own connection: the process's pool is shared by its databases
      // (lib/database/shared-pool.ts), and databases migrating at once must not each hold a
      // connection for the lock while they wait for a second one to migrate with.
      const executor = new MigrationExecutor(dataSource, lock);
      executor.transaction = 'each';
      return (await executor.executePendingMigrations()).map((m) => m.name);
    } finally {
      await lock.query('SELECT RELEASE_LOCK(?)', [name]).catch(() => undefined);
    }
  } finally {
    await lock.release();
  }
}

const databaseLabel = (dataSource: DataSource) =>
  String(dataSource.options.database)
    .replace(/^.*[\\/]/, '')
    .replace(/\.sqlite$/, '');
