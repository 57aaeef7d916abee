// LoginThrottle below HTTP: its refusal (message, Retry-After), and unlock() on both stores —
// on the memory store through the addresses it remembers per username (bounded at 10,000
// usernames, oldest first out), on the database store through the limiter's own rows.
import type { DataSource } from 'typeorm';
import { loadConfig } from '../../lib/config';
import { openDatabase } from '../../lib/database/open';
import { AppError } from '../../lib/errors';
import { authSubgraph } from '../../subgraphs/auth';
import { LoginThrottle } from '../../subgraphs/auth/login-throttle';
import { cleanupDatabases, isolatedEnv } from '../helpers/server';

const env = {
  ...isolatedEnv(),
  LOG_LEVEL: 'silent',
  LOGIN_MAX_FAILURES_PER_USER: '2',
  LOGIN_MAX_ATTEMPTS_PER_CLIENT: '1000000',
  LOGIN_RATE_WINDOW_SECONDS: '60',
};
let db: DataSource;

beforeAll(async () => {
  db = await openDatabase(loadConfig(env), {
    name: 'auth',
    entities: authSubgraph.entities,
    migrations: authSubgraph.migrations,
  });
});
afterAll(async () => {
  await db?.destroy();
  await cleanupDatabases(loadConfig(env));
});

const throttle = (store: 'memory' | 'database') =>
  LoginThrottle.create(loadConfig({ ...env, RATE_LIMIT_STORE: store }), db);
/** Two wrong passwords: the third attempt is refused. */
async function lockOut(t: LoginThrottle, user: string, ip: string) {
  await t.attempt(user, ip);
  await t.attempt(user, ip);
}
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'let through',
    (err) => err,
  );

describe.each(['memory', 'database'] as const)('LoginThrottle (RATE_LIMIT_STORE=%s)', (store) => {
  it('refuses a locked-out username with a clear message and the seconds left in the window', async () => {
    const t = await throttle(store);
    await lockOut(t, 'refused', '10.0.0.1');
    const err = await refusal(t.attempt('refused', '10.0.0.1'));
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'rate_limit_exceeded', message: 'Too many login attempts; try again later.' });
    expect(err.retryAfter).toBeGreaterThan(50);
    expect(err.retryAfter).toBeLessThanOrEqual(60);
  });

  it('unlock() clears the username from every address it was tried from', async () => {
    const t = await throttle(store);
    await lockOut(t, 'two places', '10.0.0.1');
    await lockOut(t, 'two places', '10.0.0.2');
    await lockOut(t, 'bystander', '10.0.0.1');
    await t.unlock('two places');
    await expect(t.attempt('two places', '10.0.0.1')).resolves.toBeDefined();
    await expect(t.attempt('two places', '10.0.0.2')).resolves.toBeDefined();
    expect(await refusal(t.attempt('bystander', '10.0.0.1'))).toMatchObject({ code: 'rate_limit_exceeded' });
  });
});

describe('throttles on one database, as in two auth processes', () => {
  it('share the database store: failures counted by one refuse in the other, whose unlock() clears them', async () => {
    const [a, b] = await Promise.all([throttle('database'), throttle('database')]);
    await lockOut(a, 'shared', '10.0.1.1');
    expect(await refusal(b.attempt('shared', '10.0.1.1'))).toMatchObject({ code: 'rate_limit_exceeded' });
    await b.unlock('shared');
    await expect(a.attempt('shared', '10.0.1.1')).resolves.toBeDefined();
    // The limiter's rows are named as unlock() reads them.
    const rows: { key: string }[] = await db.query(
      "SELECT `key` AS `key` FROM rate_limits WHERE `key` LIKE '%10.0.1.1'",
    );
    expect(rows.map((r) => r.key).sort()).toEqual(['login_fail:shared|10.0.1.1', 'login_ip:10.0.1.1']);
  });

  it('do not share the memory store', async () => {
    const [a, b] = await Promise.all([throttle('memory'), throttle('memory')]);
    await lockOut(a, 'apart', '10.0.1.2');
    await expect(b.attempt('apart', '10.0.1.2')).resolves.toBeDefined();
  });

  it('unlock() clears that username only, not a longer one that starts with it and a "|"', async () => {
    const t = await throttle('database');
    await lockOut(t, 'bob', '10.0.1.3');
    await lockOut(t, 'bob|x', '10.0.1.3');
    await t.unlock('bob');
    await expect(t.attempt('bob', '10.0.1.3')).resolves.toBeDefined();
    expect(await refusal(t.attempt('bob|x', '10.0.1.3'))).toMatchObject({ code: 'rate_limit_exceeded' });
  });
});

it('the memory store remembers the addresses of 10,000 usernames, forgetting the oldest first', async () => {
  const t = await throttle('memory');
  await lockOut(t, 'oldest', '10.0.0.1');
  await lockOut(t, 'second', '10.0.0.1');
  for (let i = 0; i < 9_999; i++) await t.attempt(`user ${i}`, '10.0.0.9'); // 10,001 usernames in all
  await t.unlock('oldest'); // forgotten: its failures stay until the window ends
  await t.unlock('second');
  expect(await refusal(t.attempt('oldest', '10.0.0.1'))).toMatchObject({ code: 'rate_limit_exceeded' });
  await expect(t.attempt('second', '10.0.0.1')).resolves.toBeDefined();
});
