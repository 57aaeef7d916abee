// Reads that skip TypeORM's query building: fixed SQL prepared once, for what every request or
// every poll asks (lib/database/driver.ts runs it on the driver itself).
import type { DataSource } from 'typeorm';
import { inStatementSpan, recording } from '../tracing';
import { driverSelect, isSqlite, sqliteConnection } from './driver';

/**
 * One SELECT that sees committed rows only. SQLite has one connection, which may be inside
 * another caller's transaction between its statements (TypeORM's calls are asynchronous): wait
 * until it is not, then read synchronously, so that nothing can begin in between.
 */
export function selectCommitted<T>(dataSource: DataSource, sql: string, params: unknown[]): Promise<T[]> {
  // Traced on SQLite here (a sampled trace); on MySQL TypeORM's query events make its span.
  if (!isSqlite(dataSource)) return dataSource.query<T[]>(sql, params);
  if (!recording()) return selectCommittedOnSqlite<T>(dataSource, sql, params);
  return inStatementSpan(dataSource, sql, () => selectCommittedOnSqlite<T>(dataSource, sql, params));
}

async function selectCommittedOnSqlite<T>(dataSource: DataSource, sql: string, params: unknown[]): Promise<T[]> {
  const db = sqliteConnection(dataSource);
  if (!db) throw new Error('Pool is closed: the data source is not initialized');
  while (db.inTransaction) await new Promise((resolve) => setTimeout(resolve, 1));
  return db.prepare(sql).all(...params) as T[];
}

/**
 * A fixed SELECT prepared once and run by the driver itself, for a poll that mostly finds
 * nothing. Parameters as the driver takes them: a Date through persistedValue().
 */
export function fixedSelect(
  dataSource: DataSource,
  sql: string,
): (params: unknown[]) => Promise<Record<string, unknown>[]> {
  return driverSelect(dataSource, sql);
}

/** A value as the driver stores it in the entity's column (SQLite keeps dates as text). */
export function persistedValue(dataSource: DataSource, entity: Function, property: string, value: unknown): unknown {
  const column = dataSource.getMetadata(entity).findColumnWithPropertyName(property);
  if (!column) throw new Error(`${entity.name} has no column ${property}`);
  return dataSource.driver.preparePersistentValue(value, column);
}

/**
 * Whether the entity's table holds any row: fixed SQL, for the pollers that mostly find none
 * (an outbox that is empty between writes). TypeORM's find built its query anew on each of
 * them, several times a second with nothing to do.
 */
export function anyRow(dataSource: DataSource, entity: Function): () => Promise<boolean> {
  const select = driverSelect(
    dataSource,
    `SELECT 1 AS found FROM ${dataSource.driver.escape(dataSource.getMetadata(entity).tableName)} LIMIT 1`,
  );
  return async () => (await select([])).length > 0;
}

/**
 * A read of one row by primary key as fixed, parameterised SQL, hydrated into the entity
 * (dates and transformers applied by the driver as TypeORM does). For the reads every request
 * makes: TypeORM's findOneBy builds and escapes its SQL anew on each call, which was the
 * largest single cost of a session read in the CPU profile.
 */
export function rowReader<T extends object>(
  dataSource: DataSource,
  entity: new () => T,
): (id: string | number) => Promise<T | null> {
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
