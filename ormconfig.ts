// TypeORM data source options of each subgraph, for the embedded SQLite default and for
// MySQL/MariaDB. Each subgraph owns its database: a file on SQLite, a schema on MySQL.
import path from 'node:path';
import type { DataSourceOptions, Logger } from 'typeorm';
import type { Config } from './lib/config';
import { isMysql, mysqlDatabaseName, mysqlServer } from './lib/database/mysql-url';
import { sharedPoolDriver } from './lib/database/shared-pool';

export { isMysql, mysqlDatabaseName };

export interface DataSourceSpec {
  /** The subgraph (or service) that owns the database. */
  name: string;
  entities: Function[];
  migrations: Function[];
}

const nothing = () => undefined;
const silentLogger: Logger = {
  logQuery: nothing,
  logQueryError: nothing,
  logQuerySlow: nothing,
  logSchemaBuild: nothing,
  logMigration: nothing,
  log: nothing,
};

export function dataSourceOptions(config: Config, spec: DataSourceSpec): DataSourceOptions {
  const common = {
    entities: spec.entities,
    migrations: spec.migrations,
    migrationsTableName: 'migrations',
    migrationsRun: false,
    synchronize: false,
    logging: false,
    // TypeORM prints migration failures to the console whatever `logging` says; the entry
    // points report them (lib/database/open.ts names the migration), once.
    logger: silentLogger,
  } as const;
  if (!isMysql(config)) {
    return {
      ...common,
      type: 'better-sqlite3',
      database: path.join(config.dataDir, `${spec.name}.sqlite`),
      enableWAL: true,
      timeout: 10_000,
    };
  }
  const server = mysqlServer(config);
  const database = mysqlDatabaseName(config, spec.name);
  return {
    ...common,
    type: 'mysql',
    host: server.host,
    port: server.port,
    username: server.user,
    password: server.password,
    database,
    // One pool per server in the process, shared by every module's database (lib/database/shared-pool.ts):
    // DATABASE_POOL_SIZE connections to a server, however many databases the process opens.
    driver: sharedPoolDriver(database),
    charset: 'utf8mb4_unicode_ci',
    timezone: 'Z',
    poolSize: config.DATABASE_POOL_SIZE,
    connectTimeout: 5000,
    extra: { enableKeepAlive: true },
  };
}
