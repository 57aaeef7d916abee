// A login racing a password change (issue 29, item 2): logins with the old password keep
// starting while the change runs. No session of a login that verified the old password may stay
// usable once the change has answered: its access token and its refresh token are refused.
// Timing is not forced (no hook, no mock): a steady stream of logins covers the change's whole
// run, so some verify the old hash before the change commits and finish after it.
import { api, createUserAndLogin, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

let server: TestServer;
beforeAll(async () => {
  // Failures after the change (the old password is wrong by then) must not end the stream early.
  server = await startTestServer({
    LOGIN_MAX_FAILURES_PER_USER: '1000',
    LOGIN_MAX_FAILURES_PER_USERNAME: '1000',
    LOGIN_MAX_ATTEMPTS_PER_CLIENT: '100000',
  });
});
afterAll(() => server?.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it('leaves no working session to a login that verified the old password, whenever it finished', async () => {
  const http = api(server.url);
  const adminToken = (await login(server.url, ADMIN)).access_token;
  const oldPassword = 'racing old password 1';
  const user = await createUserAndLogin(server.url, adminToken, 'racer of logins', oldPassword);

  const logins: Promise<{ status: number; body: any }>[] = [];
  const loginWithOldPassword = () =>
    logins.push(http.post('/api/v1/auth/login', { username: 'racer of logins', password: oldPassword }));
  // A few are under way before the change starts, and they keep coming until it has answered.
  for (let i = 0; i < 6; i++) {
    loginWithOldPassword();
    await sleep(10);
  }
  let changeAnswered = false;
  const change = http
    .post(
      '/api/v1/auth/password',
      { current_password: oldPassword, new_password: 'a brand new racing passphrase' },
      { token: user.token },
    )
    .finally(() => (changeAnswered = true));
  while (!changeAnswered && logins.length < 60) {
    loginWithOldPassword();
    await sleep(15);
  }
  expect((await change).status).toBe(202);
  const answers = await Promise.all(logins);

  const started = answers.filter((r) => r.status === 202);
  // The race was run: logins started while the change ran, and some got a session.
  expect(logins.length).toBeGreaterThan(6);
  expect(started.length).toBeGreaterThan(0);
  for (const r of answers) expect([202, 401]).toContain(r.status);
  for (const { body: tokens } of started) {
    expect((await http.get('/api/v1/auth/session', { token: tokens.access_token })).status).toBe(401);
    expect((await http.post('/api/v1/auth/refresh', { refresh_token: tokens.refresh_token })).status).toBe(401);
  }
  // The session that made the change lives on.
  expect((await http.get('/api/v1/auth/session', { token: user.token })).status).toBe(200);
}, 180_000);
