import { api } from '../helpers/http';
import { MYSQL_URL, startTestServer, TEST_DATABASE_PREFIX, TEST_DB, TestServer } from '../helpers/server';
import { startTcpProxy, TcpProxy } from '../helpers/tcp-proxy';
import { until } from '../helpers/wait';

// An embedded SQLite file cannot become unreachable; the MySQL pass puts a proxy it can
// cut between the server and the database.
const onMysql = TEST_DB === 'mysql' ? describe : describe.skip;

onMysql('readiness follows the database', () => {
  let proxy: TcpProxy;
  let server: TestServer;
  beforeAll(async () => {
    const target = new URL(MYSQL_URL);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 3306));
    const url = new URL(MYSQL_URL);
    url.port = String(proxy.port);
    url.pathname = `/${TEST_DATABASE_PREFIX}_ready_${process.pid}`;
    server = await startTestServer({ DATABASE_URL: url.toString() });
  }, 30_000);
  afterAll(async () => {
    proxy.restore();
    await server.close();
    await proxy.close();
  }, 30_000);

  it('is 200 while the database answers, 503 while it does not, and 200 again when it returns', async () => {
    const http = api(server.url);
    expect((await http.get('/health/ready')).status).toBe(200);

    proxy.cut();
    const down = await http.get('/health/ready');
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ status: 'not_ready', checks: expect.objectContaining({ database: 'down' }) });
    expect((await http.get('/health/live')).status).toBe(200);
    // A request that needs the database fails cleanly, not with a crash.
    const login = await http.post('/api/v1/auth/login', { username: 'admin', password: 'whatever pw' });
    expect(login.status).toBe(503);
    expect(login.body.error).toBe('service_unavailable');

    proxy.restore();
    // Ready again as soon as the pool reconnects: waited for, not slept through in steps.
    expect(
      await until(
        async () => ((await http.get('/health/ready')).status === 200 ? 200 : undefined),
        'readiness 200 after the database returned',
        20_000,
      ),
    ).toBe(200);
    expect((await http.post('/api/v1/auth/login', { username: 'nobody', password: 'whatever pw' })).status).toBe(401);
  }, 30_000);
});
