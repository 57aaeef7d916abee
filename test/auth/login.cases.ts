import argon2 from 'argon2';
import { loadConfig } from '../../lib/config';
import { hashPassword, verifyPassword } from '../../subgraphs/auth/passwords';
import { api, ISO_DATE, UUID } from '../helpers/http';
import { ADMIN, sharedTestServer, TestServer } from '../helpers/server';

let server: TestServer;
let http: ReturnType<typeof api>;

beforeAll(async () => {
  server = await sharedTestServer();
  http = api(server.url);
});
afterAll(() => server.close());

describe('POST /api/v1/auth/login', () => {
  it('answers 202 with the token set and the session Location', async () => {
    const res = await http.post('/api/v1/auth/login', ADMIN);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      access_token: expect.any(String),
      refresh_token: expect.any(String),
      expires_in: 3600,
      token_type: 'Bearer',
      session_id: expect.stringMatching(UUID),
    });
    expect(res.headers.get('location')).toBe(`/api/v1/auth/session/${res.body.session_id}`);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('gives the same answer for a wrong password and an unknown user', async () => {
    const wrong = await http.post('/api/v1/auth/login', { username: ADMIN.username, password: 'not the password' });
    const unknown = await http.post('/api/v1/auth/login', { username: 'nobody-here', password: 'not the password' });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body.error).toBe('unauthorized');
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('checks an unknown username against a decoy argon2id hash, exactly like a wrong password', async () => {
    // The server runs in this process: count the argon2 verifications each answer cost.
    const verify = jest.spyOn(argon2, 'verify');
    try {
      const costOf = async (username: string) => {
        verify.mockClear();
        const res = await http.post('/api/v1/auth/login', { username, password: 'not the password' });
        expect(res.status).toBe(401);
        return verify.mock.calls.map(([hash]) => String(hash).replace(/\$[^$]*\$[^$]*$/, ''));
      };
      const known = await costOf(ADMIN.username);
      const unknown = await costOf(`nobody-${Date.now()}`);
      const again = await costOf(`nobody-else-${Date.now()}`);
      // One verification each, with the same parameters (argon2id, PASSWORD_HASH_MEMORY_KIB, t=2, p=1): same work.
      expect(known).toEqual([`$argon2id$v=19$m=${server.config.PASSWORD_HASH_MEMORY_KIB},p=1,t=2`]);
      expect(unknown).toEqual(known);
      expect(again).toEqual(known);
    } finally {
      verify.mockRestore();
    }
  });

  it("stores argon2id hashes at OWASP's minimum by default (19 MiB, t=2, p=1; the test servers' are cheaper)", async () => {
    const hash = await hashPassword('a password', loadConfig({}));
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
    expect(await verifyPassword(hash, 'a password')).toBe(true);
    expect(await verifyPassword(hash, 'another password')).toBe(false);
    expect(server.config.PASSWORD_HASH_MEMORY_KIB).toBe(1024);
  });

  it('names each bad field in details', async () => {
    const res = await http.post('/api/v1/auth/login', { username: '   ', password: 'short' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(Object.keys(res.body.details).sort()).toEqual(['password', 'username']);
    const missing = await http.post('/api/v1/auth/login', {});
    expect(missing.body.details).toEqual({ username: expect.any(Array), password: expect.any(Array) });
    const wrongType = await http.post('/api/v1/auth/login', { username: 42, password: ['x'] });
    expect(Object.keys(wrongType.body.details).sort()).toEqual(['password', 'username']);
  });

  it('accepts a username with surrounding spaces, and rejects one longer than 64 characters once trimmed', async () => {
    const padded = await http.post('/api/v1/auth/login', {
      username: `  ${ADMIN.username}  `,
      password: ADMIN.password,
    });
    expect(padded.status).toBe(202);
    const long = await http.post('/api/v1/auth/login', { username: 'x'.repeat(65), password: 'long enough' });
    expect(long.status).toBe(400);
    expect(long.body.details.username).toBeDefined();
  });
});

describe('GET /api/v1/auth/session', () => {
  it('returns the session of the token with every field in its format', async () => {
    const login = await http.post('/api/v1/auth/login', ADMIN);
    const res = await http.get('/api/v1/auth/session', { token: login.body.access_token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      session_id: login.body.session_id,
      user_id: expect.stringMatching(UUID),
      expires_at: expect.stringMatching(ISO_DATE),
      created_at: expect.stringMatching(ISO_DATE),
      last_activity_at: expect.stringMatching(ISO_DATE),
      state: 'active',
    });
    const lifetime = Date.parse(res.body.expires_at) - Date.parse(res.body.created_at);
    expect(lifetime).toBeGreaterThan(3590_000);
    expect(lifetime).toBeLessThanOrEqual(3601_000);

    const byId = await http.get(res.headers.get('location') ?? `/api/v1/auth/session/${login.body.session_id}`, {
      token: login.body.access_token,
    });
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual(res.body);
  });
});
