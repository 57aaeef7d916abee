// Documented behaviours of one process: an X-Forwarded-For from a hop that TRUST_PROXY does
// not trust is ignored (rate limits count the real peer), by default from anyone, loopback
// included; a forwarded address that is not an IP is ignored even from a trusted hop
// (docs/client-addresses.md); and a generated key pair survives a restart (tokens issued before
// it still work). On SQLite and on MySQL.
import { startServer } from '../../bin/all-in-one';
import { api, login } from '../helpers/http';
import { loadConfig } from '../../lib/config';
import { ADMIN, cleanupDatabases, isolatedEnv, startTestServer, TestServer } from '../helpers/server';

it('ignores X-Forwarded-For from a peer TRUST_PROXY does not trust: the per-address limit counts the peer', async () => {
  // Loopback (this test) is not trusted here; 203.0.113.0/24 would be.
  const server = await startTestServer({ TRUST_PROXY: '203.0.113.1', LOGIN_MAX_ATTEMPTS_PER_CLIENT: '3' });
  try {
    const http = api(server.url);
    const attempt = (ip: string) =>
      http.post(
        '/api/v1/auth/login',
        { username: `nobody-${ip}`, password: 'wrong password' },
        { headers: { 'x-forwarded-for': ip } },
      );
    for (const ip of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) expect((await attempt(ip)).status).toBe(401);
    // A fourth "address" is still the same peer: over its limit.
    const fourth = await attempt('198.51.100.4');
    expect(fourth.status).toBe(429);
    expect(fourth.body.error).toBe('rate_limit_exceeded');
  } finally {
    await server.close();
  }
});

it('trusts no one by default: X-Forwarded-For from loopback is ignored, the per-address limit counts the peer', async () => {
  const server = await startTestServer({ LOGIN_MAX_ATTEMPTS_PER_CLIENT: '2' });
  try {
    const http = api(server.url);
    const attempt = (ip: string) =>
      http.post(
        '/api/v1/auth/login',
        { username: `nobody-${ip}`, password: 'wrong password' },
        { headers: { 'x-forwarded-for': ip } },
      );
    expect((await attempt('198.51.100.1')).status).toBe(401);
    expect((await attempt('198.51.100.2')).status).toBe(401);
    expect((await attempt('198.51.100.3')).status).toBe(429);
    // The right password from a fourth "address" is still the same peer: over its limit.
    expect(
      (await http.post('/api/v1/auth/login', ADMIN, { headers: { 'x-forwarded-for': '198.51.100.4' } })).status,
    ).toBe(429);
  } finally {
    await server.close();
  }
});

describe('with TRUST_PROXY=loopback', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ TRUST_PROXY: 'loopback' });
  });
  afterAll(() => server?.close());

  /** The address a session records for a login that claims `forwardedFor`. */
  async function recordedAddress(forwardedFor: string): Promise<string> {
    const http = api(server.url);
    const res = await http.post('/api/v1/auth/login', ADMIN, { headers: { 'x-forwarded-for': forwardedFor } });
    expect(res.status).toBe(202);
    const sessions = await http.get('/api/v1/auth/sessions?limit=100', { token: res.body.access_token });
    return sessions.body.items.find((s: any) => s.session_id === res.body.session_id).ip_address;
  }

  it('believes a forwarded address that parses as an IP', async () => {
    expect(await recordedAddress('203.0.113.9')).toBe('203.0.113.9');
    expect(await recordedAddress('2001:db8::7')).toBe('2001:db8::7');
    // The loopback hop is trusted, the next one is not: it is the client.
    expect(await recordedAddress('198.51.100.7, 203.0.113.10')).toBe('203.0.113.10');
  });

  it('ignores a forwarded address that is not an IP: the hop that sent it is the client', async () => {
    for (const claim of ['<script>alert(1)</script>', 'example.com', '203.0.113.9:4711', '203.0.113.5, <script>', '']) {
      expect(await recordedAddress(claim)).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    }
  });
});

it('keeps a generated key pair across a restart: a token issued before it still works', async () => {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
    AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
    ...isolatedEnv(),
  });
  try {
    const first = await startServer(config);
    const tokens = await login(first.url, ADMIN);
    const jwks = (await api(first.url).get('/.well-known/jwks.json')).body;
    await first.close();
    // The same data folder and databases, a new start: the key pair is read, not made again.
    const again = await startServer(config);
    try {
      const http = api(again.url);
      expect((await http.get('/.well-known/jwks.json')).body).toEqual(jwks);
      const session = await http.get('/api/v1/auth/session', { token: tokens.access_token });
      expect(session.status).toBe(200);
      expect(session.body.session_id).toBe(tokens.session_id);
      expect((await http.post('/api/v1/auth/refresh', { refresh_token: tokens.refresh_token })).status).toBe(202);
    } finally {
      await again.close();
    }
  } finally {
    await cleanupDatabases(config);
  }
});
