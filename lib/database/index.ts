// The data layer, one module per concern:
//   open.ts          open a subgraph's database, migrate it under a lock
//   mysql-url.ts     the one reading of a mysql:// DATABASE_URL
//   mysql-admin.ts   create and drop MySQL databases (utf8mb4)
//   ping.ts          readiness's SELECT 1
//   transactions.ts  inTransaction (SQLite's queue), onCommit, lock-conflict retry
//   portable.ts      column types and driver facts that differ between SQLite and MySQL
//   reads.ts         fixed-SQL reads (committed, by key, any row)
//   driver.ts        the one adapter to TypeORM's driver internals
// Project code imports the module it needs; this index keeps `lib/database` importable as one.
export { openDatabase, runMigrationsLocked, StartupError } from './open';
export { isMysql, mysqlDatabaseName, mysqlServer } from './mysql-url';
export { dropPrefixedDatabases } from './mysql-admin';
export { pingDatabase } from './ping';
export { inTransaction, onCommit, retryOnLockConflict } from './transactions';
export { affectedRows, columns, isUniqueViolation } from './portable';
export { anyRow, fixedSelect, persistedValue, rowReader, selectCommitted } from './reads';
