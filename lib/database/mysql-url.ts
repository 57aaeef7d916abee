// The one reading of a `mysql://user:password@host:port[/prefix]` DATABASE_URL: TypeORM's
// options, the server connection that creates databases and the start-up error all use it.
import type { Config } from '../config';

export interface MysqlServer {
  host: string;
  port: number;
  user: string;
  password: string;
  /** The URL's path: prefixes each subgraph's database name (mysql://…/shop → shop_auth). */
  prefix: string;
}

export function isMysql(config: Pick<Config, 'DATABASE_URL'>): boolean {
  return config.DATABASE_URL.startsWith('mysql://');
}

export function mysqlServer(config: Pick<Config, 'DATABASE_URL'>): MysqlServer {
  const url = new URL(config.DATABASE_URL);
  return {
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    prefix: url.pathname.replace(/^\//, ''),
  };
}

/** The database that holds `name` (a subgraph, or the event log) on this server. */
export function mysqlDatabaseName(config: Pick<Config, 'DATABASE_URL'>, name: string): string {
  const { prefix } = mysqlServer(config);
  return prefix ? `${prefix}_${name}` : name;
}
