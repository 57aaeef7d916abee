// Every text column of every database the project makes is utf8mb4 on MySQL: a utf8mb3 column
// (rate_limits.key, made by rate-limiter-flexible) refused 4-byte characters and a login with an
// emoji answered 500 (issue 29, item 10). Tables' defaults too, so that a column added later
// without a character set of its own is utf8mb4 as well.
import mysql from 'mysql2/promise';
import { mysqlServer } from '../../lib/database/mysql-url';
import { startTestServer, TEST_DB, TestServer } from '../helpers/server';

const onMysql = TEST_DB === 'mysql' ? describe : describe.skip;

onMysql('MySQL character sets', () => {
  let server: TestServer;
  let conn: mysql.Connection;
  beforeAll(async () => {
    server = await startTestServer();
    const { host, port, user, password } = mysqlServer(server.config);
    conn = await mysql.createConnection({ host, port, user, password });
  });
  afterAll(async () => {
    await conn?.end();
    await server?.close();
  });

  const prefix = () => mysqlServer(server.config).prefix.replace(/[\\%_]/g, '\\$&');

  it('every text column of every subgraph database and of the event log is utf8mb4', async () => {
    const [rows] = await conn.query(
      'SELECT TABLE_SCHEMA AS db, TABLE_NAME AS tbl, COLUMN_NAME AS col, CHARACTER_SET_NAME AS charset FROM information_schema.COLUMNS ' +
        'WHERE TABLE_SCHEMA LIKE ? AND CHARACTER_SET_NAME IS NOT NULL ORDER BY 1, 2, 3',
      [`${prefix()}\\_%`],
    );
    const columns = rows as { db: string; tbl: string; col: string; charset: string }[];
    const suffixes = new Set(columns.map((c) => c.db.slice(mysqlServer(server.config).prefix.length + 1)));
    expect([...suffixes].sort()).toEqual(expect.arrayContaining(['auth', 'events', 'tts']));
    expect(columns.some((c) => c.tbl === 'rate_limits' && c.col === 'key')).toBe(true);
    expect(
      columns.filter((c) => c.charset !== 'utf8mb4').map((c) => `${c.db}.${c.tbl}.${c.col}: ${c.charset}`),
    ).toEqual([]);
  });

  it('every table and database defaults to utf8mb4', async () => {
    const [tables] = await conn.query(
      'SELECT TABLE_SCHEMA AS db, TABLE_NAME AS tbl, TABLE_COLLATION AS collation FROM information_schema.TABLES WHERE TABLE_SCHEMA LIKE ?',
      [`${prefix()}\\_%`],
    );
    const [databases] = await conn.query(
      'SELECT SCHEMA_NAME AS db, DEFAULT_CHARACTER_SET_NAME AS charset FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE ?',
      [`${prefix()}\\_%`],
    );
    expect(
      (tables as { db: string; tbl: string; collation: string }[])
        .filter((t) => !t.collation.startsWith('utf8mb4_'))
        .map((t) => `${t.db}.${t.tbl}: ${t.collation}`),
    ).toEqual([]);
    expect((databases as { db: string; charset: string }[]).filter((d) => d.charset !== 'utf8mb4')).toEqual([]);
  });
});
