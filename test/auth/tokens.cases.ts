import { api, createUserAndLogin } from '../helpers/http';
import { ADMIN, sharedTestServer, TestServer } from '../helpers/server';
import { decode, otherKey, serverPrivateKey, signWith, unsigned } from '../helpers/tokens';
import { until } from '../helpers/wait';

let server: TestServer;
let http: ReturnType<typeof api>;

beforeAll(async () => {
  server = await sharedTestServer();
  http = api(server.url);
});
afterAll(() => server.close());

const login = async () => {
  const res = await http.post('/api/v1/auth/login', ADMIN);
  expect(res.status).toBe(202);
  return res.body as { access_token: string; refresh_token: string; session_id: string };
};

async function expectUnauthorized(token: string | undefined, header?: string) {
  const res = await http.get('/api/v1/auth/session', header ? { headers: { authorization: header } } : { token });
  expect(res.status).toBe(401);
  expect(res.body.error).toBe('unauthorized');
  expect(res.headers.get('www-authenticate')).toBe('Bearer');
}

describe('tokens that GET /api/v1/auth/session refuses', () => {
  it('no token, a garbage token, a non-Bearer scheme', async () => {
    await expectUnauthorized(undefined);
    await expectUnauthorized('garbage');
    await expectUnauthorized(undefined, `Basic ${Buffer.from('admin:pw').toString('base64')}`);
  });

  it('alg none, a wrong signature, an expired token', async () => {
    const tokens = await login();
    const claims = decode(tokens.access_token);
    await expectUnauthorized(unsigned(tokens.access_token));
    await expectUnauthorized(signWith(otherKey(), claims));
    const { exp: _exp, iat: _iat, ...rest } = claims;
    const key = serverPrivateKey(server.config.dataDir);
    // Signed with the server's own key: only the expiry is wrong.
    await expectUnauthorized(
      signWith(key, { ...rest, iat: Math.floor(Date.now() / 1000) - 7200 }, { expiresIn: -3600 }),
    );
    expect(
      (await http.get('/api/v1/auth/session', { token: signWith(key, { ...rest }, { expiresIn: 60 }) })).status,
    ).toBe(200);
  });

  it('a refresh token where an access token is required, and the reverse', async () => {
    const tokens = await login();
    await expectUnauthorized(tokens.refresh_token);
    const res = await http.post('/api/v1/auth/refresh', { refresh_token: tokens.access_token });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('unauthorized');
  });
});

describe('refresh and logout', () => {
  it('rotates: the new set works, the old refresh token is spent, and reusing it revokes the session', async () => {
    const first = await login();
    const refreshed = await http.post('/api/v1/auth/refresh', { refresh_token: first.refresh_token });
    expect(refreshed.status).toBe(202);
    expect(refreshed.body.session_id).toBe(first.session_id);
    expect(refreshed.headers.get('location')).toBe(`/api/v1/auth/session/${first.session_id}`);
    expect(refreshed.body.refresh_token).not.toBe(first.refresh_token);
    expect((await http.get('/api/v1/auth/session', { token: refreshed.body.access_token })).status).toBe(200);

    const reuse = await http.post('/api/v1/auth/refresh', { refresh_token: first.refresh_token });
    expect(reuse.status).toBe(401);
    // Reuse means theft: every token of the session is dead now.
    await expectUnauthorized(refreshed.body.access_token);
    expect((await http.post('/api/v1/auth/refresh', { refresh_token: refreshed.body.refresh_token })).status).toBe(401);
  });

  it('logout revokes the session and its tokens', async () => {
    const tokens = await login();
    const out = await http.post('/api/v1/auth/logout', undefined, { token: tokens.access_token });
    expect(out.status).toBe(202);
    expect(out.body).toEqual({ id: tokens.session_id, message: expect.any(String) });
    expect(out.headers.get('location')).toBe(`/api/v1/auth/session/${tokens.session_id}`);
    await expectUnauthorized(tokens.access_token);
    expect((await http.post('/api/v1/auth/refresh', { refresh_token: tokens.refresh_token })).status).toBe(401);
  });

  it('another session of the same user stays usable after a logout', async () => {
    const a = await login();
    const b = await login();
    await http.post('/api/v1/auth/logout', undefined, { token: a.access_token });
    const res = await http.get(`/api/v1/auth/session/${b.session_id}`, { token: b.access_token });
    expect(res.status).toBe(200);
    expect(res.body.state).toBe('active');
  });

  it("another user's session, a malformed id and an unknown id", async () => {
    const tokens = await login();
    expect((await http.get('/api/v1/auth/session/not-a-uuid', { token: tokens.access_token })).body.error).toBe(
      'validation_error',
    );
    const unknown = await http.get('/api/v1/auth/session/00000000-0000-4000-8000-000000000000', {
      token: tokens.access_token,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('not_found');

    // Another user's real session looks exactly like an unknown one.
    const other = await createUserAndLogin(server.url, tokens.access_token, `other-${Date.now()}`);
    const foreign = await http.get(`/api/v1/auth/session/${other.tokens.session_id}`, { token: tokens.access_token });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(unknown.body);
    expect((await http.get(`/api/v1/auth/session/${other.tokens.session_id}`, { token: other.token })).status).toBe(
      200,
    );
  });
});

describe('a subgraph that cannot read the auth database (tts)', () => {
  // It learns of a revocation from the session.revoked event, relayed within EVENT_POLL_MS:
  // wait for the refusal itself, not for a time.
  const ttsRefuses = (token: string) =>
    until(
      async () => {
        const rest = await http.get('/api/v1/tts/voices', { token });
        const gql = await http.graphql('{ voices { items { id } } }', {}, token);
        return (
          rest.status === 401 &&
          rest.body.error === 'unauthorized' &&
          gql.body.errors?.[0]?.extensions?.code === 'unauthorized'
        );
      },
      'the tts subgraph to refuse the token',
      10_000,
    );

  it('refuses the tokens of a session that was logged out', async () => {
    const tokens = await login();
    expect((await http.get('/api/v1/tts/voices', { token: tokens.access_token })).status).toBe(200);
    expect((await http.post('/api/v1/auth/logout', undefined, { token: tokens.access_token })).status).toBe(202);
    await ttsRefuses(tokens.access_token);
    // Another session of the same user is not affected.
    expect((await http.get('/api/v1/tts/voices', { token: (await login()).access_token })).status).toBe(200);
  });

  it('refuses the tokens of a session revoked by refresh token reuse', async () => {
    const first = await login();
    const refreshed = await http.post('/api/v1/auth/refresh', { refresh_token: first.refresh_token });
    expect(refreshed.status).toBe(202);
    expect(
      (
        await http.post(
          '/api/v1/tts/voices',
          { name: `before reuse ${Date.now()}`, base_voice: 'f1' },
          { token: refreshed.body.access_token },
        )
      ).status,
    ).toBe(202);
    expect((await http.post('/api/v1/auth/refresh', { refresh_token: first.refresh_token })).status).toBe(401);
    await ttsRefuses(refreshed.body.access_token);
    await ttsRefuses(first.access_token);
  });
});
