// TypeORM data source options of each subgraph, for the embedded SQLite default and for
// MySQL/MariaDB. Each subgraph owns its database: a file on SQLite, a schema on MySQL.
import path from 'node:path';
import type { DataSourceOptions, Logger } from 'typeorm';
import type { Config } from './lib/config';

export interface DataSourceSpec {
  /** The subgraph (or service) that owns the database. */
  name: string;
  entities: Function[];
  migrations: Function[];
}

export function isMysql(config: Pick<Config, 'DATABASE_URL'>): boolean {
  return config.DATABASE_URL.startsWith('mysql://');
}

/** On MySQL the URL's path, if any, prefixes each database name: mysql://…/shop → shop_auth. */
export function mysqlDatabaseName(config: Pick<Config, 'DATABASE_URL'>, name: string): string {
  const prefix = new URL(config.DATABASE_URL).pathname.replace(/^\//, '');
  return prefix ? `${prefix}_${name}` : name;
}

const nothing = () => undefined;
const silentLogger: Logger = { logQuery: nothing, logQueryError: nothing, logQuerySlow: nothing, logSchemaBuild: nothing, logMigration: nothing, log: nothing };

export function dataSourceOptions(config: Config, spec: DataSourceSpec): DataSourceOptions {
  const common = {
    entities: spec.entities,
    migrations: spec.migrations,
    migrationsTableName: 'migrations',
    migrationsRun: false,
    synchronize: false,
    logging: false,
    // TypeORM prints migration failures to the console whatever `logging` says; the entry
    // points report them (lib/database.ts names the migration), once.
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
  const url = new URL(config.DATABASE_URL);
  return {
    ...common,
    type: 'mysql',
    host: url.hostname,
    port: Number(url.port || 3306),
    username: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: mysqlDatabaseName(config, spec.name),
    charset: 'utf8mb4_unicode_ci',
    timezone: 'Z',
    poolSize: config.DATABASE_POOL_SIZE,
    connectTimeout: 5000,
    extra: { enableKeepAlive: true },
  };
}
