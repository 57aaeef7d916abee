// The MySQL server itself, apart from any one database: creating a subgraph's database before
// TypeORM connects to it, and dropping a test's or benchmark's databases afterwards.
import type Mysql from 'mysql2/promise';
import type { Config } from '../config';
import { isMysql, mysqlServer } from './mysql-url';

/** What every database and connection of the project uses: 4-byte UTF-8 (emoji included). */
export const MYSQL_CHARSET = 'utf8mb4';
export const MYSQL_COLLATION = 'utf8mb4_unicode_ci';

/** A connection to the MySQL server itself (no database), for creating and dropping databases. */
function serverConnection(config: Config) {
  const { host, port, user, password } = mysqlServer(config);
  // Required here: a process on SQLite never loads the driver (issue 44's idle memory).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mysql = require('mysql2/promise') as typeof Mysql;
  return mysql.createConnection({ host, port, user, password, charset: MYSQL_COLLATION, connectTimeout: 5000 });
}

/**
 * Creates the database if it is missing, and makes utf8mb4 its default either way: a table or
 * column made later without a character set of its own (a migration, a library's table) gets
 * utf8mb4 rather than whatever the server's default is.
 */
export async function createMysqlDatabase(config: Config, name: string): Promise<void> {
  const conn = await serverConnection(config);
  try {
    await conn.query(`CREATE DATABASE IF NOT EXISTS ?? CHARACTER SET ${MYSQL_CHARSET} COLLATE ${MYSQL_COLLATION}`, [
      name,
    ]);
    const [rows] = await conn.query(
      'SELECT DEFAULT_CHARACTER_SET_NAME AS charset FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?',
      [name],
    );
    // Only when needed: ALTER needs a privilege that an operator's user may lack.
    if ((rows as { charset: string }[])[0]?.charset !== MYSQL_CHARSET) {
      await conn.query(`ALTER DATABASE ?? CHARACTER SET ${MYSQL_CHARSET} COLLATE ${MYSQL_COLLATION}`, [name]);
    }
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
  const { prefix } = mysqlServer(config);
  if (!prefix) throw new Error('refusing to drop databases without a prefix in DATABASE_URL');
  const conn = await serverConnection(config);
  try {
    const [rows] = await conn.query('SHOW DATABASES LIKE ?', [`${prefix.replace(/[\\%_]/g, '\\$&')}\\_%`]);
    for (const row of rows as Record<string, string>[])
      await conn.query('DROP DATABASE IF EXISTS ??', [Object.values(row)[0]]);
  } finally {
    await conn.end();
  }
}
