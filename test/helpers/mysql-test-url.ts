// MYSQL_TEST_URL (default mysql://root@127.0.0.1:3306): the MySQL server the tests and benchmarks
// use. Its path, if any, prefixes every database they make (mysql://…:3306/ci → ci_<random>_auth),
// so that a shared server's other databases are never touched: dropping a test's databases drops
// only `<prefix>_<random>_*`. Without a path: `t` for tests, `bench` for benchmarks.

export interface MysqlTestServer {
  /** The server's URL without a path: mysql://user:password@host:port */
  server: string;
  prefix: string;
}

export function mysqlTestServer(
  defaultPrefix: string,
  raw = process.env.MYSQL_TEST_URL || 'mysql://root@127.0.0.1:3306',
): MysqlTestServer {
  const url = new URL(raw);
  const prefix = decodeURIComponent(url.pathname.replace(/^\//, '')) || defaultPrefix;
  // Room for `_<10 hex>_<subgraph>` within MySQL's 64 characters, and nothing to quote.
  if (url.protocol !== 'mysql:' || !/^[A-Za-z0-9_]{1,32}$/.test(prefix)) {
    throw new Error(
      `MYSQL_TEST_URL must be mysql://user:password@host:port[/prefix] with a prefix of 1–32 letters, digits or _ (got ${raw.replace(/\/\/[^@]*@/, '//…@')})`,
    );
  }
  url.pathname = '';
  return { server: url.toString().replace(/\/$/, ''), prefix };
}
