// The trash over notes, vault items and hubs (CONTRACT.md "Trash"), on SQLite and MySQL: a note
// with backlinks and hub references trashed and restored gives back the same backlinks and hub
// nodes; the trash listing merged from three subgraphs and paged with one cursor; caps counting
// trashed items until purged; permanent deletes; purge and empty; another user's items are
// not_found. The retention purge has its own file (retention.test.ts: a short retention).
import { EventLog } from '../../lib/event-log';
import { encodeCursor } from '../../lib/paging';
import { mergeTrashPages, trashCursor } from '../../lib/kit/trash-merge';
import { api, createUserAndLogin, ISO_DATE, login } from '../helpers/http';
import { loggedFor, openLog, untilLogged } from '../helpers/event-log';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';

const NOTES_CAP = 6;

let server: TestServer;
let http: ReturnType<typeof api>;
let adminToken: string;
let log: EventLog;

beforeAll(async () => {
  server = await startTestServer({
    NOTES_PER_USER: String(NOTES_CAP),
    SYNTHESIS_CONCURRENCY: '0',
    LOGIN_MAX_ATTEMPTS_PER_CLIENT: '100000',
  });
  http = api(server.url);
  adminToken = (await login(server.url, ADMIN)).access_token;
  log = await openLog(server.config);
}, 60_000);
afterAll(async () => {
  await log?.close();
  await server?.close();
});

let users = 0;
const newUser = (name: string) => createUserAndLogin(server.url, adminToken, `trash-${name}-${++users}`);

type User = Awaited<ReturnType<typeof newUser>>;

async function createNote(u: User, body: Record<string, unknown>): Promise<string> {
  const res = await http.post('/api/v1/notes', body, { token: u.token });
  expect(res.status).toBe(202);
  return res.body.id;
}
const getNote = (u: User, id: string) => http.get(`/api/v1/notes/${id}`, { token: u.token });
const backlinks = async (u: User, id: string) => {
  const res = await http.get(`/api/v1/notes/${id}/backlinks`, { token: u.token });
  return res.status === 200 ? (res.body.items as { id: string }[]).map((n) => n.id) : res.status;
};
const trash = async (u: User, query = '') => {
  const res = await http.get(`/api/v1/trash${query}`, { token: u.token });
  expect(res.status).toBe(200);
  return res.body as {
    items: { type: string; id: string; title: string; deleted_at: string; purge_at: string }[];
    next_cursor: string | null;
  };
};
const hubNode = async (u: User, hubId: string, nodeId: string) =>
  (await http.get(`/api/v1/hubs/${hubId}/nodes/${nodeId}`, { token: u.token })).body;

/** A hub node pointing at `refId`, once the hubs' projection knows it. */
async function nodeFor(u: User, hubId: string, type: string, refId: string): Promise<string> {
  const res = await until(async () => {
    const r = await http.post(
      `/api/v1/hubs/${hubId}/nodes`,
      { type, ref_id: refId, x: 0, y: 0, width: 100, height: 50 },
      { token: u.token },
    );
    return r.status === 202 && r;
  }, `${type} ${refId} referable in hubs`);
  return res.body.id;
}

describe('trash', () => {
  it('gives a note back with the same tags, links, backlinks and hub nodes; its folder is the top once the folder went', async () => {
    const u = await newUser('restore');
    const folder = await http.post('/api/v1/notes/folders', { name: 'Projects' }, { token: u.token });
    expect(folder.status).toBe(202);
    const folderId = (await http.get('/api/v1/notes/folders', { token: u.token })).body.items[0].id as string;
    const target = await createNote(u, {
      title: 'Trash target',
      body: 'Unmistakable zebracorn words #beta\n\nsee [[Trash source]]',
      tags: ['alpha'],
      folder_id: folderId,
    });
    const source = await createNote(u, { title: 'Trash source', body: 'links to [[Trash target]]' });
    expect(await backlinks(u, target)).toEqual([source]);
    expect(await backlinks(u, source)).toEqual([target]);
    const hub = (await http.post('/api/v1/hubs', { name: 'Refs' }, { token: u.token })).body.id as string;
    const node = await nodeFor(u, hub, 'note', target);
    expect(await hubNode(u, hub, node)).toMatchObject({ missing: false });

    const del = await http.delete(`/api/v1/notes/${target}?version=1`, { token: u.token });
    expect(del.status).toBe(202);
    // Gone from every read but the trash's.
    expect((await getNote(u, target)).status).toBe(404);
    expect(await backlinks(u, target)).toBe(404);
    expect(await backlinks(u, source)).toEqual([]);
    const listed = (await http.get('/api/v1/notes', { token: u.token })).body.items.map((n: { id: string }) => n.id);
    expect(listed).toEqual([source]);
    const found = await http.get('/api/v1/notes?q=zebracorn', { token: u.token });
    expect(found.body.items).toEqual([]);
    const tags = (await http.get('/api/v1/notes/tags', { token: u.token })).body.map((t: { tag: string }) => t.tag);
    expect(tags).not.toContain('alpha');
    expect((await http.get(`/api/v1/notes?tag=alpha`, { token: u.token })).body.items).toEqual([]);
    const folders = (await http.get('/api/v1/notes/folders', { token: u.token })).body.items;
    expect(folders[0].note_count).toBe(0);
    await until(async () => (await hubNode(u, hub, node)).missing === true, 'the node to show missing');
    const content = await http.get(`/api/v1/hubs/${hub}/nodes/${node}/content`, { token: u.token });
    expect(content.body).toMatchObject({ missing: true });
    await untilLogged(log, target, 'note.trashed');

    const listing = await trash(u);
    expect(listing.items).toEqual([
      {
        type: 'note',
        id: target,
        title: 'Trash target',
        deleted_at: expect.stringMatching(ISO_DATE),
        purge_at: expect.any(String),
      },
    ]);
    const { deleted_at, purge_at } = listing.items[0];
    expect(Date.parse(purge_at) - Date.parse(deleted_at)).toBe(30 * 24 * 3600 * 1000);

    // The folder is empty but for the trashed note: it may go; the note comes back at the top.
    const version = folders[0].version as number;
    expect((await http.delete(`/api/v1/notes/folders/${folderId}?version=${version}`, { token: u.token })).status).toBe(
      202,
    );

    const restored = await http.post(`/api/v1/trash/note/${target}/restore`, undefined, { token: u.token });
    expect(restored.status).toBe(202);
    expect(restored.headers.get('location')).toBe(`/api/v1/notes/${target}`);
    const back = (await getNote(u, target)).body;
    expect(back).toMatchObject({ title: 'Trash target', folder_id: null, version: 3 });
    expect([...back.tags].sort()).toEqual(['alpha', 'beta']);
    expect(await backlinks(u, target)).toEqual([source]);
    expect(await backlinks(u, source)).toEqual([target]);
    expect(
      (await http.get('/api/v1/notes?q=zebracorn', { token: u.token })).body.items.map((n: { id: string }) => n.id),
    ).toEqual([target]);
    expect((await http.get(`/api/v1/notes?tag=alpha`, { token: u.token })).body.items).toHaveLength(1);
    await until(async () => (await hubNode(u, hub, node)).missing === false, 'the node to show its note again');
    const again = await http.get(`/api/v1/hubs/${hub}/nodes/${node}/content`, { token: u.token });
    expect(again.body).toMatchObject({ missing: false, note: { id: target, title: 'Trash target' } });
    expect((await trash(u)).items).toEqual([]);
    await untilLogged(log, target, 'note.restored');
    // No delete happened: the note was never `note.deleted`.
    expect(await loggedFor(log, target, 'note.deleted')).toEqual([]);

    // A trashed linking note leaves the backlinks; restored, it is back.
    expect((await http.delete(`/api/v1/notes/${source}?version=1`, { token: u.token })).status).toBe(202);
    expect(await backlinks(u, target)).toEqual([]);
    expect((await http.post(`/api/v1/trash/note/${source}/restore`, undefined, { token: u.token })).status).toBe(202);
    expect(await backlinks(u, target)).toEqual([source]);
  });

  it('counts trashed notes in the cap until they are purged; a purge emits note.deleted and frees the place', async () => {
    const u = await newUser('caps');
    const ids: string[] = [];
    for (let i = 0; i < NOTES_CAP; i++) ids.push(await createNote(u, { body: `note ${i}` }));
    expect((await http.delete(`/api/v1/notes/${ids[0]}?version=1`, { token: u.token })).status).toBe(202);
    const refused = await http.post('/api/v1/notes', { body: 'one more' }, { token: u.token });
    expect(refused.status).toBe(409);
    expect(refused.body.details).toMatchObject({ limit: 'NOTES_PER_USER', count: NOTES_CAP });
    // In the trash: not deletable again, not editable.
    expect((await http.delete(`/api/v1/notes/${ids[0]}?version=2`, { token: u.token })).status).toBe(404);
    const purged = await http.delete(`/api/v1/trash/note/${ids[0]}`, { token: u.token });
    expect(purged.status).toBe(202);
    await untilLogged(log, ids[0], 'note.deleted');
    expect((await http.delete(`/api/v1/trash/note/${ids[0]}`, { token: u.token })).status).toBe(404);
    expect((await http.post(`/api/v1/trash/note/${ids[0]}/restore`, undefined, { token: u.token })).status).toBe(404);
    expect((await http.post('/api/v1/notes', { body: 'one more' }, { token: u.token })).status).toBe(202);
  });

  it('deletes at once with permanent=true: not in the trash, hub nodes missing, nothing to restore', async () => {
    const u = await newUser('permanent');
    const id = await createNote(u, { title: 'Gone', body: 'for good' });
    const hub = (await http.post('/api/v1/hubs', { name: 'P' }, { token: u.token })).body.id as string;
    const node = await nodeFor(u, hub, 'note', id);
    const del = await http.delete(`/api/v1/notes/${id}?version=1&permanent=true`, { token: u.token });
    expect(del.status).toBe(202);
    await untilLogged(log, id, 'note.deleted');
    expect(await loggedFor(log, id, 'note.trashed')).toEqual([]);
    expect((await trash(u)).items).toEqual([]);
    expect((await http.post(`/api/v1/trash/note/${id}/restore`, undefined, { token: u.token })).status).toBe(404);
    await until(async () => (await hubNode(u, hub, node)).missing === true, 'the node to show missing');
    // A bad flag is a validation error, not a 500.
    expect((await http.delete(`/api/v1/notes/${id}?version=1&permanent=maybe`, { token: u.token })).status).toBe(400);
  });

  it("lists notes, vault items and hubs together, newest first, paged with one cursor; another user's trash is not_found", async () => {
    const u = await newUser('mixed');
    const other = await newUser('other');
    const note = await createNote(u, { title: 'A note', body: 'x' });
    const item = await http.post(
      '/api/v1/vault/items',
      { text: 'Some saved text', title: 'An item' },
      { token: u.token },
    );
    expect(item.status).toBe(202);
    const hub = (await http.post('/api/v1/hubs', { name: 'A hub' }, { token: u.token })).body.id as string;
    const itemNodeHub = (await http.post('/api/v1/hubs', { name: 'Holder' }, { token: u.token })).body.id as string;
    const itemNode = await nodeFor(u, itemNodeHub, 'vault_item', item.body.id);

    expect((await http.delete(`/api/v1/notes/${note}?version=1`, { token: u.token })).status).toBe(202);
    const ready = await until(async () => {
      const r = await http.get(`/api/v1/vault/items/${item.body.id}`, { token: u.token });
      return r.body.state !== 'pending' && r.body;
    }, 'the item enriched');
    const itemVersion = ready.version as number;
    expect(
      (await http.delete(`/api/v1/vault/items/${item.body.id}?version=${itemVersion}`, { token: u.token })).status,
    ).toBe(202);
    expect((await http.delete(`/api/v1/hubs/${hub}?version=1`, { token: u.token })).status).toBe(202);

    // Gone from their lists and reads.
    expect((await http.get(`/api/v1/vault/items/${item.body.id}`, { token: u.token })).status).toBe(404);
    const items = (await http.get('/api/v1/vault/items', { token: u.token })).body.items;
    expect(items.map((i: { id: string }) => i.id)).not.toContain(item.body.id);
    expect((await http.get(`/api/v1/hubs/${hub}`, { token: u.token })).status).toBe(404);
    const hubs = (await http.get('/api/v1/hubs', { token: u.token })).body.items.map((h: { id: string }) => h.id);
    expect(hubs).toEqual([itemNodeHub]);
    await until(async () => (await hubNode(u, itemNodeHub, itemNode)).missing === true, 'the item node missing');

    const whole = await trash(u);
    expect(whole.items.map((e) => [e.type, e.id])).toEqual([
      ['hub', hub],
      ['vault_item', item.body.id],
      ['note', note],
    ]);
    expect(whole.items.map((e) => e.title)).toEqual(['A hub', 'An item', 'A note']);
    expect(whole.next_cursor).toBeNull();
    // One at a time: each page's cursor pages all three parts.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await trash(u, `?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.items.length).toBeLessThanOrEqual(1);
      seen.push(...page.items.map((e) => e.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual([hub, item.body.id, note]);
    expect((await http.get('/api/v1/trash?cursor=nonsense', { token: u.token })).status).toBe(400);

    // Another user sees none of it and can touch none of it.
    expect((await trash(other)).items).toEqual([]);
    for (const [type, id] of [
      ['note', note],
      ['vault_item', item.body.id],
      ['hub', hub],
    ]) {
      expect((await http.post(`/api/v1/trash/${type}/${id}/restore`, undefined, { token: other.token })).status).toBe(
        404,
      );
      expect((await http.delete(`/api/v1/trash/${type}/${id}`, { token: other.token })).status).toBe(404);
    }
    expect((await http.post(`/api/v1/trash/note/${note}/restore`, undefined)).status).toBe(401);

    // The vault item and the hub come back.
    expect(
      (await http.post(`/api/v1/trash/vault_item/${item.body.id}/restore`, undefined, { token: u.token })).status,
    ).toBe(202);
    expect((await http.get(`/api/v1/vault/items/${item.body.id}`, { token: u.token })).body).toMatchObject({
      title: 'An item',
    });
    await until(async () => (await hubNode(u, itemNodeHub, itemNode)).missing === false, 'the item node back');
    expect((await http.post(`/api/v1/trash/hub/${hub}/restore`, undefined, { token: u.token })).status).toBe(202);
    expect((await http.get(`/api/v1/hubs/${hub}`, { token: u.token })).body).toMatchObject({
      name: 'A hub',
      version: 3,
    });
    expect((await trash(u)).items.map((e) => e.id)).toEqual([note]);

    // Emptying the trash purges the rest in the background, each with its `<type>.deleted`.
    const hubVersion = (await http.get(`/api/v1/hubs/${hub}`, { token: u.token })).body.version;
    expect((await http.delete(`/api/v1/hubs/${hub}?version=${hubVersion}`, { token: u.token })).status).toBe(202);
    const emptied = await http.delete('/api/v1/trash', { token: u.token });
    expect(emptied.status).toBe(202);
    expect(emptied.headers.get('location')).toBe('/api/v1/trash');
    await until(async () => (await trash(u)).items.length === 0, 'the trash to empty');
    await untilLogged(log, note, 'note.deleted');
    await untilLogged(log, hub, 'hub.deleted');
    expect((await http.get(`/api/v1/vault/items/${item.body.id}`, { token: u.token })).status).toBe(200);
  });

  it('merges parts by deleted_at then id, and hands out the cursor the parts read on from', () => {
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    const row = (type: string, id: string, s: number) => ({ type, id, title: id, deleted_at: at(s), purge_at: at(s) });
    const id = (n: number) => `0190a000-0000-7000-8000-${String(n).padStart(12, '0')}`;
    const page = mergeTrashPages(
      [
        { items: [row('note', id(1), 5), row('note', id(2), 1)], nextCursor: 'more' },
        { items: [row('vault_item', id(3), 5)], nextCursor: null },
        null,
      ],
      2,
    );
    expect(page.items.map((r) => r.id)).toEqual([id(3), id(1)]);
    expect(page.nextCursor).toBe(encodeCursor([new Date(at(5)), id(1)]));
    expect(trashCursor(at(5), id(1))).toBe(encodeCursor([new Date(at(5)), id(1)]));
    expect(mergeTrashPages([{ items: [row('hub', id(4), 1)], nextCursor: null }], 2).nextCursor).toBeNull();
  });
});
