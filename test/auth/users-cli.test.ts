// `npm run users -- add`: the built CLI as a user runs it, against the test's database.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { api, login } from '../helpers/http';
import { startTestServer, TestServer } from '../helpers/server';

const CLI = path.join(__dirname, '../../dist/bin/users.js');
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

function users(args: string[], stdin: string) {
  const env = { ...process.env, DATA_DIR: server.config.dataDir, DATABASE_URL: server.config.DATABASE_URL, LOG_LEVEL: 'silent' };
  return spawnSync(process.execPath, [CLI, ...args], { input: stdin, env, encoding: 'utf8' });
}

describe('npm run users -- add', () => {
  it('adds a user whose password comes from standard input; the user can log in', async () => {
    const added = users(['add', 'ada'], 'analytical engine\n');
    expect(added.status).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ username: 'ada', roles: [] });
    const tokens = await login(server.url, { username: 'ada', password: 'analytical engine' });
    const me = await api(server.url).graphql('{ me { username roles } }', {}, tokens.access_token);
    expect(me.body.data.me).toEqual({ username: 'ada', roles: [] });
  });

  it('--admin grants the admin role', async () => {
    expect(users(['add', 'root2', '--admin'], 'another long password').status).toBe(0);
    const tokens = await login(server.url, { username: 'root2', password: 'another long password' });
    const me = await api(server.url).graphql('{ me { roles } }', {}, tokens.access_token);
    expect(me.body.data.me.roles).toEqual(['admin']);
  });

  it('refuses a short password, a taken name and a bad command line, with a non-zero exit', () => {
    const short = users(['add', 'shorty'], 'short\n');
    expect(short.status).toBe(1);
    expect(short.stderr).toMatch(/password/);
    const taken = users(['add', 'ADA'], 'analytical engine\n');
    expect(taken.status).toBe(1);
    expect(taken.stderr).toMatch(/conflict/);
    const usage = users(['add'], '');
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(/usage/);
    expect(users(['add', 'x', '--root'], 'long enough pw').status).toBe(2);
  });
});
