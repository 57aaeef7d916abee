// The trash's retention purge (lib/kit/trash.ts TrashRetention), on SQLite and MySQL, with a
// retention of about two seconds: what was trashed is purged without anyone asking, in batches on
// each module's job queue, each with its `<type>.deleted`, and its place in the caps is freed.
import { EventLog } from '../../lib/event-log';
import { api, createUserAndLogin, login } from '../helpers/http';
import { loggedFor, openLog, untilLogged } from '../helpers/event-log';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';

/** About 1.7 s. */
const RETENTION_DAYS = 0.00002;

let server: TestServer;
let http: ReturnType<typeof api>;
let adminToken: string;
let log: EventLog;

beforeAll(async () => {
  server = await startTestServer({
    TRASH_RETENTION_DAYS: String(RETENTION_DAYS),
    NOTES_PER_USER: '2',
    NOTES_BATCH_ROWS: '2',
    JOBS_BATCH_ROWS: '2',
    SYNTHESIS_CONCURRENCY: '0',
  });
  http = api(server.url);
  adminToken = (await login(server.url, ADMIN)).access_token;
  log = await openLog(server.config);
}, 60_000);
afterAll(async () => {
  await log?.close();
  await server?.close();
});

it('purges notes, vault items and hubs once their retention ends, each with its <type>.deleted, freeing the caps', async () => {
  const u = await createUserAndLogin(server.url, adminToken, 'retention-user');
  const notes: string[] = [];
  for (const body of ['first', 'second']) {
    const res = await http.post('/api/v1/notes', { body }, { token: u.token });
    expect(res.status).toBe(202);
    notes.push(res.body.id);
  }
  const item = await http.post('/api/v1/vault/items', { text: 'kept a moment', title: 'Brief' }, { token: u.token });
  expect(item.status).toBe(202);
  const ready = await until(async () => {
    const r = await http.get(`/api/v1/vault/items/${item.body.id}`, { token: u.token });
    return r.body.state !== 'pending' && r.body;
  }, 'the item enriched');
  const hub = (await http.post('/api/v1/hubs', { name: 'Brief hub' }, { token: u.token })).body.id as string;

  // More than a batch of notes (NOTES_BATCH_ROWS = 2 … and one job per owner and module).
  for (const id of notes)
    expect((await http.delete(`/api/v1/notes/${id}?version=1`, { token: u.token })).status).toBe(202);
  expect(
    (await http.delete(`/api/v1/vault/items/${item.body.id}?version=${ready.version}`, { token: u.token })).status,
  ).toBe(202);
  expect((await http.delete(`/api/v1/hubs/${hub}?version=1`, { token: u.token })).status).toBe(202);
  // Trashed notes still count.
  expect((await http.post('/api/v1/notes', { body: 'third' }, { token: u.token })).status).toBe(409);

  await until(
    async () => (await http.get('/api/v1/trash', { token: u.token })).body.items.length === 0,
    'the retention purge',
    30_000,
  );
  for (const id of notes) await untilLogged(log, id, 'note.deleted');
  await untilLogged(log, item.body.id, 'vault.item.deleted');
  await untilLogged(log, hub, 'hub.deleted');
  // Exactly once each.
  expect(await loggedFor(log, notes[0], 'note.deleted')).toHaveLength(1);
  expect((await loggedFor(log, notes[0], 'note.deleted'))[0].payload).toContain('"reason":"purged"');
  // Purged: the places are free again, nothing is left to restore.
  expect((await http.post('/api/v1/notes', { body: 'third' }, { token: u.token })).status).toBe(202);
  expect((await http.post(`/api/v1/trash/note/${notes[0]}/restore`, undefined, { token: u.token })).status).toBe(404);
  expect((await http.get(`/api/v1/vault/items/${item.body.id}`, { token: u.token })).status).toBe(404);
}, 90_000);
