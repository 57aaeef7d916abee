// Opening a subgraph's data source, and the few database facts that differ between
// SQLite and MySQL, so that subgraph code stays portable.
import fs from 'node:fs';
import { DataSource, EntityManager, QueryRunner, TableColumnOptions } from 'typeorm';
import mysql from 'mysql2/promise';
import type { Config } from './config';
import { isLockConflictError } from './graphql-errors';
import type { Logger } from './logger';
import { watchPool } from './metrics';
import { dataSourceOptions, DataSourceSpec, isMysql, mysqlDatabaseName } from '../ormconfig';

/** A start-up failure with a one-line message meant for the operator (no stack needed). */
export class StartupError extends Error {
  constructor(message: string, readonly cause?: unknown) {
    super(message);
  }
}

/** Driver codes that mean the database server could not be reached at all. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'PROTOCOL_CONNECTION_LOST']);

function unreachable(err: unknown, config: Config): StartupError | undefined {
  const e = err as { code?: string; errors?: { code?: string }[]; driverError?: { code?: string } };
  const code = e?.code ?? e?.driverError?.code ?? e?.errors?.[0]?.code;
  if (!code || !UNREACHABLE.has(code)) return undefined;
  const url = new URL(config.DATABASE_URL);
  return new StartupError(`database unreachable at ${url.hostname}:${url.port || 3306} (${code})`, err);
}

export async function openDatabase(config: Config, spec: DataSourceSpec, logger?: Logger, onMigrated?: (names: string[]) => void): Promise<DataSource> {
  try {
    return await openAndMigrate(config, spec, logger, onMigrated);
  } catch (err) {
    if (err instanceof StartupError) throw err;
    throw unreachable(err, config) ?? err;
  }
}

async function openAndMigrate(config: Config, spec: DataSourceSpec, logger?: Logger, onMigrated?: (names: string[]) => void): Promise<DataSource> {
  if (isMysql(config)) {
    await createMysqlDatabase(config, mysqlDatabaseName(config, spec.name));
  } else {
    fs.mkdirSync(config.dataDir, { recursive: true });
  }
  const dataSource = new DataSource(dataSourceOptions(config, spec));
  await dataSource.initialize();
  watchPool(spec.name, dataSource);
  try {
    if (config.MIGRATIONS_RUN) {
      const ran = await runMigrationsLocked(dataSource, config.MIGRATION_LOCK_TIMEOUT_SECONDS);
      if (ran.length) logger?.info({ database: spec.name, migrations: ran }, 'migrations ran');
      onMigrated?.(ran);
    } else if (await dataSource.showMigrations()) {
      // Migrated in a separate step (npm run migrate): a server must not run on an older schema.
      throw new StartupError(`the ${spec.name} database has migrations that have not run; run \`npm run migrate\` first (MIGRATIONS_RUN=false here)`);
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
        throw new StartupError(`migration "${name}" of the ${databaseLabel(dataSource)} database failed: ${(err as Error)?.message ?? err}`, err);
      });
  }
  if (dataSource.options.type !== 'mysql') return (await dataSource.runMigrations({ transaction: 'each' })).map((m) => m.name);
  const lock = dataSource.createQueryRunner();
  const name = `fav_migrations:${dataSource.options.database}`.slice(0, 64); // MySQL's limit for lock names
  try {
    const [row] = await lock.query('SELECT GET_LOCK(?, ?) AS taken', [name, lockTimeoutSeconds]);
    if (Number(row?.taken) !== 1) {
      throw new StartupError(`the ${databaseLabel(dataSource)} database is being migrated by another process and its lock was not free within ${lockTimeoutSeconds} s (MIGRATION_LOCK_TIMEOUT_SECONDS)`);
    }
    try {
      return (await dataSource.runMigrations({ transaction: 'each' })).map((m) => m.name);
    } finally {
      await lock.query('SELECT RELEASE_LOCK(?)', [name]).catch(() => undefined);
    }
  } finally {
    await lock.release();
  }
}

const databaseLabel = (dataSource: DataSource) => String(dataSource.options.database).replace(/^.*[\\/]/, '').replace(/\.sqlite$/, '');

/** A connection to the MySQL server itself (no database), for creating and dropping databases. */
function serverConnection(config: Config) {
  const url = new URL(config.DATABASE_URL);
  return mysql.createConnection({
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    connectTimeout: 5000,
  });
}

async function createMysqlDatabase(config: Config, name: string): Promise<void> {
  const conn = await serverConnection(config);
  try {
    await conn.query('CREATE DATABASE IF NOT EXISTS ?? CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci', [name]);
  } finally {
    await conn.end();
  }
}

/**
 * Drops every MySQL database of the configured prefix (`<prefix>_<subgraph>`, `<prefix>_events`):
 * for tests and benchmarks that made their own. Nothing to do on SQLite: its files go with DATA_DIR.
 */
export async function dropPrefixedDatabases(config: Config): Promise<void> {
  if (!isMysql(config)) return;
  const prefix = new URL(config.DATABASE_URL).pathname.slice(1);
  if (!prefix) throw new Error('refusing to drop databases without a prefix in DATABASE_URL');
  const conn = await serverConnection(config);
  try {
    const [rows] = await conn.query('SHOW DATABASES LIKE ?', [`${prefix}\\_%`]);
    for (const row of rows as Record<string, string>[]) await conn.query('DROP DATABASE IF EXISTS ??', [Object.values(row)[0]]);
  } finally {
    await conn.end();
  }
}

/** `SELECT 1` with a deadline: readiness must answer even when the database hangs. */
export async function pingDatabase(dataSource: DataSource, timeoutMs = 2000): Promise<boolean> {
  if (!dataSource.isInitialized) return false;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      dataSource.query('SELECT 1'),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('ping timed out')), timeoutMs);
      }),
    ]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

// SQLite has one connection: TypeORM would interleave two concurrent transactions on it,
// so they are queued. MySQL gives each transaction its own pooled connection.
const sqliteQueues = new WeakMap<DataSource, Promise<unknown>>();
const commitListeners = new WeakMap<DataSource, Set<() => void>>();

export function inTransaction<T>(dataSource: DataSource, work: (manager: EntityManager) => Promise<T>): Promise<T> {
  let done: Promise<T>;
  if (dataSource.options.type !== 'better-sqlite3') done = dataSource.transaction(work);
  else {
    const previous = sqliteQueues.get(dataSource) ?? Promise.resolve();
    done = previous.catch(() => undefined).then(() => dataSource.transaction(work));
    sqliteQueues.set(dataSource, done.catch(() => undefined));
  }
  return done.then((result) => {
    commitListeners.get(dataSource)?.forEach((listener) => listener());
    return result;
  });
}

/**
 * Runs `transaction` (a whole inTransaction call) again when it lost a lock conflict (deadlock,
 * lock wait timeout: see isLockConflictError), at most `attempts` times in all, after a short
 * jittered pause (10, 20, 40 ms… ×0.5–1.5). Other errors, and the last conflict, are thrown.
 */
export async function retryOnLockConflict<T>(transaction: () => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (err) {
      if (attempt >= attempts || !isLockConflictError(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** (attempt - 1) * (0.5 + Math.random())));
    }
  }
}

/**
 * One SELECT that sees committed rows only. SQLite has one connection, which may be inside
 * another caller's transaction between its statements (TypeORM's calls are asynchronous): wait
 * until it is not, then read synchronously, so that nothing can begin in between.
 */
export async function selectCommitted<T>(dataSource: DataSource, sql: string, params: unknown[]): Promise<T[]> {
  if (dataSource.options.type !== 'better-sqlite3') return (await dataSource.query(sql, params)) as T[];
  const db = (dataSource.driver as unknown as { databaseConnection: SqliteHandle }).databaseConnection;
  while (db.inTransaction) await new Promise((resolve) => setTimeout(resolve, 1));
  return db.prepare(sql).all(...params) as T[];
}

interface SqliteHandle {
  inTransaction: boolean;
  prepare(sql: string): { all(...params: unknown[]): unknown[]; get(...params: unknown[]): unknown };
}

/** Calls `listener` after each transaction of inTransaction() on this data source commits. */
export function onCommit(dataSource: DataSource, listener: () => void): () => void {
  let listeners = commitListeners.get(dataSource);
  if (!listeners) commitListeners.set(dataSource, (listeners = new Set()));
  listeners.add(listener);
  return () => listeners!.delete(listener);
}

/** Affected-row count of an UPDATE/DELETE, the same on both drivers. */
export function affectedRows(result: { affected?: number | null }): number {
  return result.affected ?? 0;
}

/** Column options that differ by driver, for portable migrations. */
export function columns(queryRunner: QueryRunner) {
  const mysqlDriver = queryRunner.connection.options.type === 'mysql';
  return {
    uuid: (name: string, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
      name, type: 'varchar', length: '36', ...extra,
    }),
    string: (name: string, length: number, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
      name, type: 'varchar', length: String(length), ...extra,
    }),
    /** A case-folded key compared byte for byte (MySQL's default collation would also fold accents). */
    key: (name: string, length: number, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
      name, type: 'varchar', length: String(length), ...(mysqlDriver ? { collation: 'utf8mb4_bin' } : {}), ...extra,
    }),
    text: (name: string, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
      name, type: mysqlDriver ? 'mediumtext' : 'text', ...extra,
    }),
    timestamp: (name: string, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
      name, type: 'datetime', precision: mysqlDriver ? 3 : undefined, ...extra,
    }),
    int: (name: string, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
      name, type: 'integer', ...extra,
    }),
    /** An auto-incrementing sequence: BIGINT on MySQL, INTEGER (the rowid) on SQLite. */
    sequence: (name: string): TableColumnOptions => ({
      name, type: mysqlDriver ? 'bigint' : 'integer', isPrimary: true, isGenerated: true, generationStrategy: 'increment',
    }),
    double: (name: string, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
      name, type: mysqlDriver ? 'double' : 'real', ...extra,
    }),
  };
}

/** A unique-key violation on either driver (duplicate name, concurrent insert of the same key). */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; driverError?: { code?: string } };
  const code = e?.driverError?.code ?? e?.code;
  return code === 'ER_DUP_ENTRY' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * A fixed SELECT run by the driver itself, past TypeORM's query runner (a pooled connection
 * taken and given back, logging and event hooks, mysql2's promise wrapper capturing a stack per
 * query: together about 5 % of a session read in the profile). Same pool or connection, so the
 * same settings and the same rows; errors are the driver's own (lib/graphql-errors.ts reads both).
 */
function driverSelect(dataSource: DataSource, sql: string): (params: unknown[]) => Promise<Record<string, unknown>[]> {
  if (dataSource.options.type === 'better-sqlite3') {
    let prepared: { db: SqliteHandle; statement: ReturnType<SqliteHandle['prepare']> } | undefined;
    return async (params) => {
      const db = (dataSource.driver as unknown as { databaseConnection?: SqliteHandle }).databaseConnection;
      if (!dataSource.isInitialized || !db) throw new Error('Pool is closed: the data source is not initialized');
      if (prepared?.db !== db) prepared = { db, statement: db.prepare(sql) };
      return prepared.statement.all(...params) as Record<string, unknown>[];
    };
  }
  if (dataSource.options.type === 'mysql') {
    return (params) =>
      new Promise((resolve, reject) => {
        const pool = (dataSource.driver as unknown as { pool?: MysqlCallbackPool }).pool;
        if (!dataSource.isInitialized || !pool) return reject(new Error('Pool is closed: the data source is not initialized'));
        pool.query(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as Record<string, unknown>[])));
      });
  }
  return async (params) => (await dataSource.query(sql, params)) as Record<string, unknown>[];
}

/**
 * Whether the entity's table holds any row: fixed SQL, for the pollers that mostly find none
 * (an outbox that is empty between writes). TypeORM's find built its query anew on each of
 * them, several times a second with nothing to do.
 */
export function anyRow(dataSource: DataSource, entity: Function): () => Promise<boolean> {
  const select = driverSelect(dataSource, `SELECT 1 AS found FROM ${dataSource.driver.escape(dataSource.getMetadata(entity).tableName)} LIMIT 1`);
  return async () => (await select([])).length > 0;
}

interface MysqlCallbackPool {
  query(sql: string, params: unknown[], callback: (err: Error | null, rows: unknown) => void): void;
}

/**
 * A read of one row by primary key as fixed, parameterised SQL, hydrated into the entity
 * (dates and transformers applied by the driver as TypeORM does). For the reads every request
 * makes: TypeORM's findOneBy builds and escapes its SQL anew on each call, which was the
 * largest single cost of a session read in the CPU profile.
 */
export function rowReader<T extends object>(dataSource: DataSource, entity: new () => T): (id: string | number) => Promise<T | null> {
  const meta = dataSource.getMetadata(entity);
  const { driver } = dataSource;
  const [key] = meta.primaryColumns;
  const columns = meta.columns.filter((c) => !c.isVirtual);
  const sql = `SELECT ${columns.map((c) => driver.escape(c.databaseName)).join(', ')} FROM ${driver.escape(meta.tableName)} WHERE ${driver.escape(key.databaseName)} = ?`;
  const select = driverSelect(dataSource, sql);
  return async (id) => {
    const rows = await select([id]);
    if (!rows.length) return null;
    const row = rows[0];
    const result = meta.create() as T;
    for (const c of columns) c.setEntityValue(result, driver.prepareHydratedValue(row[c.databaseName], c));
    return result;
  };
}
