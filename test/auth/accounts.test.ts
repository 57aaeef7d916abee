// A person's own account over REST and GraphQL: their sessions (list, revoke one, revoke the
// others), their password (policy, wrong current password counting toward the login limits),
// and the audit events those write. Revocations are checked where they matter: at the auth
// subgraph and at the tts subgraph, which only learns of them through the event log.
import { api, createUserAndLogin, ISO_DATE, login, UUID } from '../helpers/http';
import { openStream, OpenStream } from '../helpers/sse';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { loadConfig } from '../../lib/config';
import { ADMIN, cleanupDatabases, isolatedEnv, startTestServer, TestServer } from '../helpers/server';

let server: TestServer;
let http: ReturnType<typeof api>;
let adminToken: string;
/** Every user's events, from before the first test: audit events are checked here. */
let audit: OpenStream;

const MAX_FAILURES = 3;

beforeAll(async () => {
  server = await startTestServer({
    LOGIN_MAX_FAILURES_PER_USER: String(MAX_FAILURES),
    LOGIN_MAX_ATTEMPTS_PER_CLIENT: '100000',
  });
  http = api(server.url);
  adminToken = (await login(server.url, ADMIN)).access_token;
  audit = await openStream(`${server.url}/api/v1/events?scope=all`, {
    token: (await login(server.url, ADMIN)).access_token,
  });
  expect(audit.status).toBe(200);
});
afterAll(async () => {
  audit?.close();
  await server?.close();
});

const loginAs = (username: string, password: string, userAgent: string) =>
  http.post('/api/v1/auth/login', { username, password }, { headers: { 'user-agent': userAgent } });

/** The tts subgraph's view of a token: it accepts it (202) or refuses it (401). */
const createVoice = (token: string, name: string) =>
  http.post('/api/v1/tts/voices', { name, base_voice: 'f3' }, { token });

/** The session.revoked audit event of a session, once it is in the event log. */
const revokedEvent = async (sessionId: string) =>
  (await audit.waitFor((f) => f.event === 'session.revoked' && f.data.session_id === sessionId))[0];

describe('GET /api/v1/auth/sessions', () => {
  it('lists my active sessions newest first, with client details and the current one marked, a page at a time', async () => {
    const user = await createUserAndLogin(server.url, adminToken, 'lister', 'lister password 1');
    const first = (await loginAs('lister', 'lister password 1', 'FirstAgent/1.0')).body;
    const second = (await loginAs('lister', 'lister password 1', 'SecondAgent/2.0')).body;

    const res = await http.get('/api/v1/auth/sessions', { token: second.access_token });
    expect(res.status).toBe(200);
    expect(res.body.next_cursor).toBeNull();
    expect(res.body.items.map((s: any) => s.session_id)).toEqual([
      second.session_id,
      first.session_id,
      user.tokens.session_id,
    ]);
    expect(res.body.items[0]).toEqual({
      session_id: second.session_id,
      created_at: expect.stringMatching(ISO_DATE),
      last_activity_at: expect.stringMatching(ISO_DATE),
      expires_at: expect.stringMatching(ISO_DATE),
      user_agent: 'SecondAgent/2.0',
      ip_address: expect.stringMatching(/127\.0\.0\.1/),
      current: true,
    });
    expect(res.body.items[1]).toMatchObject({ user_agent: 'FirstAgent/1.0', current: false });
    expect(res.body.items[2].current).toBe(false);

    // Paging: two pages of one and two, nothing repeated, nothing left out.
    const page1 = await http.get('/api/v1/auth/sessions?limit=1', { token: first.access_token });
    expect(page1.body.items.map((s: any) => s.session_id)).toEqual([second.session_id]);
    const page2 = await http.get(`/api/v1/auth/sessions?limit=2&cursor=${page1.body.next_cursor}`, {
      token: first.access_token,
    });
    expect(page2.body.items.map((s: any) => [s.session_id, s.current])).toEqual([
      [first.session_id, true],
      [user.tokens.session_id, false],
    ]);
    expect(page2.body.next_cursor).toBeNull();

    // Another user sees none of these; a revoked session is no longer listed.
    const other = await http.get('/api/v1/auth/sessions', { token: adminToken });
    expect(other.body.items.map((s: any) => s.session_id)).not.toContain(first.session_id);
    expect((await http.post('/api/v1/auth/logout', undefined, { token: first.access_token })).status).toBe(202);
    const after = await http.get('/api/v1/auth/sessions', { token: second.access_token });
    expect(after.body.items.map((s: any) => s.session_id)).toEqual([second.session_id, user.tokens.session_id]);
  });

  it('refuses bad paging and a missing token', async () => {
    expect((await http.get('/api/v1/auth/sessions?limit=0', { token: adminToken })).body).toMatchObject({
      error: 'validation_error',
      details: { limit: expect.any(Array) },
    });
    expect((await http.get('/api/v1/auth/sessions?limit=101', { token: adminToken })).status).toBe(400);
    expect((await http.get('/api/v1/auth/sessions?cursor=bm90IGEgY3Vyc29y', { token: adminToken })).body).toMatchObject(
      { error: 'validation_error', details: { cursor: expect.any(Array) } },
    );
    expect((await http.get('/api/v1/auth/sessions')).status).toBe(401);
  });

  it('is the sessions query in GraphQL, with the same fields', async () => {
    const res = await http.graphql(
      '{ sessions(first: 5) { items { id current userAgent ipAddress createdAt } nextCursor } }',
      {},
      adminToken,
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.sessions.items.filter((s: any) => s.current)).toHaveLength(1);
  });
});

describe('DELETE /api/v1/auth/sessions/{sessionId}', () => {
  it("revokes one of my sessions everywhere: auth and tts refuse its tokens; others' sessions are not_found", async () => {
    const user = await createUserAndLogin(server.url, adminToken, 'revoker', 'revoker password 1');
    const other = (await loginAs('revoker', 'revoker password 1', 'Other/1')).body;
    expect((await createVoice(other.access_token, 'before revocation')).status).toBe(202);

    const res = await http.delete(`/api/v1/auth/sessions/${other.session_id}`, { token: user.token });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/api/v1/auth/session/${other.session_id}`);
    expect(res.body).toEqual({ id: other.session_id, message: expect.any(String) });

    const event = await revokedEvent(other.session_id);
    expect(event.data).toMatchObject({
      type: 'session.revoked',
      reason: 'revoked_by_user',
      username: 'revoker',
      user_id: user.id,
      id: other.session_id,
    });
    expect((await http.get('/api/v1/auth/session', { token: other.access_token })).status).toBe(401);
    // The event is in the log, so the tts subgraph refuses the session too.
    expect((await createVoice(other.access_token, 'after revocation')).status).toBe(401);
    expect((await http.get(`/api/v1/auth/session/${other.session_id}`, { token: user.token })).body.state).toBe(
      'revoked',
    );
    // The caller's own session is untouched.
    expect((await createVoice(user.token, 'still mine')).status).toBe(202);

    // Another user's session is not_found, like an unknown one; a bad id is a validation error.
    const admins = (await http.get('/api/v1/auth/sessions', { token: adminToken })).body.items[0].session_id;
    expect((await http.delete(`/api/v1/auth/sessions/${admins}`, { token: user.token })).body.error).toBe('not_found');
    expect((await http.get('/api/v1/auth/session', { token: adminToken })).status).toBe(200);
    expect(
      (await http.delete('/api/v1/auth/sessions/00000000-0000-4000-8000-000000000000', { token: user.token })).status,
    ).toBe(404);
    expect((await http.delete('/api/v1/auth/sessions/not-a-uuid', { token: user.token })).body).toMatchObject({
      error: 'validation_error',
      details: { sessionId: expect.any(Array) },
    });
    expect((await http.delete(`/api/v1/auth/sessions/${other.session_id}`)).status).toBe(401);
    // Revoking it again changes nothing, and writes no second event.
    expect((await http.delete(`/api/v1/auth/sessions/${other.session_id}`, { token: user.token })).status).toBe(202);
  });

  it('is the revokeSession mutation in GraphQL', async () => {
    const user = await createUserAndLogin(server.url, adminToken, 'gql revoker', 'gql revoker password');
    const res = await http.graphql(
      'mutation ($id: ID!) { revokeSession(id: $id) { id state current } }',
      { id: user.tokens.session_id },
      user.token,
    );
    expect(res.body.data.revokeSession).toEqual({ id: user.tokens.session_id, state: 'revoked', current: true });
  });
});

describe('DELETE /api/v1/auth/sessions', () => {
  it('revokes all my sessions but the current one', async () => {
    const user = await createUserAndLogin(server.url, adminToken, 'everywhere', 'everywhere password');
    const others = [
      (await loginAs('everywhere', 'everywhere password', 'A')).body,
      (await loginAs('everywhere', 'everywhere password', 'B')).body,
    ];

    const res = await http.delete('/api/v1/auth/sessions', { token: user.token });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe('/api/v1/auth/sessions');
    expect(res.body).toEqual({ id: user.tokens.session_id, message: expect.any(String), revoked: 2 });

    for (const s of others) {
      expect((await revokedEvent(s.session_id)).data.reason).toBe('revoked_by_user');
      expect((await http.get('/api/v1/auth/session', { token: s.access_token })).status).toBe(401);
      expect((await createVoice(s.access_token, `gone ${s.session_id}`)).status).toBe(401);
    }
    const left = await http.get('/api/v1/auth/sessions', { token: user.token });
    expect(left.body.items.map((s: any) => s.session_id)).toEqual([user.tokens.session_id]);
    expect((await http.delete('/api/v1/auth/sessions', { token: user.token })).body.revoked).toBe(0);
    expect((await http.delete('/api/v1/auth/sessions')).status).toBe(401);
  });
});

describe('POST /api/v1/auth/password', () => {
  it('changes the password, revokes my other sessions and audits it', async () => {
    const user = await createUserAndLogin(server.url, adminToken, 'changer', 'changer password 1');
    const other = (await loginAs('changer', 'changer password 1', 'Other')).body;

    const res = await http.post(
      '/api/v1/auth/password',
      { current_password: 'changer password 1', new_password: 'a brand new passphrase' },
      { token: user.token },
    );
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe('/api/v1/auth/sessions');
    expect(res.body).toEqual({ id: user.id, message: expect.any(String) });

    const changed = await audit.waitFor((f) => f.event === 'password.changed' && f.data.user_id === user.id);
    expect(changed[0].data).toMatchObject({ username: 'changer', by: user.id, id: user.id });
    expect((await revokedEvent(other.session_id)).data.reason).toBe('password_changed');
    expect((await createVoice(other.access_token, 'other session')).status).toBe(401);
    expect((await createVoice(user.token, 'this session')).status).toBe(202);

    expect(
      (await http.post('/api/v1/auth/login', { username: 'changer', password: 'changer password 1' })).status,
    ).toBe(401);
    await login(server.url, { username: 'changer', password: 'a brand new passphrase' });
    const me = await http.get(`/api/v1/admin/users/${user.id}`, { token: adminToken });
    expect(me.body.version).toBe(2);
  });

  it('refuses a new password that fails the policy, naming new_password', async () => {
    const user = await createUserAndLogin(server.url, adminToken, 'weakling', 'weakling password 1');
    for (const weak of ['password123', 'qwertyuiop', 'weaklingweakling', '11111111', 'iloveyou2']) {
      const res = await http.post(
        '/api/v1/auth/password',
        { current_password: 'weakling password 1', new_password: weak },
        { token: user.token },
      );
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        error: 'validation_error',
        details: { new_password: [expect.stringMatching(/too easy to guess/)] },
      });
    }
    const short = await http.post(
      '/api/v1/auth/password',
      { current_password: 'weakling password 1', new_password: 'short' },
      { token: user.token },
    );
    expect(short.body).toMatchObject({ error: 'validation_error', details: { new_password: expect.any(Array) } });
    const missing = await http.post(
      '/api/v1/auth/password',
      { new_password: 'a brand new passphrase' },
      { token: user.token },
    );
    expect(missing.body).toMatchObject({ error: 'validation_error', details: { current_password: ['is required'] } });
    // Nothing changed: the old password still works.
    await login(server.url, { username: 'weakling', password: 'weakling password 1' });
  });

  it('answers a wrong current password with 401 and counts it toward the login limits', async () => {
    const user = await createUserAndLogin(server.url, adminToken, 'forgetful', 'forgetful password 1');
    for (let i = 0; i < MAX_FAILURES; i++) {
      const res = await http.post(
        '/api/v1/auth/password',
        { current_password: `wrong password ${i}`, new_password: 'a brand new passphrase' },
        { token: user.token },
      );
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('unauthorized');
    }
    const failed = await audit.waitFor(
      (f) => f.event === 'login.failed' && f.data.username === 'forgetful',
      MAX_FAILURES,
    );
    expect(failed[0].data).toMatchObject({
      user_id: user.id,
      client_address: expect.stringMatching(/127\.0\.0\.1/),
      reason: 'wrong_current_password',
    });
    const locked = await audit.waitFor((f) => f.event === 'login.locked' && f.data.username === 'forgetful');
    expect(locked[0].data).toMatchObject({
      client_address: expect.stringMatching(/127\.0\.0\.1/),
      retry_after_seconds: expect.any(Number),
    });

    // The username is locked from this address: even the right password is refused for now.
    const limited = await http.post('/api/v1/auth/login', { username: 'forgetful', password: 'forgetful password 1' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    const change = await http.post(
      '/api/v1/auth/password',
      { current_password: 'forgetful password 1', new_password: 'a brand new passphrase' },
      { token: user.token },
    );
    expect(change.status).toBe(429);
  });

  it('is the changePassword mutation in GraphQL, with the same rules', async () => {
    const user = await createUserAndLogin(server.url, adminToken, 'gql changer', 'gql changer password');
    const mutation =
      'mutation ($c: String!, $n: String!) { changePassword(currentPassword: $c, newPassword: $n) { id version } }';
    const weak = await http.graphql(mutation, { c: 'gql changer password', n: 'password1' }, user.token);
    expect(weak.body.errors[0].extensions).toMatchObject({
      code: 'validation_error',
      details: { newPassword: expect.any(Array) },
    });
    const ok = await http.graphql(
      mutation,
      { c: 'gql changer password', n: 'another brand new passphrase' },
      user.token,
    );
    expect(ok.body.data.changePassword).toEqual({ id: user.id, version: 2 });
  });
});

describe('the bootstrap admin', () => {
  it('is held to the password policy: a guessable AUTH_BOOTSTRAP_PASSWORD stops the start, naming it', async () => {
    const env = {
      ...isolatedEnv(),
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      AUTH_BOOTSTRAP_USERNAME: 'boss',
      AUTH_BOOTSTRAP_PASSWORD: 'password123',
    };
    try {
      const child = spawn(process.execPath, [path.join(__dirname, '../../dist/bin/all-in-one.js')], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      const code = await new Promise((resolve) => child.on('close', resolve));
      expect(code).not.toBe(0);
      expect(output).toMatch(/AUTH_BOOTSTRAP_PASSWORD: is too easy to guess/);
    } finally {
      await cleanupDatabases(loadConfig(env));
    }
  });
});

// The audit lines in the process log are checked in test/observability/logs.test.ts, on its server process.

describe('audit events of login and refresh', () => {
  it('login.failed names the username and client address, for known and unknown users alike', async () => {
    await http.post('/api/v1/auth/login', { username: ADMIN.username, password: 'not the admin password' });
    await http.post('/api/v1/auth/login', { username: 'nobody at all', password: 'not a password' });
    const known = await audit.waitFor((f) => f.event === 'login.failed' && f.data.username === ADMIN.username);
    expect(known[0].data).toMatchObject({
      client_address: expect.stringMatching(/127\.0\.0\.1/),
      reason: 'wrong_password',
      user_id: expect.stringMatching(UUID),
    });
    const unknown = await audit.waitFor((f) => f.event === 'login.failed' && f.data.username === 'nobody at all');
    expect(unknown[0].data).toMatchObject({
      client_address: expect.stringMatching(/127\.0\.0\.1/),
      reason: 'unknown_user',
      user_id: '',
    });
  });

  it('refresh.reused, and session.revoked with reason refresh_reused, when a spent refresh token comes back', async () => {
    const user = await createUserAndLogin(server.url, adminToken, 'reuser', 'reuser password 1');
    expect((await http.post('/api/v1/auth/refresh', { refresh_token: user.tokens.refresh_token })).status).toBe(202);
    expect((await http.post('/api/v1/auth/refresh', { refresh_token: user.tokens.refresh_token })).status).toBe(401);
    const reused = await audit.waitFor(
      (f) => f.event === 'refresh.reused' && f.data.session_id === user.tokens.session_id,
    );
    expect(reused[0].data).toMatchObject({
      username: 'reuser',
      user_id: user.id,
      client_address: expect.stringMatching(/127\.0\.0\.1/),
    });
    expect((await revokedEvent(user.tokens.session_id)).data).toMatchObject({
      reason: 'refresh_reused',
      username: 'reuser',
    });
  });

  it('logout is a session.revoked with reason logout', async () => {
    const tokens = await login(server.url, ADMIN);
    expect((await http.post('/api/v1/auth/logout', undefined, { token: tokens.access_token })).status).toBe(202);
    expect((await revokedEvent(tokens.session_id)).data).toMatchObject({ reason: 'logout', username: ADMIN.username });
  });
});
