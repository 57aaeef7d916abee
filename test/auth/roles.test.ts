// Roles and scopes (issue 30) over REST and GraphQL: a field the caller may not see is `forbidden`
// (401 without a token), custom roles live and die by their version, a role held cannot be
// deleted, no one takes `admin` from the last admin, no one raises their own scopes, an admin
// without `admin:roles` cannot make roles, and a change reaches the user's next request without
// a new login.
import { api, createUserAndLogin, login } from '../helpers/http';
import { openStream, OpenStream } from '../helpers/sse';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { decode } from '../helpers/tokens';
import { until } from '../helpers/wait';

let server: TestServer;
let http: ReturnType<typeof api>;
let admin: { access_token: string };
let adminId: string;
let audit: OpenStream;

beforeAll(async () => {
  server = await startTestServer({ LOGIN_MAX_ATTEMPTS_PER_CLIENT: '100000' });
  http = api(server.url);
  admin = await login(server.url, ADMIN);
  adminId = (await http.graphql('{ me { id } }', {}, admin.access_token)).body.data.me.id;
  audit = await openStream(`${server.url}/api/v1/events?scope=all`, { token: admin.access_token });
});
afterAll(async () => {
  audit?.close();
  await server?.close();
});

const request = (method: string, path: string, body: unknown, token?: string) =>
  fetch(`${server.url}${path}`, {
    method,
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (res) => ({
    status: res.status,
    headers: res.headers,
    body: (await res.json().catch(() => undefined)) as any,
  }));

const userVersion = async (id: string) =>
  (await http.get(`/api/v1/admin/users/${id}`, { token: admin.access_token })).body.version as number;
const setRoles = async (id: string, roles: string[], token = admin.access_token) =>
  request('PUT', `/api/v1/admin/users/${id}/roles?version=${await userVersion(id)}`, { roles }, token);
const createVoice = (token: string, name: string) =>
  http.post('/api/v1/tts/voices', { name, base_voice: 'f3' }, { token });

describe('the scope step', () => {
  it('refuses a field the caller may not see: 403 on REST, a forbidden error on the field in GraphQL', async () => {
    const user = await createUserAndLogin(server.url, admin.access_token, 'plain user');
    expect(decode(user.token).scopes).toEqual(expect.arrayContaining(['tts:read', 'account:write']));
    expect(decode(user.token).scopes).not.toContain('admin:users');
    const rest = await http.get('/api/v1/admin/users', { token: user.token });
    expect(rest.status).toBe(403);
    expect(rest.body.error).toBe('forbidden');
    const gql = await http.graphql('{ me { id } users { items { id } } }', {}, user.token);
    expect(gql.body.errors).toEqual([
      expect.objectContaining({ path: ['users'], extensions: expect.objectContaining({ code: 'forbidden' }) }),
    ]);
    // The operation is refused whole: nothing of it ran.
    expect(gql.body.data?.me ?? null).toBeNull();
    // Through a fragment, and an alias, too.
    const fragment = await http.graphql(
      'query { everyone: users { ...Names } } fragment Names on UserPage { items { username } }',
      {},
      user.token,
    );
    expect(fragment.body.errors[0]).toMatchObject({ path: ['everyone'], extensions: { code: 'forbidden' } });
  });

  it('answers unauthorized without a token, and serves the public fields to anyone', async () => {
    expect((await http.get('/api/v1/auth/me')).status).toBe(401);
    const gql = await http.graphql('{ me { id } }');
    // One error, on the outermost field refused (its own fields are moot).
    expect(gql.body.errors).toEqual([expect.objectContaining({ path: ['me'], extensions: { code: 'unauthorized' } })]);
    const catalogue = await http.get('/api/v1/tts/base-voices');
    expect(catalogue.status).toBe(200);
    expect(catalogue.body.items.length).toBeGreaterThan(0);
    expect((await http.graphql('{ baseVoices { name } }')).body.data.baseVoices.length).toBeGreaterThan(0);
  });
});

describe('GET /api/v1/auth/me', () => {
  it('answers the caller with roles and scopes (REST and GraphQL)', async () => {
    const res = await http.get('/api/v1/auth/me', { token: admin.access_token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: adminId, username: ADMIN.username, roles: ['admin'] });
    expect(res.body.scopes).toEqual(expect.arrayContaining(['admin:roles', 'admin:users', 'tts:synthesize']));
    const gql = await http.graphql('{ me { roles scopes } }', {}, admin.access_token);
    expect(gql.body.data.me.scopes).toEqual(res.body.scopes);
  });
});

describe('custom roles', () => {
  it('lives through create, read, change and delete, and reaches the holder without a new login', async () => {
    const holder = await createUserAndLogin(server.url, admin.access_token, 'role holder');
    // Create.
    const created = await http.post(
      '/api/v1/admin/roles',
      { name: 'voice-reader', description: 'reads voices', scopes: ['tts:read'] },
      { token: admin.access_token },
    );
    expect(created.status).toBe(202);
    expect(created.body.id).toBe('voice-reader');
    expect(created.headers.get('location')).toBe('/api/v1/admin/roles/voice-reader');
    const role = await http.get('/api/v1/admin/roles/voice-reader', { token: admin.access_token });
    expect(role.body).toMatchObject({ name: 'voice-reader', scopes: ['tts:read'], built_in: false, version: 1 });
    const list = await http.get('/api/v1/admin/roles', { token: admin.access_token });
    expect(list.body.items.map((r: { name: string }) => r.name)).toEqual(['admin', 'user', 'voice-reader']);
    expect(
      (await http.post('/api/v1/admin/roles', { name: 'voice-reader', scopes: [] }, { token: admin.access_token }))
        .status,
    ).toBe(409);
    await audit.waitFor((f) => f.event === 'role.created' && f.data.role === 'voice-reader');

    // Assign: the holder's next request, same token, has only tts:read.
    expect((await createVoice(holder.token, 'before')).status).toBe(202);
    const assigned = await setRoles(holder.id, ['voice-reader']);
    expect(assigned.status).toBe(202);
    expect(assigned.headers.get('location')).toBe(`/api/v1/admin/users/${holder.id}`);
    await audit.waitFor((f) => f.event === 'user.roles_changed' && f.data.user_id === holder.id);
    await until(async () => (await createVoice(holder.token, 'after')).status === 403, 'the narrower scopes');
    expect((await http.get('/api/v1/tts/voices', { token: holder.token })).status).toBe(200);
    const me = await http.get('/api/v1/auth/me', { token: holder.token });
    expect(me.body).toMatchObject({ roles: ['voice-reader'], scopes: ['tts:read'] });

    // Change the role: every holder gets the new set, again without a new login.
    const patched = await request(
      'PATCH',
      '/api/v1/admin/roles/voice-reader?version=1',
      {
        scopes: ['tts:read', 'tts:write'],
      },
      admin.access_token,
    );
    expect(patched.status).toBe(202);
    const changed = await audit.waitFor(
      (f) => f.event === 'user.scopes_changed' && f.data.user_id === holder.id && f.data.scopes.includes('tts:write'),
    );
    expect(changed[0].data.scopes).toEqual(['tts:read', 'tts:write']);
    await until(async () => (await createVoice(holder.token, 'after change')).status === 202, 'the wider scopes');

    // Concurrent edits at one version: one wins.
    const racing = await Promise.all(
      ['a', 'b'].map((d) =>
        request('PATCH', '/api/v1/admin/roles/voice-reader?version=2', { description: d }, admin.access_token),
      ),
    );
    expect(racing.map((r) => r.status).sort()).toEqual([202, 409]);
    expect(racing.find((r) => r.status === 409)!.body.details.current_version).toBe(3);

    // Delete while held: 409 naming the holders; then free, then gone.
    const held = await request('DELETE', '/api/v1/admin/roles/voice-reader?version=3', undefined, admin.access_token);
    expect(held.status).toBe(409);
    expect(held.body.details.users).toEqual([holder.id]);
    expect((await setRoles(holder.id, ['user'])).status).toBe(202);
    const deleted = await request(
      'DELETE',
      '/api/v1/admin/roles/voice-reader?version=3',
      undefined,
      admin.access_token,
    );
    expect(deleted.status).toBe(202);
    expect((await http.get('/api/v1/admin/roles/voice-reader', { token: admin.access_token })).status).toBe(404);
    await audit.waitFor((f) => f.event === 'role.deleted' && f.data.role === 'voice-reader');
  });

  it('refuses unknown scopes and names, and leaves the built-in roles alone', async () => {
    const unknown = await http.post(
      '/api/v1/admin/roles',
      { name: 'odd', scopes: ['tts:fly'] },
      { token: admin.access_token },
    );
    expect(unknown.status).toBe(400);
    expect(unknown.body.details.scopes).toBeDefined();
    expect(
      (await http.post('/api/v1/admin/roles', { name: 'Bad Name', scopes: [] }, { token: admin.access_token })).status,
    ).toBe(400);
    expect(
      (await http.post('/api/v1/admin/roles', { name: 'admin', scopes: [] }, { token: admin.access_token })).status,
    ).toBe(409);
    expect(
      (await request('PATCH', '/api/v1/admin/roles/user?version=1', { scopes: [] }, admin.access_token)).status,
    ).toBe(403);
    expect((await request('DELETE', '/api/v1/admin/roles/admin?version=1', undefined, admin.access_token)).status).toBe(
      403,
    );
    const someone = await createUserAndLogin(server.url, admin.access_token, 'gets a ghost role');
    const ghost = await setRoles(someone.id, ['no-such-role']);
    expect(ghost.status).toBe(400);
  });

  it("takes Object.prototype's names for unknown roles, never for built-in ones (issue 41, finding 9)", async () => {
    const someone = await createUserAndLogin(server.url, admin.access_token, 'prototype roles');
    for (const name of ['constructor', '__proto__']) {
      const read = await http.get(`/api/v1/admin/roles/${name}`, { token: admin.access_token });
      expect({ name, status: read.status, error: read.body.error }).toEqual({ name, status: 404, error: 'not_found' });
      const set = await setRoles(someone.id, [name]);
      expect({ name, status: set.status, error: set.body.error }).toEqual({
        name,
        status: 400,
        error: 'validation_error',
      });
      const made = await http.post(
        '/api/v1/admin/users',
        { username: `proto-${name}`, password: 'correct horse battery staple', roles: [name] },
        { token: admin.access_token },
      );
      expect({ name, status: made.status, error: made.body.error }).toEqual({
        name,
        status: 400,
        error: 'validation_error',
      });
      const gql = await http.graphql(
        'query($name: String!) { role(name: $name) { name } }',
        { name },
        admin.access_token,
      );
      expect({ name, code: gql.body.errors?.[0]?.extensions?.code }).toEqual({ name, code: 'not_found' });
    }
  });

  it('is GraphQL too', async () => {
    const made = await http.graphql(
      'mutation { createRole(name: "gql-role", scopes: ["notes:read"]) { name version scopes builtIn } }',
      {},
      admin.access_token,
    );
    expect(made.body.data.createRole).toEqual({ name: 'gql-role', version: 1, scopes: ['notes:read'], builtIn: false });
    const gone = await http.graphql(
      'mutation { deleteRole(name: "gql-role", version: 1) { name } }',
      {},
      admin.access_token,
    );
    expect(gone.body.data.deleteRole.name).toBe('gql-role');
  });
});

describe('who may grant what', () => {
  it('no one takes admin from the last enabled admin', async () => {
    const res = await setRoles(adminId, ['user']);
    expect(res.status).toBe(409);
    expect(res.body.details.reason).toBe('last_admin');
  });

  it('a user cannot raise their own roles, nor grant scopes they do not hold', async () => {
    const made = await http.post(
      '/api/v1/admin/roles',
      { name: 'role-keeper', scopes: ['admin:roles', 'tts:read'] },
      { token: admin.access_token },
    );
    expect(made.status).toBe(202);
    const keeper = await createUserAndLogin(server.url, admin.access_token, 'role keeper');
    expect((await setRoles(keeper.id, ['role-keeper'])).status).toBe(202);
    const token = (await login(server.url, { username: 'role keeper', password: keeper.password })).access_token;
    // They may manage roles within what they hold…
    const own = await http.post('/api/v1/admin/roles', { name: 'reader-only', scopes: ['tts:read'] }, { token });
    expect(own.status).toBe(202);
    // …but not give themselves admin, nor make a role with more than they hold.
    const raise = await request(
      'PUT',
      `/api/v1/admin/users/${keeper.id}/roles?version=${await userVersion(keeper.id)}`,
      { roles: ['admin'] },
      token,
    );
    expect(raise.status).toBe(403);
    const wider = await http.post('/api/v1/admin/roles', { name: 'wider', scopes: ['tts:write'] }, { token });
    expect(wider.status).toBe(403);
    expect((await http.get('/api/v1/auth/me', { token })).body.roles).toEqual(['role-keeper']);
  });

  it('an admin of users without admin:roles cannot create roles', async () => {
    expect(
      (
        await http.post(
          '/api/v1/admin/roles',
          { name: 'user-admin', scopes: ['admin:users'] },
          { token: admin.access_token },
        )
      ).status,
    ).toBe(202);
    const userAdmin = await createUserAndLogin(server.url, admin.access_token, 'user admin');
    expect((await setRoles(userAdmin.id, ['user', 'user-admin'])).status).toBe(202);
    const token = (await login(server.url, { username: 'user admin', password: userAdmin.password })).access_token;
    expect((await http.get('/api/v1/admin/users', { token })).status).toBe(200);
    const refused = await http.post('/api/v1/admin/roles', { name: 'sneaky', scopes: ['tts:read'] }, { token });
    expect(refused.status).toBe(403);
    const gql = await http.graphql('mutation { createRole(name: "sneaky", scopes: []) { name } }', {}, token);
    expect(gql.body.errors[0]).toMatchObject({ path: ['createRole'], extensions: { code: 'forbidden' } });
  });
});
