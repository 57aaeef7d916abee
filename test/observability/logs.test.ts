// The log as an operator reads it: the one-process server as a real process, its standard
// output read line by line (the audit lines too: one process serves every test here).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../helpers/processes';
import { loadConfig } from '../../lib/config';
import { api, login } from '../helpers/http';
import { ADMIN, cleanupDatabases, isolatedEnv } from '../helpers/server';

describe('log lines', () => {
  const env = {
    ...isolatedEnv(),
    LOG_LEVEL: 'info',
    AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
    AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
  };
  const lines: string[] = [];
  let stderr = '';
  let url: string;
  let child: ReturnType<typeof spawn>;
  let exited: Promise<number | null>;

  const parsed = () => lines.map((l) => JSON.parse(l) as Record<string, any>);
  async function lineMatching(match: (l: Record<string, any>) => boolean): Promise<Record<string, any>> {
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      const found = lines
        .map((l) => {
          try {
            return JSON.parse(l);
          } catch {
            return undefined;
          }
        })
        .find((l) => l && match(l));
      if (found) return found;
    }
    throw new Error(`no such log line in:\n${lines.join('\n')}`);
  }

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, [path.join(__dirname, '../../dist/bin/all-in-one.js')], {
      env: { ...process.env, NODE_ENV: 'production', ...env, HOST: '0.0.0.0', PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    exited = new Promise((resolve) => child.once('exit', resolve));
    let buffered = '';
    child.stdout!.on('data', (d: Buffer) => {
      buffered += d.toString('utf8');
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      lines.push(...parts.filter(Boolean));
    });
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    await lineMatching((l) => l.msg === 'ready');
  }, 60_000);

  afterAll(async () => {
    if (child?.exitCode === null) child.kill('SIGTERM');
    await exited;
    await cleanupDatabases(loadConfig(env));
  }, 30_000);

  it('names the address actually bound, and logs the bootstrap admin it created', async () => {
    const ready = await lineMatching((l) => l.msg === 'ready');
    expect(ready.address).toMatch(/^0\.0\.0\.0:\d+$/);
    const bootstrap = await lineMatching((l) => l.msg === 'bootstrap admin created');
    expect(bootstrap).toMatchObject({ username: ADMIN.username, roles: ['admin'] });
    expect(bootstrap.password).toBeUndefined();
  });

  it('writes one short line per request with method, route, status, duration, request id and user', async () => {
    const tokens = await login(url, ADMIN);
    const requestId = `logs-${Date.now()}`;
    const res = await api(url).get('/api/v1/auth/session', {
      token: tokens.access_token,
      headers: { 'x-request-id': requestId },
    });
    expect(res.status).toBe(200);
    const line = await lineMatching((l) => l.request_id === requestId && l.msg === 'request completed');
    expect(line).toMatchObject({
      level: 30,
      method: 'GET',
      route: '/api/v1/auth/session',
      status: 200,
      user_id: res.body.user_id,
    });
    expect(typeof line.duration_ms).toBe('number');
    // Not the whole request: no headers (and so no token) at info.
    expect(line.req).toBeUndefined();
    const raw = lines.find((l) => l.includes(requestId) && l.includes('request completed'))!;
    expect(raw).not.toContain(tokens.access_token);
    expect(raw.length).toBeLessThan(400);
  });

  it('never logs the query string of a GraphQL GET (it carries operations and variables)', async () => {
    const requestId = `logs-get-${Date.now()}`;
    const secret = 'hunter2-in-a-url';
    await fetch(
      `${url}/graphql?query=${encodeURIComponent(`mutation { login(username: "x", password: "${secret}") { accessToken } }`)}`,
      { headers: { 'x-request-id': requestId } },
    );
    await lineMatching((l) => l.request_id === requestId);
    expect(lines.join('\n')).not.toContain(secret);
  });

  it('has a line for each audit event, with the username', async () => {
    const at = api(url);
    expect(
      (await at.post('/api/v1/auth/login', { username: ADMIN.username, password: 'not the password' })).status,
    ).toBe(401);
    const tokens = await login(url, ADMIN);
    expect((await at.post('/api/v1/auth/logout', undefined, { token: tokens.access_token })).status).toBe(202);
    expect(await lineMatching((l) => l.audit === 'login.failed' && l.username === ADMIN.username)).toMatchObject({
      username: ADMIN.username,
      reason: 'wrong_password',
      client_address: expect.stringMatching(/127\.0\.0\.1/),
    });
    expect(
      await lineMatching((l) => l.audit === 'session.created' && l.session_id === tokens.session_id),
    ).toMatchObject({ username: ADMIN.username, session_id: tokens.session_id });
    expect(
      await lineMatching((l) => l.audit === 'session.revoked' && l.session_id === tokens.session_id),
    ).toMatchObject({ username: ADMIN.username, reason: 'logout' });
  });

  it('writes nothing but JSON lines, each key once, its shutdown included', async () => {
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(parsed().some((l) => l.msg === 'SIGTERM received: shutting down' && l.level === 30)).toBe(true);
    for (const line of lines) {
      const keys = [...line.matchAll(/"(\w+)":/g)].map((m) => m[1]);
      // Nested objects may reuse a name; top-level facts such as `subgraph` appear once.
      expect(keys.filter((k) => k === 'subgraph').length).toBeLessThanOrEqual(1);
    }
    expect(stderr).toBe('');
  });
});
