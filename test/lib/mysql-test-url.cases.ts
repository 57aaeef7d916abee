// MYSQL_TEST_URL's path names the test databases (issue 29, item 11).
import { mysqlTestServer } from '../helpers/mysql-test-url';

describe('mysqlTestServer', () => {
  it('takes the server from MYSQL_TEST_URL and its path as the prefix', () => {
    expect(mysqlTestServer('t', 'mysql://ci:s%40cret@db.example:3307/ci_run7')).toEqual({
      server: 'mysql://ci:s%40cret@db.example:3307',
      prefix: 'ci_run7',
    });
  });

  it('falls back to the default prefix without a path', () => {
    expect(mysqlTestServer('t', 'mysql://root@127.0.0.1:3306')).toEqual({
      server: 'mysql://root@127.0.0.1:3306',
      prefix: 't',
    });
    expect(mysqlTestServer('bench', 'mysql://root@127.0.0.1:3306/')).toEqual({
      server: 'mysql://root@127.0.0.1:3306',
      prefix: 'bench',
    });
  });

  it('refuses a prefix that cannot start a database name, without echoing the password', () => {
    for (const bad of [
      'mysql://root:pw@h:3306/a-b',
      'mysql://root:pw@h:3306/a%60b',
      `mysql://root:pw@h:3306/${'x'.repeat(33)}`,
      'postgres://root:pw@h/x',
    ]) {
      expect(() => mysqlTestServer('t', bad)).toThrow(/MYSQL_TEST_URL must be/);
      expect(() => mysqlTestServer('t', bad)).not.toThrow(/pw/);
    }
  });
});
