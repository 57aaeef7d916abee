// Administering users over REST and GraphQL: every route is for admins only (403 for others),
// answers not_found and validation errors like the rest of the API, and writes its audit event.
// Disabling and deleting end the user's sessions at the auth subgraph and, through the event
// log, at the tts subgraph; the last administrator cannot be removed, even by two admins racing.
import { api, createUserAndLogin, ISO_DATE, login, UUID } from '../helpers/http';
import { openStream, OpenStream } from '../helpers/sse';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

let server: TestServer;
let http: ReturnType<typeof api>;
let admin: { access_token: string; session_id: string };
let adminId: string;
let audit: OpenStream;

const MAX_FAILURES = 3;

beforeAll(async () => {
  server = await startTestServer({
    LOGIN_MAX_FAILURES_PER_USER: String(MAX_FAILURES),
    LOGIN_MAX_ATTEMPTS_PER_CLIENT: '100000',
  });
  http = api(server.url);
  admin = await login(server.url, ADMIN);
  adminId = (await http.graphql('{ me { id } }', {}, admin.access_token)).body.data.me.id;
  audit = await openStream(`${server.url}/api/v1/events?scope=all`, {
    token: (await login(server.url, ADMIN)).access_token,
  });
});
afterAll(async () => {
  audit?.close();
  await server?.close();
});

const createVoice = (token: string, name: string) =>
  http.post('/api/v1/tts/voices', { name, base_voice: 'f3' }, { token });
const userEvent = async (type: string, userId: string) =>
  (await audit.waitFor((f) => f.event === type && f.data.user_id === userId))[0];

describe('admin routes are for admins', () => {
  it('answers 403 forbidden to a user without the admin role, and 401 without a token, on every route', async () => {
    const user = await createUserAndLogin(server.url, admin.access_token, 'not an admin', 'not an admin password');
    const id = user.id;
    const calls = [
      () => http.get('/api/v1/admin/users', { token: user.token }),
      () => http.get(`/api/v1/admin/users/${id}`, { token: user.token }),
      () =>
        http.post('/api/v1/admin/users', { username: 'sneaky', password: 'sneaky password 1' }, { token: user.token }),
      () => http.post(`/api/v1/admin/users/${adminId}/disable`, undefined, { token: user.token }),
      () => http.post(`/api/v1/admin/users/${id}/enable`, undefined, { token: user.token }),
      () => http.post(`/api/v1/admin/users/${id}/unlock`, undefined, { token: user.token }),
      () => http.delete(`/api/v1/admin/users/${adminId}?version=1`, { token: user.token }),
    ];
    for (const call of calls) {
      const res = await call();
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('forbidden');
    }
    expect((await http.get('/api/v1/admin/users')).status).toBe(401);
    expect((await http.post(`/api/v1/admin/users/${id}/disable`)).status).toBe(401);
    // Nothing happened.
    expect((await http.get(`/api/v1/admin/users/${adminId}`, { token: admin.access_token })).body).toMatchObject({
      disabled: false,
      version: 1,
    });
    const gql = await http.graphql('{ users(first: 5) { items { id } } }', {}, user.token);
    expect(gql.body.errors[0].extensions.code).toBe('forbidden');
  });
});

describe('GET /api/v1/admin/users and /{userId}', () => {
  it('lists users in username order, by prefix ignoring case, a page at a time', async () => {
    for (const name of ['Prefix-b', 'prefix-a', 'prefix-c', 'prefixless', 'other-prefix-d']) {
      expect(
        (
          await http.post(
            '/api/v1/admin/users',
            { username: name, password: `${name} password 123` },
            { token: admin.access_token },
          )
        ).status,
      ).toBe(202);
    }
    const page1 = await http.get('/api/v1/admin/users?query=PREFIX-&limit=2', { token: admin.access_token });
    expect(page1.status).toBe(200);
    expect(page1.body.items.map((u: any) => u.username)).toEqual(['prefix-a', 'Prefix-b']);
    const page2 = await http.get(`/api/v1/admin/users?query=PREFIX-&limit=2&cursor=${page1.body.next_cursor}`, {
      token: admin.access_token,
    });
    expect(page2.body).toEqual({ items: [expect.objectContaining({ username: 'prefix-c' })], next_cursor: null });
    // LIKE wildcards in the query are plain characters.
    expect((await http.get('/api/v1/admin/users?query=%25', { token: admin.access_token })).body.items).toEqual([]);
    expect((await http.get('/api/v1/admin/users?query=prefix_', { token: admin.access_token })).body.items).toEqual([]);
    const all = await http.get('/api/v1/admin/users?limit=100', { token: admin.access_token });
    const names = all.body.items.map((u: any) => u.username.toLowerCase());
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['admin', 'other-prefix-d', 'prefixless']));
    expect((await http.get('/api/v1/admin/users?limit=0', { token: admin.access_token })).body.error).toBe(
      'validation_error',
    );
    expect((await http.get('/api/v1/admin/users?cursor=!!', { token: admin.access_token })).body).toMatchObject({
      error: 'validation_error',
      details: { cursor: expect.any(Array) },
    });
  });

  it('reads one user with every field; unknown is not_found, a bad id a validation error', async () => {
    const user = await createUserAndLogin(server.url, admin.access_token, 'Readable', 'readable password 1');
    const res = await http.get(`/api/v1/admin/users/${user.id}`, { token: admin.access_token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: user.id,
      username: 'Readable',
      roles: ['user'],
      disabled: false,
      version: 1,
      created_at: expect.stringMatching(ISO_DATE),
      last_login_at: expect.stringMatching(ISO_DATE),
    });
    expect(
      (await http.get('/api/v1/admin/users/00000000-0000-4000-8000-000000000000', { token: admin.access_token })).body
        .error,
    ).toBe('not_found');
    expect((await http.get('/api/v1/admin/users/nope', { token: admin.access_token })).body).toMatchObject({
      error: 'validation_error',
      details: { userId: expect.any(Array) },
    });
  });
});

describe('POST /api/v1/admin/users', () => {
  it('creates a user who can log in; a taken name is a conflict; the password policy applies', async () => {
    const res = await http.post(
      '/api/v1/admin/users',
      { username: 'Newcomer', password: 'newcomer password 1', roles: ['admin'] },
      { token: admin.access_token },
    );
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id: expect.stringMatching(UUID), message: expect.any(String) });
    expect(res.headers.get('location')).toBe(`/api/v1/admin/users/${res.body.id}`);
    expect((await http.get(res.headers.get('location')!, { token: admin.access_token })).body.roles).toEqual(['admin']);
    await login(server.url, { username: 'newcomer', password: 'newcomer password 1' });
    const created = await userEvent('user.created', res.body.id);
    expect(created.data).toMatchObject({ username: 'Newcomer', roles: ['admin'], by: adminId });

    expect(
      (
        await http.post(
          '/api/v1/admin/users',
          { username: 'NEWCOMER', password: 'another password 12' },
          { token: admin.access_token },
        )
      ).status,
    ).toBe(409);
    const weak = await http.post(
      '/api/v1/admin/users',
      { username: 'weak', password: 'password1' },
      { token: admin.access_token },
    );
    expect(weak.body).toMatchObject({
      error: 'validation_error',
      details: { password: [expect.stringMatching(/too easy to guess/)] },
    });
    const bad = await http.post(
      '/api/v1/admin/users',
      { username: ' ', password: 'short', roles: ['Not A Role'] },
      { token: admin.access_token },
    );
    expect(Object.keys(bad.body.details).sort()).toEqual(['password', 'roles.0', 'username']);
  });

  it('counts a username after trimming (1–64 characters): 64 surrounded by spaces is fine, 65 is not', async () => {
    const name = `t${'r'.repeat(62)}m`;
    const padded = await http.post(
      '/api/v1/admin/users',
      { username: `  ${name}\t `, password: 'trimmed password 1' },
      { token: admin.access_token },
    );
    expect(padded.status).toBe(202);
    expect((await http.get(`/api/v1/admin/users/${padded.body.id}`, { token: admin.access_token })).body.username).toBe(
      name,
    );
    // Login trims the same way: the padded name logs in, and 65 characters after trimming are refused.
    expect(
      (await http.post('/api/v1/auth/login', { username: ` ${name} `, password: 'trimmed password 1' })).status,
    ).toBe(202);
    const long = await http.post(
      '/api/v1/admin/users',
      { username: ` ${name}x `, password: 'trimmed password 1' },
      { token: admin.access_token },
    );
    expect(long.status).toBe(400);
    expect(long.body.details).toEqual({ username: [expect.stringMatching(/64/)] });
    const blank = await http.post(
      '/api/v1/admin/users',
      { username: '   ', password: 'trimmed password 1' },
      { token: admin.access_token },
    );
    expect(blank.body.details).toEqual({ username: ['must not be blank'] });
  });
});

describe('disable and enable', () => {
  it('disables a user: every session ends at once (auth and tts), login answers like a wrong password; enable lets them back', async () => {
    const user = await createUserAndLogin(server.url, admin.access_token, 'disabled soon', 'disabled soon password');
    const second = await login(server.url, { username: 'disabled soon', password: 'disabled soon password' });
    expect((await createVoice(user.token, 'before')).status).toBe(202);

    const res = await http.post(`/api/v1/admin/users/${user.id}/disable`, undefined, { token: admin.access_token });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/api/v1/admin/users/${user.id}`);
    expect(res.body).toEqual({ id: user.id, message: expect.any(String) });

    const disabled = await userEvent('user.disabled', user.id);
    expect(disabled.data).toMatchObject({ username: 'disabled soon', by: adminId, id: user.id });
    for (const sessionId of [user.tokens.session_id, second.session_id]) {
      const revoked = await audit.waitFor((f) => f.event === 'session.revoked' && f.data.session_id === sessionId);
      expect(revoked[0].data).toMatchObject({ reason: 'user_disabled', username: 'disabled soon' });
    }
    // Refused everywhere: the auth subgraph reads the session, the tts subgraph the event log.
    for (const token of [user.token, second.access_token]) {
      expect((await http.get('/api/v1/auth/session', { token })).status).toBe(401);
      expect((await createVoice(token, `after ${token.slice(-6)}`)).status).toBe(401);
    }
    expect((await http.post('/api/v1/auth/refresh', { refresh_token: second.refresh_token })).status).toBe(401);
    const right = await http.post('/api/v1/auth/login', {
      username: 'disabled soon',
      password: 'disabled soon password',
    });
    const wrong = await http.post('/api/v1/auth/login', {
      username: 'disabled soon',
      password: 'not the password at all',
    });
    expect(right.status).toBe(401);
    expect(right.body).toEqual(wrong.body);
    expect((await http.get(`/api/v1/admin/users/${user.id}`, { token: admin.access_token })).body).toMatchObject({
      disabled: true,
      version: 2,
    });
    // Disabling again changes nothing.
    expect(
      (await http.post(`/api/v1/admin/users/${user.id}/disable`, undefined, { token: admin.access_token })).status,
    ).toBe(202);
    expect((await http.get(`/api/v1/admin/users/${user.id}`, { token: admin.access_token })).body.version).toBe(2);

    // Two failed logins (one the right password) so far; unlock before enabling, so the limit does not get in the way.
    expect(
      (await http.post(`/api/v1/admin/users/${user.id}/unlock`, undefined, { token: admin.access_token })).status,
    ).toBe(202);
    const enabled = await http.post(`/api/v1/admin/users/${user.id}/enable`, undefined, { token: admin.access_token });
    expect(enabled.status).toBe(202);
    expect((await userEvent('user.enabled', user.id)).data).toMatchObject({ username: 'disabled soon', by: adminId });
    const back = await login(server.url, { username: 'disabled soon', password: 'disabled soon password' });
    expect((await createVoice(back.access_token, 'back again')).status).toBe(202);
    // The old sessions stay revoked.
    expect((await http.get('/api/v1/auth/session', { token: user.token })).status).toBe(401);
    expect((await http.get(`/api/v1/admin/users/${user.id}`, { token: admin.access_token })).body).toMatchObject({
      disabled: false,
      version: 3,
    });
  });

  it('answers not_found for an unknown user, and forbidden for disabling yourself', async () => {
    for (const action of ['disable', 'enable', 'unlock']) {
      expect(
        (
          await http.post(`/api/v1/admin/users/00000000-0000-4000-8000-000000000000/${action}`, undefined, {
            token: admin.access_token,
          })
        ).status,
      ).toBe(404);
      expect(
        (await http.post(`/api/v1/admin/users/x/${action}`, undefined, { token: admin.access_token })).status,
      ).toBe(400);
    }
    const self = await http.post(`/api/v1/admin/users/${adminId}/disable`, undefined, { token: admin.access_token });
    expect(self.status).toBe(403);
    expect((await http.get('/api/v1/auth/session', { token: admin.access_token })).status).toBe(200);
  });

  it('is disableUser / enableUser in GraphQL', async () => {
    const user = await createUserAndLogin(server.url, admin.access_token, 'gql disabled', 'gql disabled password');
    const off = await http.graphql(
      'mutation ($id: ID!) { disableUser(id: $id) { id disabled version } }',
      { id: user.id },
      admin.access_token,
    );
    expect(off.body.data.disableUser).toEqual({ id: user.id, disabled: true, version: 2 });
    const on = await http.graphql(
      'mutation ($id: ID!) { enableUser(id: $id) { disabled version } }',
      { id: user.id },
      admin.access_token,
    );
    expect(on.body.data.enableUser).toEqual({ disabled: false, version: 3 });
  });
});

describe('POST /api/v1/admin/users/{userId}/unlock', () => {
  it('clears the failed-login counts of a locked username', async () => {
    const user = await createUserAndLogin(server.url, admin.access_token, 'locked out', 'locked out password');
    for (let i = 0; i < MAX_FAILURES; i++) {
      expect(
        (await http.post('/api/v1/auth/login', { username: 'locked out', password: `wrong password ${i}` })).status,
      ).toBe(401);
    }
    const failed = await audit.waitFor(
      (f) => f.event === 'login.failed' && f.data.username === 'locked out',
      MAX_FAILURES,
    );
    expect(failed.map((f) => f.data.reason)).toEqual(Array(MAX_FAILURES).fill('wrong_password'));
    expect(
      (await audit.waitFor((f) => f.event === 'login.locked' && f.data.username === 'locked out'))[0].data,
    ).toMatchObject({
      user_id: user.id,
      client_address: expect.stringMatching(/127\.0\.0\.1/),
    });
    expect(
      (await http.post('/api/v1/auth/login', { username: 'locked out', password: 'locked out password' })).status,
    ).toBe(429);

    const res = await http.post(`/api/v1/admin/users/${user.id}/unlock`, undefined, { token: admin.access_token });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/api/v1/admin/users/${user.id}`);
    expect((await userEvent('user.unlocked', user.id)).data).toMatchObject({ username: 'locked out', by: adminId });
    await login(server.url, { username: 'locked out', password: 'locked out password' });
  });
});

describe('DELETE /api/v1/admin/users/{userId}', () => {
  it('deletes at the expected version; the sessions end everywhere at once', async () => {
    const user = await createUserAndLogin(server.url, admin.access_token, 'deleted soon', 'deleted soon password');
    expect((await createVoice(user.token, 'mine')).status).toBe(202);

    const stale = await http.delete(`/api/v1/admin/users/${user.id}?version=7`, { token: admin.access_token });
    expect(stale.status).toBe(409);
    expect(stale.body.details).toEqual({ current_version: 1 });
    expect((await http.delete(`/api/v1/admin/users/${user.id}`, { token: admin.access_token })).body).toMatchObject({
      error: 'validation_error',
      details: { version: expect.any(Array) },
    });
    expect((await http.delete(`/api/v1/admin/users/${user.id}?version=0`, { token: admin.access_token })).status).toBe(
      400,
    );

    const res = await http.delete(`/api/v1/admin/users/${user.id}?version=1`, { token: admin.access_token });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/api/v1/admin/users/${user.id}`);
    expect(res.body).toEqual({ id: user.id, message: expect.any(String) });
    const deleted = await userEvent('user.deleted', user.id);
    expect(deleted.data).toMatchObject({ username: 'deleted soon', by: adminId, id: user.id });
    const revoked = await audit.waitFor(
      (f) => f.event === 'session.revoked' && f.data.session_id === user.tokens.session_id,
    );
    expect(revoked[0].data.reason).toBe('user_deleted');

    // The token stops working at once, not when it expires in an hour.
    expect((await http.get('/api/v1/auth/session', { token: user.token })).status).toBe(401);
    expect((await createVoice(user.token, 'after')).status).toBe(401);
    expect((await http.get(`/api/v1/admin/users/${user.id}`, { token: admin.access_token })).status).toBe(404);
    expect((await http.delete(`/api/v1/admin/users/${user.id}?version=1`, { token: admin.access_token })).status).toBe(
      404,
    );
    expect(
      (await http.post('/api/v1/auth/login', { username: 'deleted soon', password: 'deleted soon password' })).status,
    ).toBe(401);
  });

  it('refuses to delete yourself, and of two admins deleting each other at once exactly one wins', async () => {
    expect((await http.delete(`/api/v1/admin/users/${adminId}?version=1`, { token: admin.access_token })).status).toBe(
      403,
    );
    const gql = await http.graphql(
      'mutation ($id: ID!) { deleteUser(id: $id, version: 1) { id } }',
      { id: adminId },
      admin.access_token,
    );
    expect(gql.body.errors[0].extensions.code).toBe('forbidden');

    // Two new admins, c and d, left as the only enabled ones (the others are disabled meanwhile).
    const ra = await http.post(
      '/api/v1/admin/users',
      { username: 'racer c', password: 'racer c password', roles: ['admin'] },
      { token: admin.access_token },
    );
    const rb = await http.post(
      '/api/v1/admin/users',
      { username: 'racer d', password: 'racer d password', roles: ['admin'] },
      { token: admin.access_token },
    );
    const c = {
      id: ra.body.id,
      token: (await login(server.url, { username: 'racer c', password: 'racer c password' })).access_token,
    };
    const d = {
      id: rb.body.id,
      token: (await login(server.url, { username: 'racer d', password: 'racer d password' })).access_token,
    };
    // Leave c and d as the only enabled admins: d disables the bootstrap admin (and the other test admin).
    const others = (await http.get('/api/v1/admin/users?limit=100', { token: d.token })).body.items.filter(
      (u: any) => u.roles.includes('admin') && ![c.id, d.id].includes(u.id),
    );
    for (const u of others)
      expect((await http.post(`/api/v1/admin/users/${u.id}/disable`, undefined, { token: d.token })).status).toBe(202);

    const [cDeletesD, dDeletesC] = await Promise.all([
      http.delete(`/api/v1/admin/users/${d.id}?version=1`, { token: c.token }),
      http.delete(`/api/v1/admin/users/${c.id}?version=1`, { token: d.token }),
    ]);
    const statuses = [cDeletesD.status, dDeletesC.status].sort();
    expect(statuses[0]).toBe(202);
    // The loser either lost its session first (401) or found itself the last admin (409).
    expect([401, 409]).toContain(statuses[1]);
    if (statuses[1] === 409)
      expect([cDeletesD, dDeletesC].find((r) => r.status === 409)!.body.details).toEqual({ reason: 'last_admin' });
    const survivor = cDeletesD.status === 202 ? c : d;
    const survivors = (await http.get('/api/v1/admin/users?limit=100', { token: survivor.token })).body.items.filter(
      (u: any) => u.roles.includes('admin') && !u.disabled,
    );
    expect(survivors.map((u: any) => u.id)).toEqual([survivor.id]);

    // The survivor is the last admin: they cannot disable or delete themselves, and nobody else can.
    expect(
      (await http.post(`/api/v1/admin/users/${survivor.id}/disable`, undefined, { token: survivor.token })).status,
    ).toBe(403);
    // Re-enable the bootstrap admin for the remaining tests.
    for (const u of others)
      expect((await http.post(`/api/v1/admin/users/${u.id}/enable`, undefined, { token: survivor.token })).status).toBe(
        202,
      );
    admin = await login(server.url, ADMIN);
  });
});
