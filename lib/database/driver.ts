// The one module that reaches into TypeORM's drivers (`driver.pool`, `driver.databaseConnection`,
// mysql2's pool fields): an upgrade that moves them breaks here, and only here.
import type { DataSource } from 'typeorm';
import { inStatementSpan, recording, tracingEnabled } from '../tracing';

/** better-sqlite3's connection, as much of it as is used here. */
export interface SqliteHandle {
  inTransaction: boolean;
  prepare(sql: string): { all(...params: unknown[]): unknown[]; get(...params: unknown[]): unknown };
}

interface MysqlCallbackPool {
  query(sql: string, params: unknown[], callback: (err: Error | null, rows: unknown) => void): void;
  /** mysql2 keeps its counts in fields it does not document; read defensively. */
  _allConnections?: { length: number };
  _freeConnections?: { length: number };
  _connectionQueue?: { length: number };
}

export const isSqlite = (dataSource: DataSource) => dataSource.options.type === 'better-sqlite3';

/** SQLite's one connection; undefined on MySQL or once the data source is destroyed. */
export function sqliteConnection(dataSource: DataSource): SqliteHandle | undefined {
  if (!isSqlite(dataSource)) return undefined;
  return (dataSource.driver as unknown as { databaseConnection?: SqliteHandle }).databaseConnection;
}

function mysqlPool(dataSource: DataSource): MysqlCallbackPool | undefined {
  if (dataSource.options.type !== 'mysql') return undefined;
  return (dataSource.driver as unknown as { pool?: MysqlCallbackPool }).pool;
}

/**
 * The driver's own client, for a library that takes one (rate-limiter-flexible): mysql2's pool,
 * or better-sqlite3's connection.
 */
export function nativeClient(dataSource: DataSource): { mysqlPool: unknown } | { sqlite: unknown } {
  return isSqlite(dataSource) ? { sqlite: sqliteConnection(dataSource) } : { mysqlPool: mysqlPool(dataSource) };
}

/** Connections in use and requests waiting in a MySQL pool; undefined without one (SQLite). */
export function poolCounts(dataSource: DataSource): { inUse: number; waiting: number } | undefined {
  const pool = mysqlPool(dataSource);
  if (!pool) return undefined;
  const count = (n?: { length: number }) => n?.length ?? 0;
  return { inUse: count(pool._allConnections) - count(pool._freeConnections), waiting: count(pool._connectionQueue) };
}

/**
 * A fixed SELECT run by the driver itself, past TypeORM's query runner (a pooled connection
 * taken and given back, logging and event hooks, mysql2's promise wrapper capturing a stack per
 * query: together about 5 % of a session read in the profile). Same pool or connection, so the
 * same settings and the same rows; errors are the driver's own (lib/graphql-errors.ts reads both).
 */
export function driverSelect(
  dataSource: DataSource,
  sql: string,
): (params: unknown[]) => Promise<Record<string, unknown>[]> {
  const select = untracedSelect(dataSource, sql);
  // Tracing on: a span of the statement in a sampled trace (TypeORM's own statements get theirs
  // from its query events, lib/tracing/database.ts traceStatements).
  if (!tracingEnabled()) return select;
  return (params) => (recording() ? inStatementSpan(dataSource, sql, () => select(params)) : select(params));
}

function untracedSelect(
  dataSource: DataSource,
  sql: string,
): (params: unknown[]) => Promise<Record<string, unknown>[]> {
  if (isSqlite(dataSource)) {
    let prepared: { db: SqliteHandle; statement: ReturnType<SqliteHandle['prepare']> } | undefined;
    // async, so that the throw below reaches the caller as a rejection, like the other drivers' errors
    // eslint-disable-next-line @typescript-eslint/require-await
    return async (params) => {
      const db = sqliteConnection(dataSource);
      if (!dataSource.isInitialized || !db) throw new Error('Pool is closed: the data source is not initialized');
      if (prepared?.db !== db) prepared = { db, statement: db.prepare(sql) };
      return prepared.statement.all(...params) as Record<string, unknown>[];
    };
  }
  if (dataSource.options.type === 'mysql') {
    return (params) =>
      new Promise((resolve, reject) => {
        const pool = mysqlPool(dataSource);
        if (!dataSource.isInitialized || !pool)
          return reject(new Error('Pool is closed: the data source is not initialized'));
        pool.query(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as Record<string, unknown>[])));
      });
  }
  return async (params) => await dataSource.query<Record<string, unknown>[]>(sql, params);
}
