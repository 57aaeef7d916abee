// The connection budget (CONTRACT "Beyond one machine"): one process holds at most
// DATABASE_POOL_SIZE connections per MySQL server, however many module databases it opens. The
// one-process server runs every module (eight databases, schemas of one server) under load from
// many concurrent requests across the modules, while the test counts the server's connections in
// information_schema.PROCESSLIST: every connection of the server is in one of its schemas (its
// databases' names start with the test's own prefix), the test's counting connection in none.
import mysql from 'mysql2/promise';
import { sharedPoolConnections, sharedPoolDriver } from '../../lib/database/shared-pool';
import { api, createUserAndLogin, login } from '../helpers/http';
import { ADMIN, MYSQL_URL, startTestServer, TEST_DB, TestServer } from '../helpers/server';

// The smallest pool that works: a transaction that reads another database needs a second connection.
const POOL = 2;
const onMysql = TEST_DB === 'mysql' ? describe : describe.skip;

onMysql('the connection budget on MySQL', () => {
  let server: TestServer;
  let counter: mysql.Connection;
  let prefix: string;

  beforeAll(async () => {
    server = await startTestServer({ SUBGRAPHS: '', DATABASE_POOL_SIZE: String(POOL) });
    prefix = new URL(server.config.DATABASE_URL).pathname.slice(1);
    const url = new URL(MYSQL_URL);
    counter = await mysql.createConnection({
      host: url.hostname,
      port: Number(url.port || 3306),
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
    });
  });

  afterAll(async () => {
    await counter?.end();
    await server?.close();
  });

  async function serverConnections(): Promise<number> {
    const [rows] = await counter.query('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB LIKE ?', [
      `${prefix.replace(/_/g, '\\_')}\\_%`,
    ]);
    return Number((rows as { n: number }[])[0].n);
  }

  it('never holds more than DATABASE_POOL_SIZE connections, every module busy at once', async () => {
    const admin = await login(server.url, ADMIN);
    const users = await Promise.all(
      [1, 2, 3].map((i) => createUserAndLogin(server.url, admin.access_token, `budget${i}`)),
    );
    const client = api(server.url);
    let running = true;
    let most = 0;
    let mostInPool = 0;
    const sampler = (async () => {
      while (running) {
        most = Math.max(most, await serverConnections());
        mostInPool = Math.max(mostInPool, sharedPoolConnections());
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const statuses: number[] = [];
    // Reads and writes on every module at once, far more requests in flight than connections.
    for (let round = 0; round < 4; round++) {
      await Promise.all(
        users.flatMap((user, i) => {
          const token = user.token;
          return [
            client.post('/api/v1/notes', { title: `n${round}-${i}`, body: 'budget' }, { token }),
            client.get('/api/v1/notes', { token }),
            client.get('/api/v1/notes/folders', { token }),
            client.post('/api/v1/vault/items', { url: `https://example.com/${round}/${i}` }, { token }),
            client.get('/api/v1/vault/items', { token }),
            client.get('/api/v1/tts/voices', { token }),
            client.get('/api/v1/tts/syntheses', { token }),
            client.get('/api/v1/hubs', { token }),
            client.get('/api/v1/integrations/webhooks', { token }),
            client.get('/api/v1/auth/sessions', { token }),
            client.get('/api/v1/auth/session', { token }),
            client.post('/api/v1/auth/login', { username: user.username, password: user.password }),
          ].map((p) => p.then((res) => statuses.push(res.status)));
        }),
      );
    }
    running = false;
    await sampler;
    // The load went through: no request failed for want of a connection.
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses.length).toBe(4 * 3 * 12);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(POOL);
    expect(mostInPool).toBeLessThanOrEqual(POOL);
    // Every module's database is open in this process: eight schemas, one pool.
    expect(await serverConnections()).toBeLessThanOrEqual(POOL);
  }, 120_000);

  it('hands out a free connection already in the asked schema before one that needs a USE', async () => {
    const url = new URL(MYSQL_URL);
    // A pool of its own (another timezone: another key), over two of the server's schemas.
    const options = {
      host: url.hostname,
      port: Number(url.port || 3306),
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      timezone: '+01:00',
      connectionLimit: 3,
    };
    const notes = sharedPoolDriver(`${prefix}_notes`).createPool(options);
    const hubs = sharedPoolDriver(`${prefix}_hubs`).createPool(options);
    type Taken = { threadId: number; release(): void };
    const take = (pool: typeof notes) =>
      new Promise<Taken>((resolve, reject) =>
        pool.getConnection((err, c) => (err || !c ? reject(err ?? new Error('none')) : resolve(c))),
      );
    try {
      const inNotes = await take(notes);
      const inHubs = await take(hubs);
      // Both free; the pool would take the last one given back (hubs') next.
      inNotes.release();
      inHubs.release();
      const again = await take(notes);
      expect(again.threadId).toBe(inNotes.threadId);
      again.release();
    } finally {
      await new Promise((resolve) => notes.end(resolve));
      await new Promise((resolve) => hubs.end(resolve));
    }
  });
});
