// The database facts that differ between SQLite and MySQL, for portable migrations and services.
import type { QueryRunner, TableColumnOptions } from 'typeorm';

/** Affected-row count of an UPDATE/DELETE, the same on both drivers. */
export function affectedRows(result: { affected?: number | null }): number {
  return result.affected ?? 0;
}

/** Column options that differ by driver, for portable migrations. */
export function columns(queryRunner: QueryRunner) {
  const mysqlDriver = queryRunner.connection.options.type === 'mysql';
  return {
    uuid: (name: string, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
      name,
      type: 'varchar',
      length: '36',
      ...extra,
    }),
    string: (name: string, length: number, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
      name,
      type: 'varchar',
      length: String(length),
      ...extra,
    }),
    /** A case-folded key compared byte for byte (MySQL's default collation would also fold accents). */
    key: (name: string, length: number, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
      name,
      type: 'varchar',
      length: String(length),
      ...(mysqlDriver ? { collation: 'utf8mb4_bin' } : {}),
      ...extra,
    }),
    text: (name: string, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
      name,
      type: mysqlDriver ? 'mediumtext' : 'text',
      ...extra,
    }),
    timestamp: (name: string, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
      name,
      type: 'datetime',
      precision: mysqlDriver ? 3 : undefined,
      ...extra,
    }),
    int: (name: string, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
      name,
      type: 'integer',
      ...extra,
    }),
    /** An auto-incrementing sequence: BIGINT on MySQL, INTEGER (the rowid) on SQLite. */
    sequence: (name: string): TableColumnOptions => ({
      name,
      type: mysqlDriver ? 'bigint' : 'integer',
      isPrimary: true,
      isGenerated: true,
      generationStrategy: 'increment',
    }),
    double: (name: string, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
      name,
      type: mysqlDriver ? 'double' : 'real',
      ...extra,
    }),
  };
}

/** A unique-key violation on either driver (duplicate name, concurrent insert of the same key). */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; driverError?: { code?: string } };
  const code = e?.driverError?.code ?? e?.code;
  return code === 'ER_DUP_ENTRY' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
