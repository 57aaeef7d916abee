import { api } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

const WRONG = { username: ADMIN.username, password: 'wrong password' };

describe('login rate limits', () => {
  let server: TestServer;
  let http: ReturnType<typeof api>;
  beforeAll(async () => {
    server = await startTestServer({ LOGIN_MAX_FAILURES_PER_USER: '3', LOGIN_MAX_ATTEMPTS_PER_CLIENT: '12' });
    http = api(server.url);
  });
  afterAll(() => server.close());

  it('blocks a username + address after the allowed failures, with Retry-After; a success first clears the count', async () => {
    for (let i = 0; i < 2; i++) expect((await http.post('/api/v1/auth/login', WRONG)).status).toBe(401);
    expect((await http.post('/api/v1/auth/login', ADMIN)).status).toBe(202); // clears the failures
    for (let i = 0; i < 3; i++) expect((await http.post('/api/v1/auth/login', WRONG)).status).toBe(401);

    const blocked = await http.post('/api/v1/auth/login', ADMIN);
    expect(blocked.status).toBe(429);
    expect(blocked.body.error).toBe('rate_limit_exceeded');
    const retryAfter = Number(blocked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(900);
    // The block is per username: another name from the same address is still judged normally.
    expect((await http.post('/api/v1/auth/login', { username: 'someone-else', password: 'wrong password' })).status).toBe(401);
  });

  it('limits all attempts per client address', async () => {
    // 7 attempts so far in this file; the limit is 12.
    const results: number[] = [];
    for (let i = 0; i < 6; i++) results.push((await http.post('/api/v1/auth/login', { username: `user${i}`, password: 'wrong password' })).status);
    expect(results.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(results[5]).toBe(429);
  });
});

describe('login rate limits shared by two instances on one database', () => {
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    a = await startTestServer({ LOGIN_MAX_FAILURES_PER_USER: '2' });
    // The second instance uses the first one's database and data folder.
    b = await startTestServer({ LOGIN_MAX_FAILURES_PER_USER: '2', DATA_DIR: a.config.DATA_DIR, DATABASE_URL: a.config.DATABASE_URL });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('counts failures made through either instance', async () => {
    expect((await api(a.url).post('/api/v1/auth/login', WRONG)).status).toBe(401);
    expect((await api(b.url).post('/api/v1/auth/login', WRONG)).status).toBe(401);
    expect((await api(a.url).post('/api/v1/auth/login', ADMIN)).status).toBe(429);
  });
});
