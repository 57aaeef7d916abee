// The active-session quota (issue 29, item 9; CONTRACT "Limits": 100 by default): a login past
// it revokes the user's oldest session (`session_limit`, the usual session.revoked event), whose
// tokens are then refused; "log out everywhere else" ends what is left. A quota of 3 here.
import { api, createUserAndLogin, login } from '../helpers/http';
import { openStream, OpenStream } from '../helpers/sse';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

const QUOTA = 3;
let server: TestServer;
let adminToken: string;
let audit: OpenStream;

beforeAll(async () => {
  server = await startTestServer({ MAX_SESSIONS_PER_USER: String(QUOTA) });
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

const revokedEvent = async (sessionId: string) =>
  (await audit.waitFor((f) => f.event === 'session.revoked' && f.data.session_id === sessionId))[0];

it('revokes the oldest session when a login goes past the quota, and only that one', async () => {
  const http = api(server.url);
  const user = await createUserAndLogin(server.url, adminToken, 'many devices', 'many devices password');
  const first = user.tokens;
  const logins = [];
  for (let i = 0; i < QUOTA; i++)
    logins.push(await login(server.url, { username: 'many devices', password: 'many devices password' }));

  // The first session is past the quota: revoked, and its tokens refused everywhere.
  expect((await revokedEvent(first.session_id)).data).toMatchObject({ reason: 'session_limit', user_id: user.id });
  expect((await http.get('/api/v1/auth/session', { token: first.access_token })).status).toBe(401);
  expect((await http.post('/api/v1/auth/refresh', { refresh_token: first.refresh_token })).status).toBe(401);
  expect(
    (await http.post('/api/v1/tts/voices', { name: 'past the quota', base_voice: 'f3' }, { token: first.access_token }))
      .status,
  ).toBe(401);

  // The newest QUOTA live on.
  const newest = logins[logins.length - 1];
  const listed = await http.get('/api/v1/auth/sessions', { token: newest.access_token });
  expect(listed.body.items.map((s: any) => s.session_id).sort()).toEqual(logins.map((t) => t.session_id).sort());
  for (const t of logins) expect((await http.get('/api/v1/auth/session', { token: t.access_token })).status).toBe(200);

  // One more: the next oldest goes.
  await login(server.url, { username: 'many devices', password: 'many devices password' });
  expect((await revokedEvent(logins[0].session_id)).data.reason).toBe('session_limit');
  expect((await http.get('/api/v1/auth/session', { token: logins[1].access_token })).status).toBe(200);

  // Logging out everywhere else at the quota ends the other QUOTA - 1.
  const all = await http.delete('/api/v1/auth/sessions', { token: newest.access_token });
  expect(all.body.revoked).toBe(QUOTA - 1);
  const left = await http.get('/api/v1/auth/sessions', { token: newest.access_token });
  expect(left.body.items.map((s: any) => s.session_id)).toEqual([newest.session_id]);
});
