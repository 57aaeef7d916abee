// Usernames outside the Basic Multilingual Plane (emoji: 4 bytes in UTF-8) reach every table
// they are written to, the login rate limits' included: on MySQL a utf8mb3 column refused them
// and login answered 500 (issue 29, item 10).
import { api } from '../helpers/http';
import { startTestServer, TestServer } from '../helpers/server';

let server: TestServer;
let http: ReturnType<typeof api>;

beforeAll(async () => {
  server = await startTestServer({ LOGIN_MAX_FAILURES_PER_USER: '3' });
  http = api(server.url);
});
afterAll(() => server.close());

describe('a login with an emoji in the username', () => {
  it('is refused as unknown (401), not a server error', async () => {
    const res = await http.post('/api/v1/auth/login', { username: 'user 😀', password: 'not the password' });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('unauthorized');
  });

  it('is counted under its own name: another emoji is not locked with it', async () => {
    for (let i = 0; i < 3; i++)
      expect(
        (await http.post('/api/v1/auth/login', { username: 'lock 🐙', password: 'not the password' })).status,
      ).toBe(401);
    expect((await http.post('/api/v1/auth/login', { username: 'lock 🐙', password: 'not the password' })).status).toBe(
      429,
    );
    // A collation that folds every emoji to one weight (utf8mb4_unicode_ci) would lock this one too.
    expect((await http.post('/api/v1/auth/login', { username: 'lock 🦑', password: 'not the password' })).status).toBe(
      401,
    );
  });
});
