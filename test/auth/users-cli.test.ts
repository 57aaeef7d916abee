// `npm run users`: the built CLI as an operator runs it, against the test's database, beside a
// running server. Each command is checked by its effect through the API (login, tokens refused
// at the auth and tts subgraphs, audit events), not by the CLI's own word.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { api, createUserAndLogin, login } from '../helpers/http';
import { openStream, OpenStream } from '../helpers/sse';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

const ROOT = path.join(__dirname, '../..');
const CLI = path.join(ROOT, 'dist/bin/users.js');
const MAX_FAILURES = 3;
let server: TestServer;
let http: ReturnType<typeof api>;
let adminToken: string;
let audit: OpenStream;

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
});
afterAll(async () => {
  audit?.close();
  await server?.close();
});

const cliEnv = () => ({
  ...process.env,
  DATA_DIR: server.config.dataDir,
  DATABASE_URL: server.config.DATABASE_URL,
  LOG_LEVEL: 'silent',
  LOGIN_MAX_FAILURES_PER_USER: String(MAX_FAILURES),
});

/**
 * Runs the CLI and waits for it without blocking this process: the server under test runs here,
 * and a frozen event loop could hold a database lock the CLI waits for.
 */
function run(
  args: string[],
  stdin = '',
  env: Record<string, string> = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, args, { env: { ...cliEnv(), ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.end(stdin);
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

const users = (args: string[], stdin = '', env: Record<string, string> = {}) => run([CLI, ...args], stdin, env);

const createVoice = (token: string, name: string) =>
  http.post('/api/v1/tts/voices', { name, base_voice: 'f3' }, { token });

describe('npm run users -- add', () => {
  it('adds a user whose password comes from standard input; the user can log in', async () => {
    const added = await users(['add', 'ada'], 'analytical engine\n');
    expect(added.status).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ username: 'ada', roles: ['user'] });
    const tokens = await login(server.url, { username: 'ada', password: 'analytical engine' });
    const me = await api(server.url).graphql('{ me { username roles } }', {}, tokens.access_token);
    expect(me.body.data.me).toEqual({ username: 'ada', roles: ['user'] });
    const created = await audit.waitFor((f) => f.event === 'user.created' && f.data.username === 'ada');
    expect(created[0].data.by).toBe('cli');
  });

  it('--admin grants the admin role', async () => {
    const added = await users(['add', 'root2', '--admin'], 'another long password');
    expect(added.stderr).toBe('');
    expect(added.status).toBe(0);
    const tokens = await login(server.url, { username: 'root2', password: 'another long password' });
    const me = await api(server.url).graphql('{ me { roles } }', {}, tokens.access_token);
    expect(me.body.data.me.roles).toEqual(['admin']);
  });

  it('refuses a short or guessable password, a taken name and a bad command line, with a non-zero exit', async () => {
    const short = await users(['add', 'shorty'], 'short\n');
    expect(short.status).toBe(1);
    expect(short.stderr).toMatch(/password/);
    const weak = await users(['add', 'weakling'], 'password123\n');
    expect(weak.status).toBe(1);
    expect(weak.stderr).toMatch(/validation_error.*too easy to guess/);
    const taken = await users(['add', 'ADA'], 'analytical engine\n');
    expect(taken.status).toBe(1);
    expect(taken.stderr).toMatch(/conflict/);
    const usage = await users(['add']);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(/usage/);
    expect((await users(['add', 'x', '--root'], 'long enough pw')).status).toBe(2);
    expect((await users(['frobnicate', 'x'])).status).toBe(2);
    expect((await users(['disable', 'x', '--admin'])).status).toBe(2);
  });

  it('takes the required strength from PASSWORD_MIN_SCORE', async () => {
    // "analytical engine" scores 3: enough by default, not at 4; "password123" scores 0.
    const strict = await users(['add', 'strict'], 'analytical engine\n', { PASSWORD_MIN_SCORE: '4' });
    expect(strict.status).toBe(1);
    expect(strict.stderr).toMatch(/strength 3 of 4, at least 4 needed/);
    expect((await users(['add', 'lenient'], 'password123\n', { PASSWORD_MIN_SCORE: '0' })).status).toBe(0);
    expect((await users(['add', 'strict'], 'x'.repeat(8), { PASSWORD_MIN_SCORE: '9' })).stderr).toMatch(
      /PASSWORD_MIN_SCORE/,
    );
  });

  it('asks twice without echoing when the password is typed at a terminal', async () => {
    // `script` gives the CLI a pseudo-terminal; what it prints is what a person would see.
    const child = spawn('script', ['-qfec', `${process.execPath} ${CLI} add typist`, '/dev/null'], {
      env: cliEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    const seen = (text: string) =>
      new Promise<void>((resolve) => {
        const check = () =>
          screen.includes(text) ? resolve() : child.stdout.once('data', (d) => ((screen += d), check()));
        check();
      });
    await seen('Password: ');
    child.stdin.write('typed secret phrase\r');
    await seen('Again: ');
    child.stdin.write('typed secret phrase\r');
    const code = await new Promise((resolve) => child.on('exit', resolve));
    child.stdout.on('data', (d) => (screen += d));
    expect(code).toBe(0);
    expect(screen).not.toContain('typed secret');
    await login(server.url, { username: 'typist', password: 'typed secret phrase' });
  });
});

describe('npm run users -- list', () => {
  it('prints every user as a JSON line, or those whose name starts with a prefix', async () => {
    const all = await users(['list']);
    expect(all.status).toBe(0);
    const rows = all.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => r.username)).toEqual(expect.arrayContaining(['admin', 'ada', 'root2']));
    expect(rows.find((r) => r.username === 'root2')).toMatchObject({
      roles: ['admin'],
      disabled: false,
      version: 1,
      last_login_at: expect.any(String),
    });
    const some = await users(['list', 'RO']);
    expect(
      some.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).username),
    ).toEqual(['root2']);
  });
});

describe('npm run users -- disable / enable / unlock / passwd / remove', () => {
  it('disable ends the sessions at once, at the auth and tts subgraphs; enable lets the user back', async () => {
    const user = await createUserAndLogin(server.url, adminToken, 'cli disabled', 'cli disabled password');
    const off = await users(['disable', 'CLI Disabled']);
    expect(off.status).toBe(0);
    expect(JSON.parse(off.stdout)).toMatchObject({ id: user.id, disabled: true, version: 2 });
    expect((await audit.waitFor((f) => f.event === 'user.disabled' && f.data.user_id === user.id))[0].data.by).toBe(
      'cli',
    );
    await audit.waitFor(
      (f) =>
        f.event === 'session.revoked' &&
        f.data.session_id === user.tokens.session_id &&
        f.data.reason === 'user_disabled',
    );
    expect((await http.get('/api/v1/auth/session', { token: user.token })).status).toBe(401);
    expect((await createVoice(user.token, 'refused')).status).toBe(401);
    expect(
      (await http.post('/api/v1/auth/login', { username: 'cli disabled', password: 'cli disabled password' })).status,
    ).toBe(401);

    expect((await users(['enable', 'cli disabled'])).status).toBe(0);
    await audit.waitFor((f) => f.event === 'user.enabled' && f.data.user_id === user.id);
    await login(server.url, { username: 'cli disabled', password: 'cli disabled password' });
  });

  it('unlock clears the failed-login counts', async () => {
    const user = await createUserAndLogin(server.url, adminToken, 'cli locked', 'cli locked password');
    for (let i = 0; i < MAX_FAILURES; i++)
      await http.post('/api/v1/auth/login', { username: 'cli locked', password: `wrong guess ${i}` });
    expect(
      (await http.post('/api/v1/auth/login', { username: 'cli locked', password: 'cli locked password' })).status,
    ).toBe(429);
    expect((await users(['unlock', 'cli locked'])).status).toBe(0);
    await audit.waitFor((f) => f.event === 'user.unlocked' && f.data.user_id === user.id);
    await login(server.url, { username: 'cli locked', password: 'cli locked password' });
  });

  it('passwd sets a new password from standard input, checked by the policy, and ends the sessions', async () => {
    const user = await createUserAndLogin(server.url, adminToken, 'cli passwd', 'cli passwd password');
    const weak = await users(['passwd', 'cli passwd'], 'password1\n');
    expect(weak.status).toBe(1);
    expect(weak.stderr).toMatch(/too easy to guess/);
    expect((await users(['passwd', 'cli passwd'], 'the operator chose this one\n')).status).toBe(0);
    await audit.waitFor(
      (f) =>
        f.event === 'session.revoked' &&
        f.data.session_id === user.tokens.session_id &&
        f.data.reason === 'password_changed',
    );
    expect((await createVoice(user.token, 'old session')).status).toBe(401);
    expect(
      (await http.post('/api/v1/auth/login', { username: 'cli passwd', password: 'cli passwd password' })).status,
    ).toBe(401);
    await login(server.url, { username: 'cli passwd', password: 'the operator chose this one' });
  });

  it('remove deletes the user and ends their sessions; unknown names and the last admin are refused', async () => {
    const user = await createUserAndLogin(server.url, adminToken, 'cli removed', 'cli removed password');
    const removed = await users(['remove', 'cli removed']);
    expect(removed.status).toBe(0);
    expect(JSON.parse(removed.stdout)).toEqual({ id: user.id, username: 'cli removed', removed: true });
    expect(
      (await audit.waitFor((f) => f.event === 'user.deleted' && f.data.user_id === user.id))[0].data,
    ).toMatchObject({ by: 'cli', username: 'cli removed' });
    await audit.waitFor((f) => f.event === 'session.revoked' && f.data.session_id === user.tokens.session_id);
    expect((await createVoice(user.token, 'gone')).status).toBe(401);
    expect((await http.get(`/api/v1/admin/users/${user.id}`, { token: adminToken })).status).toBe(404);

    const unknown = await users(['remove', 'nobody here']);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/not_found/);

    // root2 disabled, admin is the last enabled administrator: neither disable nor remove may take it.
    expect((await users(['disable', 'root2'])).status).toBe(0);
    for (const command of ['disable', 'remove']) {
      const last = await users([command, 'admin']);
      expect(last.status).toBe(1);
      expect(last.stderr).toMatch(/conflict: Cannot .* the last administrator/);
    }
    expect((await http.get('/api/v1/auth/session', { token: adminToken })).status).toBe(200);
    expect((await users(['enable', 'root2'])).status).toBe(0);
    expect((await users(['remove', 'root2'])).status).toBe(0);
  });
});

describe('npm run users', () => {
  it('runs the built files without rebuilding when they are current', async () => {
    const built = fs.statSync(CLI).mtimeMs;
    const res = await run([path.join(ROOT, 'scripts/built.js'), 'bin/users.js', 'list', 'ada']);
    expect(res.status).toBe(0);
    expect(JSON.parse(res.stdout).username).toBe('ada');
    expect(fs.statSync(CLI).mtimeMs).toBe(built);
    expect(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.users).toBe(
      'node scripts/built.js bin/users.js',
    );
  });
});
