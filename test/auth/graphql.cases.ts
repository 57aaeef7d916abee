// The Auth module through the gateway's /graphql, as internal frontends use it.
import { api, createUserAndLogin, ISO_DATE, UUID } from '../helpers/http';
import { ADMIN, sharedTestServer, TestServer } from '../helpers/server';

let server: TestServer;
let http: ReturnType<typeof api>;

beforeAll(async () => {
  server = await sharedTestServer();
  http = api(server.url);
});
afterAll(() => server.close());

const LOGIN = `mutation ($u: String!, $p: String!) { login(username: $u, password: $p) { accessToken refreshToken expiresIn tokenType sessionId } }`;
const SESSION_FIELDS = 'id userId state createdAt expiresAt lastActivityAt';

async function gqlLogin(credentials = ADMIN) {
  const res = await http.graphql(LOGIN, { u: credentials.username, p: credentials.password });
  expect(res.body.errors).toBeUndefined();
  return res.body.data.login as {
    accessToken: string;
    refreshToken: string;
    sessionId: string;
    expiresIn: number;
    tokenType: string;
  };
}

describe('Auth over GraphQL', () => {
  it('login, then currentSession, session(id) and me', async () => {
    const tokens = await gqlLogin();
    expect(tokens).toMatchObject({
      tokenType: 'Bearer',
      expiresIn: server.config.ACCESS_TOKEN_TTL_SECONDS,
      sessionId: expect.stringMatching(UUID),
    });

    const res = await http.graphql(
      `query ($id: ID!) { currentSession { ${SESSION_FIELDS} user { username } } session(id: $id) { id state } me { id username roles } }`,
      { id: tokens.sessionId },
      tokens.accessToken,
    );
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    const { currentSession, session, me } = res.body.data;
    expect(currentSession).toMatchObject({
      id: tokens.sessionId,
      userId: me.id,
      state: 'active',
      createdAt: expect.stringMatching(ISO_DATE),
      user: { username: ADMIN.username },
    });
    expect(session).toEqual({ id: tokens.sessionId, state: 'active' });
    expect(me).toEqual({ id: expect.stringMatching(UUID), username: ADMIN.username, roles: ['admin'] });
  });

  it('a wrong password is an unauthorized error with the same message as an unknown user', async () => {
    const wrong = await http.graphql(LOGIN, { u: ADMIN.username, p: 'not the password' });
    const unknown = await http.graphql(LOGIN, { u: 'nobody-here', p: 'not the password' });
    expect(wrong.body.data).toBeNull();
    expect(wrong.body.errors[0].extensions.code).toBe('unauthorized');
    expect(unknown.body.errors[0]).toEqual(wrong.body.errors[0]);
  });

  it('validation errors name their fields in extensions.details', async () => {
    const res = await http.graphql(LOGIN, { u: '   ', p: 'short' });
    expect(res.body.errors[0].extensions.code).toBe('validation_error');
    expect(Object.keys(res.body.errors[0].extensions.details).sort()).toEqual(['password', 'username']);
  });

  it('refreshSession rotates and logout revokes', async () => {
    const first = await gqlLogin();
    const rotated = await http.graphql(
      `mutation ($t: String!) { refreshSession(refreshToken: $t) { accessToken refreshToken sessionId } }`,
      { t: first.refreshToken },
    );
    expect(rotated.body.errors).toBeUndefined();
    const second = rotated.body.data.refreshSession;
    expect(second.sessionId).toBe(first.sessionId);
    expect(second.refreshToken).not.toBe(first.refreshToken);

    const out = await http.graphql('mutation { logout { id state } }', {}, second.accessToken);
    expect(out.body.data.logout).toEqual({ id: first.sessionId, state: 'revoked' });
    const after = await http.graphql('{ currentSession { id } }', {}, second.accessToken);
    expect(after.body.errors[0].extensions.code).toBe('unauthorized');
  });

  it('queries that need a caller say unauthorized without a token; a bad token is a 401 at the gateway', async () => {
    const anonymous = await http.graphql('{ me { id } }');
    expect(anonymous.body.errors[0].extensions.code).toBe('unauthorized');
    const garbage = await http.graphql('{ me { id } }', {}, 'not.a.token');
    expect(garbage.status).toBe(401);
    expect(garbage.body.errors[0].extensions.code).toBe('unauthorized');
  });

  it('createUser is for admins: a new user can log in, cannot create users, and cannot read the admin session', async () => {
    const admin = await gqlLogin();
    const user = await createUserAndLogin(server.url, admin.accessToken, 'Grace Hopper');
    const me = await http.graphql('{ me { id username roles } }', {}, user.token);
    expect(me.body.data.me).toEqual({ id: user.id, username: 'Grace Hopper', roles: ['user'] });

    const forbidden = await http.graphql(
      'mutation { createUser(username: "x-user", password: "long enough pw") { id } }',
      {},
      user.token,
    );
    expect(forbidden.body.errors[0].extensions.code).toBe('forbidden');
    const duplicate = await http.graphql(
      'mutation { createUser(username: "grace HOPPER", password: "long enough pw") { id } }',
      {},
      admin.accessToken,
    );
    expect(duplicate.body.errors[0].extensions.code).toBe('conflict');
    const badRole = await http.graphql(
      'mutation { createUser(username: "r", password: "long enough pw", roles: ["Not A Role!"]) { id } }',
      {},
      admin.accessToken,
    );
    expect(badRole.body.errors[0].extensions).toMatchObject({
      code: 'validation_error',
      details: { roles: expect.any(Array) },
    });

    const foreign = await http.graphql(
      'query ($id: ID!) { session(id: $id) { id } }',
      { id: admin.sessionId },
      user.token,
    );
    expect(foreign.body.errors[0].extensions.code).toBe('not_found');
  });

  it('an unknown field is a validation error, not a crash', async () => {
    const res = await http.graphql('{ nope }');
    expect(res.status).toBe(400); // 200 when the client asks for application/json (test/gateway/http-status.cases.ts)
    expect(res.body.errors[0].extensions.code).toBe('validation_error');
  });
});
