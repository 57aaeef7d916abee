// /graphql's HTTP statuses: the GraphQL-over-HTTP audit (graphql-http) passes every MUST and
// SHOULD, and `unauthorized` is one status (401 + WWW-Authenticate) whatever refused the token.
import { auditServer } from 'graphql-http';
import { api, createUserAndLogin, login, request } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

let server: TestServer;
let http: ReturnType<typeof api>;

beforeAll(async () => {
  server = await startTestServer();
  http = api(server.url);
});
afterAll(() => server.close());

describe('GraphQL over HTTP', () => {
  it('passes the graphql-http audit, MUSTs and SHOULDs', async () => {
    const results = await auditServer({ url: `${server.url}/graphql` });
    // `notice`s are MAYs: GETs need Apollo's CSRF header (apollo-require-preflight), which the audit does not send.
    const notOk = results
      .filter((r) => r.status === 'warn' || r.status === 'error')
      .map((r) => `${r.status}: ${r.name}${'reason' in r ? ` (${r.reason})` : ''}`);
    expect(notOk).toEqual([]);
    expect(results.length).toBeGreaterThan(30);
  });

  const invalid = (accept?: string) =>
    request(server.url, 'POST', '/graphql', { body: { query: '{ nope }' }, headers: accept ? { accept } : {} });

  it('a validation error is 200 for a client that asks for application/json, 400 for graphql-response+json or any type', async () => {
    const legacy = await invalid('application/json');
    expect(legacy.status).toBe(200);
    expect(legacy.body.errors[0].extensions.code).toBe('validation_error');
    for (const accept of [
      'application/graphql-response+json',
      'application/graphql-response+json, application/json;q=0.9',
      '*/*',
      undefined,
    ]) {
      const res = await invalid(accept);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].extensions.code).toBe('validation_error');
    }
  });
});

describe('unauthorized on /graphql and /graphql/stream', () => {
  const expect401 = (res: { status: number; headers: Headers; body: any }) => {
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(res.body.errors[0].extensions.code).toBe('unauthorized');
  };

  it('is 401 with WWW-Authenticate for a bad token, a revoked session, a missing token and a wrong password', async () => {
    const admin = await login(server.url, ADMIN);
    const user = await createUserAndLogin(server.url, admin.access_token, 'soon-gone');
    expect401(await http.graphql('{ me { id } }', {}, 'not.a.token'));
    await http.post('/api/v1/auth/logout', undefined, { token: user.token });
    expect401(await http.graphql('{ me { id } }', {}, user.token));
    expect401(await http.graphql('{ me { id } }'));
    expect401(await http.graphql('mutation { login(username: "admin", password: "wrong password!") { accessToken } }'));
    // An answer without errors is untouched.
    expect((await http.graphql('{ me { username } }', {}, admin.access_token)).status).toBe(200);
  });

  it('/graphql/stream refuses with 401 and WWW-Authenticate too', async () => {
    const res = await request(server.url, 'POST', '/graphql/stream', {
      body: { query: 'subscription { events { type } }' },
      headers: { accept: 'text/event-stream', authorization: 'Bearer not.a.token' },
    });
    expect401(res);
  });
});
