// The roles migration on a database made by the previous release's migrations: existing users
// keep what they had. An administrator stays `admin`, a user without a role becomes `user`, and a
// role name the old admin routes accepted becomes a custom role with the powers it gave then.
import { loadConfig } from '../../lib/config';
import { openDatabase } from '../../lib/database/open';
import { OutboxEvent } from '../../lib/outbox';
import { authSubgraph } from '../../subgraphs/auth';
import { Session } from '../../subgraphs/auth/entities/session';
import { User } from '../../subgraphs/auth/entities/user';
import { Roles1739000000000 } from '../../subgraphs/auth/migrations/1739000000000-Roles';
import { AuthUserCaps1796000000000 } from '../../subgraphs/auth/migrations/1796000000000-AuthUserCaps';
import { createUser } from '../../subgraphs/auth/users';
import { api, login } from '../helpers/http';
import { isolatedEnv, startTestServer, TestServer } from '../helpers/server';

const env = isolatedEnv();
const OLD_ADMIN = { username: 'old admin', password: 'an old admin password' };
const OLD_USER = { username: 'old user', password: 'an old user password' };
const OLD_EDITOR = { username: 'old editor', password: 'an old editor password' };
let server: TestServer;

beforeAll(async () => {
  // The previous release: every auth migration but the roles one, and the caps one that came
  // after it (it counts the roles table).
  const config = loadConfig({ ...env, LOG_LEVEL: 'silent' });
  const later = new Set<unknown>([Roles1739000000000, AuthUserCaps1796000000000]);
  const previous = authSubgraph.migrations.filter((m) => !later.has(m));
  expect(previous.length).toBe(authSubgraph.migrations.length - later.size);
  const old = await openDatabase(config, {
    name: 'auth',
    entities: [User, Session, OutboxEvent],
    migrations: previous,
  });
  try {
    for (const [who, roles] of [
      [OLD_ADMIN, ['admin']],
      [OLD_USER, []],
      [OLD_EDITOR, ['editor']],
    ] as const) {
      await createUser(old, { ...who, roles: [...roles], minScore: 0, hashCost: config });
    }
    expect(await old.query('SELECT COUNT(*) AS n FROM users')).toEqual([{ n: expect.anything() }]);
  } finally {
    await old.destroy();
  }
  server = await startTestServer({
    ...env,
    AUTH_BOOTSTRAP_USERNAME: OLD_ADMIN.username,
    AUTH_BOOTSTRAP_PASSWORD: OLD_ADMIN.password,
  });
}, 60_000);
afterAll(() => server?.close());

const me = async (who: { username: string; password: string }) =>
  (await api(server.url).get('/api/v1/auth/me', { token: (await login(server.url, who)).access_token })).body;

describe('the roles migration', () => {
  it('keeps the administrator an administrator', async () => {
    const admin = await me(OLD_ADMIN);
    expect(admin.roles).toEqual(['admin']);
    expect(admin.scopes).toEqual(expect.arrayContaining(['admin:users', 'admin:roles', 'admin:integrations']));
  });

  it('makes a user without a role a `user`', async () => {
    const user = await me(OLD_USER);
    expect(user.roles).toEqual(['user']);
    expect(user.scopes).toContain('tts:synthesize');
    expect(user.scopes.filter((s: string) => s.startsWith('admin:'))).toEqual([]);
  });

  it('turns another role name into a custom role with the powers it gave', async () => {
    const editor = await me(OLD_EDITOR);
    expect(editor.roles).toEqual(['editor']);
    // The powers a role name gave then (a plain user's); scopes of modules added since are a
    // plain user's but not this custom role's, until an administrator adds them to it.
    const then = ['notes', 'vault', 'hubs'].flatMap((m) => [`${m}:read`, `${m}:write`]);
    then.push('tts:read', 'tts:write', 'tts:synthesize', 'events:read', 'account:write');
    expect([...editor.scopes].sort()).toEqual(then.sort());
    const plain = await me(OLD_USER);
    expect(plain.scopes).toEqual(expect.arrayContaining(editor.scopes));
    const admin = await login(server.url, OLD_ADMIN);
    const role = await api(server.url).get('/api/v1/admin/roles/editor', { token: admin.access_token });
    expect(role.body).toMatchObject({ name: 'editor', built_in: false, version: 1 });
  });
});
