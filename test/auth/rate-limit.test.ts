// Login rate limits on a real server, with the default limits (5 failures per username and
// address, 20 per username from any address, 100 failed attempts per address, 15 minutes), on both
// rate-limit stores. Every test comes from an address of its own (X-Forwarded-For, trusted from
// loopback here: TRUST_PROXY=loopback) and uses names of its own, so no test depends on counts
// another left behind.
import argon2 from 'argon2';
import { api, createUserAndLogin, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

let nextAddress = 1;
/** A client address no other test uses. */
const freshAddress = () => `198.51.100.${nextAddress++}`;

/** Calls of argon2.verify (they still verify), to count the passwords actually checked. */
const verify = jest.spyOn(argon2, 'verify');
const verifiedWith = (password: string) => verify.mock.calls.filter(([, p]) => p === password).length;

function expectRetryAfter(res: { headers: Headers }) {
  const seconds = Number(res.headers.get('retry-after'));
  expect(Number.isInteger(seconds)).toBe(true);
  // The block was just set: most of the 900 s window is left (a file runs well under 5 minutes).
  expect(seconds).toBeGreaterThan(600);
  expect(seconds).toBeLessThanOrEqual(900);
}

describe.each(['database', 'memory'])('login rate limits (RATE_LIMIT_STORE=%s, default limits)', (store) => {
  let server: TestServer;
  let adminToken: string;
  beforeAll(async () => {
    server = await startTestServer({ RATE_LIMIT_STORE: store, TRUST_PROXY: 'loopback' });
    adminToken = (await login(server.url, ADMIN)).access_token;
  });
  afterAll(() => server.close());

  const attempt = (from: string, username: string, password: string) =>
    api(server.url).post('/api/v1/auth/login', { username, password }, { headers: { 'x-forwarded-for': from } });

  it('lets at most 5 of 40 concurrent wrong passwords for one username reach the password check', async () => {
    const user = await createUserAndLogin(server.url, adminToken, `racer-${store}`);
    const from = freshAddress();
    const wrong = `wrong password ${store} race`;
    const answers = await Promise.all(Array.from({ length: 40 }, () => attempt(from, user.username, wrong)));

    expect(verifiedWith(wrong)).toBe(5);
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(35);
    for (const res of answers.filter((r) => r.status === 429)) {
      expect(res.body.error).toBe('rate_limit_exceeded');
      expectRetryAfter(res);
    }
    // Blocked even with the right password, and without checking it.
    const before = verifiedWith(user.password);
    const right = await attempt(from, user.username, user.password);
    expect(right.status).toBe(429);
    expect(verifiedWith(user.password)).toBe(before);
    // The block is per username and address: from elsewhere the user still logs in.
    expect((await attempt(freshAddress(), user.username, user.password)).status).toBe(202);
  });

  it('clears the failures of a username when the right password comes', async () => {
    const user = await createUserAndLogin(server.url, adminToken, `forgetful-${store}`);
    const from = freshAddress();
    for (let i = 0; i < 4; i++) expect((await attempt(from, user.username, 'wrong password')).status).toBe(401);
    expect((await attempt(from, user.username, user.password)).status).toBe(202);
    // Five more failures are allowed again (not one), then the sixth attempt is refused.
    for (let i = 0; i < 5; i++) expect((await attempt(from, user.username, 'wrong password')).status).toBe(401);
    const blocked = await attempt(from, user.username, user.password);
    expect(blocked.status).toBe(429);
    expectRetryAfter(blocked);
  });

  it('locks a username after 20 failures spread over addresses, the right password included, until an administrator unlocks it', async () => {
    const user = await createUserAndLogin(server.url, adminToken, `spread-${store}`);
    const wrong = `wrong password ${store} spread`;
    // One failure from each of 20 addresses: no address comes near its own limit of 5.
    for (let i = 0; i < 20; i++) expect((await attempt(freshAddress(), user.username, wrong)).status).toBe(401);
    expect(verifiedWith(wrong)).toBe(20);

    // Locked from everywhere, a new address and the right password included, without checking it.
    const before = verifiedWith(user.password);
    for (const password of [wrong, user.password]) {
      const locked = await attempt(freshAddress(), user.username, password);
      expect(locked.status).toBe(429);
      expect(locked.body.error).toBe('rate_limit_exceeded');
      expectRetryAfter(locked);
    }
    expect(verifiedWith(user.password)).toBe(before);
    expect(verifiedWith(wrong)).toBe(20);
    // Another username from the same addresses is not affected.
    expect((await attempt(freshAddress(), ADMIN.username, ADMIN.password)).status).toBe(202);

    const unlocked = await api(server.url).post(`/api/v1/admin/users/${user.id}/unlock`, undefined, {
      token: adminToken,
    });
    expect(unlocked.status).toBe(202);
    expect((await attempt(freshAddress(), user.username, user.password)).status).toBe(202);
  });

  it('gives back only its own point on success: the failures from other addresses still count', async () => {
    const user = await createUserAndLogin(server.url, adminToken, `owner-${store}`);
    for (let i = 0; i < 19; i++)
      expect((await attempt(freshAddress(), user.username, 'wrong password')).status).toBe(401);
    expect((await attempt(freshAddress(), user.username, user.password)).status).toBe(202);
    expect((await attempt(freshAddress(), user.username, 'wrong password')).status).toBe(401);
    expect((await attempt(freshAddress(), user.username, user.password)).status).toBe(429);
  });

  it('counts failures of unknown usernames like those of known ones', async () => {
    const from = freshAddress();
    const wrong = `wrong password ${store} unknown`;
    const answers = await Promise.all(Array.from({ length: 8 }, () => attempt(from, `nobody-${store}`, wrong)));
    expect(answers.map((r) => r.status).filter((s) => s === 401)).toHaveLength(5);
    expect(verifiedWith(wrong)).toBe(5);
  });

  it('counts only failures per client address: 101 good logins from one address all succeed (issue 41)', async () => {
    const user = await createUserAndLogin(server.url, adminToken, `regular-${store}`);
    const from = freshAddress();
    for (let i = 0; i < 101; i++) {
      const res = await attempt(from, user.username, user.password);
      expect({ i, status: res.status }).toEqual({ i, status: 202 });
    }
    // Failures from that address are still counted from zero: the next wrong password is a 401.
    expect((await attempt(from, `someone-else-${store}`, 'a wrong password here')).status).toBe(401);
  });

  it('allows 100 failed attempts per client address, whatever the usernames, and refuses the 101st with Retry-After', async () => {
    const from = freshAddress();
    const wrong = `wrong password ${store} address`;
    const answers = await Promise.all(
      Array.from({ length: 101 }, (_, i) => attempt(from, `someone-${store}-${i}`, wrong)),
    );
    const refused = answers.filter((r) => r.status === 429);
    expect(answers.filter((r) => r.status === 401)).toHaveLength(100);
    expect(refused).toHaveLength(1);
    expect(refused[0].body.error).toBe('rate_limit_exceeded');
    expectRetryAfter(refused[0]);
    expect(verifiedWith(wrong)).toBe(100);
    // Another address is not affected.
    expect((await attempt(freshAddress(), ADMIN.username, ADMIN.password)).status).toBe(202);
  });
});

describe('login rate limits shared by two instances on one database', () => {
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    a = await startTestServer({ LOGIN_MAX_FAILURES_PER_USER: '2', TRUST_PROXY: 'loopback' });
    // The second instance uses the first one's database and data folder.
    b = await startTestServer({
      LOGIN_MAX_FAILURES_PER_USER: '2',
      TRUST_PROXY: 'loopback',
      DATA_DIR: a.config.DATA_DIR,
      DATABASE_URL: a.config.DATABASE_URL,
    });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('counts failures made through either instance', async () => {
    const from = freshAddress();
    const post = (url: string, password: string) =>
      api(url).post(
        '/api/v1/auth/login',
        { username: ADMIN.username, password },
        { headers: { 'x-forwarded-for': from } },
      );
    expect((await post(a.url, 'wrong password')).status).toBe(401);
    expect((await post(b.url, 'wrong password')).status).toBe(401);
    expect((await post(a.url, ADMIN.password)).status).toBe(429);
  });
});
