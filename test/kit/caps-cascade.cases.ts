// A deleted user's cap counters (lib/kit/user-caps.ts) go with their rows: each module's cascade
// on the kit's job queue forgets the user's `user_caps` rows in its last batch (auth in the
// deletion's own transaction), so no module keeps counters for a user who no longer exists.
// Another user's counters stay as they were.
import type { DataSource } from 'typeorm';
import { openDatabase } from '../../lib/database/open';
import { UserCap } from '../../lib/kit/user-caps';
import { api, createUserAndLogin, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';

const MODULES = ['auth', 'notes', 'vault', 'hubs', 'integrations', 'tts'] as const;

let server: TestServer;
let http: ReturnType<typeof api>;
let adminToken: string;
const dbs = new Map<string, DataSource>();

beforeAll(async () => {
  server = await startTestServer({
    SYNTHESIS_CONCURRENCY: '0',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    // Several batches per module.
    JOBS_BATCH_ROWS: '2',
    NOTES_BATCH_ROWS: '2',
  });
  http = api(server.url);
  adminToken = (await login(server.url, ADMIN)).access_token;
  for (const name of MODULES)
    dbs.set(
      name,
      await openDatabase({ ...server.config, MIGRATIONS_RUN: false }, { name, entities: [UserCap], migrations: [] }),
    );
}, 120_000);

afterAll(async () => {
  for (const db of dbs.values()) await db.destroy();
  await server?.close();
});

/** The user's counters, `module/cap` → used. */
async function countersOf(userId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, db] of dbs)
    for (const row of await db.manager.findBy(UserCap, { ownerId: userId }))
      out[`${name}/${row.cap}`] = Number(row.used);
  return out;
}

async function userWithCappedRows(name: string) {
  const user = await createUserAndLogin(server.url, adminToken, name);
  const token = user.token;
  const created = async (path: string, body: unknown) => {
    const res = await http.post(path, body, { token });
    expect([200, 201, 202]).toContain(res.status);
    return res.body;
  };
  for (let i = 0; i < 5; i++) await created('/api/v1/notes', { title: `note ${i}`, body: 'text' });
  for (let i = 0; i < 3; i++) await created('/api/v1/notes/folders', { name: `folder ${i}` });
  const items = [];
  for (let i = 0; i < 3; i++) items.push(await created('/api/v1/vault/items', { text: `a text ${name} ${i}` }));
  await created('/api/v1/vault/rules', { name: 'rule', when: { kind: 'text' }, then: { tags: ['t'] } });
  for (let i = 0; i < 3; i++) await created('/api/v1/hubs', { name: `hub ${i}` });
  await created('/api/v1/integrations/webhooks', { url: 'http://127.0.0.1:9/hook', event_types: ['note.*'] });
  for (let i = 0; i < 3; i++) await created('/api/v1/tts/voices', { name: `voice ${i}`, base_voice: 'f3' });
  await created('/api/v1/auth/api-keys', { name: 'key', scopes: ['notes:read'] });
  for (const item of items)
    await until(
      async () => (await http.get(`/api/v1/vault/items/${item.id}`, { token })).body.state !== 'pending',
      'item to settle',
    );
  return user;
}

it("forgets a deleted user's cap counters in every module once their rows are gone, and no one else's", async () => {
  const doomed = await userWithCappedRows('caps-doomed');
  const keeper = await userWithCappedRows('caps-keeper');
  const held = {
    'auth/API_KEYS_PER_USER': 1,
    'notes/NOTES_PER_USER': 5,
    'notes/NOTE_FOLDERS_PER_USER': 3,
    'vault/VAULT_ITEMS_PER_USER': 3,
    'vault/VAULT_RULES_PER_USER': 1,
    'hubs/HUBS_PER_USER': 3,
    'integrations/WEBHOOKS_PER_USER': 1,
    'tts/VOICES_PER_USER': 3,
  };
  expect(await countersOf(doomed.id)).toMatchObject(held);
  const keeperBefore = await countersOf(keeper.id);
  expect(keeperBefore).toMatchObject(held);

  expect((await http.delete(`/api/v1/admin/users/${doomed.id}?version=1`, { token: adminToken })).status).toBe(202);
  await until(async () => Object.keys(await countersOf(doomed.id)).length === 0, 'the counters to go', 60_000);
  // The rows went before their counters.
  const count = (module: string, table: string, column = 'owner_id') =>
    dbs
      .get(module)!
      .query(`SELECT COUNT(*) AS n FROM ${table} WHERE ${column} = ?`, [doomed.id])
      .then((r: { n: number | string }[]) => Number(r[0].n));
  expect(await count('notes', 'notes')).toBe(0);
  expect(await count('notes', 'note_folders')).toBe(0);
  expect(await count('vault', 'vault_items')).toBe(0);
  expect(await count('vault', 'vault_rules')).toBe(0);
  expect(await count('hubs', 'hubs')).toBe(0);
  expect(await count('integrations', 'webhooks')).toBe(0);
  expect(await count('tts', 'voices')).toBe(0);
  expect(await count('auth', 'api_keys', 'user_id')).toBe(0);
  expect(await countersOf(keeper.id)).toEqual(keeperBefore);
}, 120_000);
