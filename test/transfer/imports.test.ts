// Imports (issue 45), on SQLite and on MySQL: a Netscape bookmark file streamed to
// POST /api/v1/imports as the raw body, imported in the background through the vault's own
// capture mutation as the user (so its duplicate check and caps apply), with progress, events,
// cancel, the list, and the refusals: an unknown or unserved format, a malformed file (the job
// fails with a clear error), a body over IMPORT_MAX_BYTES (413, by Content-Length or chunked).
import fs from 'node:fs';
import path from 'node:path';
import { api, createUserAndLogin, login, request, UUID } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { openStream } from '../helpers/sse';
import { until } from '../helpers/wait';

const FIXTURES = path.join(__dirname, 'fixtures');
const firefox = fs.readFileSync(path.join(FIXTURES, 'firefox-bookmarks.html'));
const chrome = fs.readFileSync(path.join(FIXTURES, 'chrome-bookmarks.html'));
const MAX_BYTES = 256 * 1024;

let server: TestServer;
let http: ReturnType<typeof api>;
let admin: string;

beforeAll(async () => {
  server = await startTestServer({
    SUBGRAPHS: 'auth,vault,transfer',
    IMPORT_MAX_BYTES: String(MAX_BYTES),
    IMPORT_BATCH_RECORDS: '4',
    VAULT_ITEMS_PER_USER: '12',
    VAULT_PENDING_PER_USER: '10000',
    VAULT_ENRICH_CONCURRENCY: '0',
  });
  http = api(server.url);
  admin = (await login(server.url, ADMIN)).access_token;
});
afterAll(() => server.close());

type Job = {
  id: string;
  state: string;
  progress: { done: number; total: number };
  counts: Record<string, number>;
  errors: { path: string; message: string }[];
  finished_at: string | null;
};

/** POST /imports with the file as the raw body; answers the response. */
function upload(body: Buffer | string, token: string, format = 'netscape', type = 'text/html') {
  return request(server.url, 'POST', `/api/v1/imports?format=${format}`, {
    raw: body as string,
    token,
    headers: { 'content-type': type },
  });
}

async function finished(id: string, token: string): Promise<Job> {
  return until(
    async () => {
      const res = await http.get(`/api/v1/imports/${id}`, { token });
      expect(res.status).toBe(200);
      return ['succeeded', 'failed', 'canceled'].includes(res.body.state) ? (res.body as Job) : null;
    },
    `import ${id} to finish`,
    60_000,
  );
}

async function importFile(body: Buffer | string, token: string): Promise<Job> {
  const res = await upload(body, token);
  expect(res.status).toBe(202);
  expect(res.body).toMatchObject({ id: expect.stringMatching(UUID), format: 'netscape', state: 'queued' });
  expect(res.headers.get('location')).toBe(`/api/v1/imports/${res.body.id}`);
  return finished(res.body.id, token);
}

const VAULT = 'query { vaultItems(first: 100) { items { id url title tags { name } } nextCursor } }';
async function vaultItems(token: string) {
  const res = await http.graphql(VAULT, {}, token);
  expect(res.body.errors).toBeUndefined();
  return res.body.data.vaultItems.items as { id: string; url: string; title: string; tags: { name: string }[] }[];
}

describe('netscape imports', () => {
  it('imports a Firefox export: links become vault items, folders and TAGS their tags; the same file again creates nothing', async () => {
    const user = await createUserAndLogin(server.url, admin, 'importer-firefox');
    const stream = await openStream(`${server.url}/api/v1/events?types=import.progress,import.finished`, {
      token: user.token,
    });
    try {
      const job = await importFile(firefox, user.token);
      expect(job).toMatchObject({
        state: 'succeeded',
        progress: { done: 13, total: 13 },
        counts: { notes: 0, folders: 0, vault_items: 10, hubs: 0, skipped: 2, duplicates: 1 },
        finished_at: expect.any(String),
      });
      expect(job.errors).toEqual([
        {
          path: expect.stringContaining('Recently Bookmarked'),
          message: expect.stringContaining('not an http(s) link'),
        },
        { path: expect.stringContaining('Archive this page'), message: expect.stringContaining('not an http(s) link') },
      ]);
      const items = await vaultItems(user.token);
      expect(items).toHaveLength(10);
      const cafe = items.find((i) => i.url === 'https://fr.wikipedia.org/wiki/Caf%C3%A9');
      expect(cafe?.tags.map((t) => t.name).sort()).toEqual(['café-&-crème', 'reading']);
      const book = items.find((i) => i.url === 'https://doc.rust-lang.org/book/');
      expect(book?.tags.map((t) => t.name).sort()).toEqual(['books', 'reading', 'rust']);
      // The toolbar is where a link was, not what it is about: no tag.
      const hn = items.find((i) => i.url === 'https://news.ycombinator.com/');
      expect(hn?.tags).toEqual([]);

      const finishedEvents = await stream.waitFor((f) => f.event === 'import.finished');
      expect(finishedEvents[0].data).toMatchObject({
        import_id: job.id,
        state: 'succeeded',
        counts: { vault_items: 10 },
      });

      const again = await importFile(firefox, user.token);
      expect(again.counts).toEqual({ notes: 0, folders: 0, vault_items: 0, hubs: 0, skipped: 2, duplicates: 11 });
      expect(await vaultItems(user.token)).toHaveLength(10);

      // A cap reached ends the job with its error; what was imported before it stays.
      const capped = await importFile(chrome, user.token);
      expect(capped.state).toBe('failed');
      expect(capped.counts.vault_items).toBe(2);
      expect(capped.errors.at(-1)?.message).toContain('VAULT_ITEMS_PER_USER');
      expect(await vaultItems(user.token)).toHaveLength(12);
    } finally {
      stream.close();
    }
  });

  it('imports a Chrome export, lists imports newest first, and hides them from other users', async () => {
    const user = await createUserAndLogin(server.url, admin, 'importer-chrome');
    const other = await createUserAndLogin(server.url, admin, 'importer-other');
    const job = await importFile(chrome, user.token);
    expect(job).toMatchObject({
      state: 'succeeded',
      progress: { done: 9, total: 9 },
      counts: { vault_items: 8, skipped: 0, duplicates: 1 },
      errors: [],
    });
    const figma = (await vaultItems(user.token)).find((i) => i.url.startsWith('https://www.figma.com/'));
    expect(figma?.tags.map((t) => t.name).sort()).toEqual(['design-systems', 'work']);

    const malformed = await importFile('not a bookmark file', user.token);
    const list = await http.get('/api/v1/imports?limit=1', { token: user.token });
    expect(list.status).toBe(200);
    expect(list.body.items.map((j: Job) => j.id)).toEqual([malformed.id]);
    const next = await http.get(`/api/v1/imports?limit=5&cursor=${list.body.next_cursor}`, { token: user.token });
    expect(next.body).toMatchObject({ items: [{ id: job.id }], next_cursor: null });

    expect((await http.get(`/api/v1/imports/${job.id}`, { token: other.token })).status).toBe(404);
    expect((await http.delete(`/api/v1/imports/${job.id}`, { token: other.token })).status).toBe(404);
    expect((await http.get('/api/v1/imports', { token: other.token })).body.items).toEqual([]);
  });

  it('fails a malformed file with a clear error and imports nothing', async () => {
    const user = await createUserAndLogin(server.url, admin, 'importer-malformed');
    for (const body of [
      '{"bookmarks": []}',
      '<html><body><a href="https://example.com/">x</a></body></html>',
      '\u0000\u0001\u0002',
    ]) {
      const job = await importFile(body, user.token);
      expect(job.state).toBe('failed');
      expect(job.errors.at(-1)?.message).toMatch(/not a Netscape bookmark file/);
      expect(job.counts.vault_items).toBe(0);
    }
    expect(await vaultItems(user.token)).toEqual([]);
  });

  it('refuses an unknown format, a format not served yet, a missing token, and a body over IMPORT_MAX_BYTES (413, nothing kept)', async () => {
    const user = await createUserAndLogin(server.url, admin, 'importer-refused');
    const unknown = await upload(firefox, user.token, 'opml');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('validation_error');
    const later = await upload(firefox, user.token, 'karakeep', 'application/json');
    expect(later.status).toBe(400);
    expect(later.body.details).toHaveProperty('format');
    expect((await request(server.url, 'POST', '/api/v1/imports?format=netscape', { raw: 'x' })).status).toBe(401);

    const big = Buffer.alloc(MAX_BYTES + 1, 'a');
    const declared = await upload(big, user.token);
    expect(declared.status).toBe(413);
    expect(declared.body.error).toBe('payload_too_large');

    // Chunked (no Content-Length): refused once past the limit, and what was received goes.
    const chunks = [big.subarray(0, 200_000), big.subarray(200_000)];
    const res = await fetch(`${server.url}/api/v1/imports?format=netscape`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'text/html' },
      body: new ReadableStream({
        pull(controller) {
          const next = chunks.shift();
          if (next) controller.enqueue(new Uint8Array(next));
          else controller.close();
        },
      }),
      duplex: 'half',
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toBe('payload_too_large');
    await until(
      async () => (await http.get('/api/v1/imports', { token: user.token })).body.items.length === 0,
      'no import kept',
    );
    expect((await http.get('/api/v1/imports', { token: user.token })).body.items).toEqual([]);
  });

  it('cancels a running import: it stops, says canceled, and what was imported stays', async () => {
    const user = await createUserAndLogin(server.url, admin, 'importer-cancel');
    // Many records of one link: one item, the rest duplicates (no cap is reached).
    const many = Array.from(
      { length: 3000 },
      (_, i) => `<DT><A HREF="https://example.org/same" ADD_DATE="${i}">Same ${i}</A>`,
    );
    const file = `<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p>\n${many.join('\n')}\n</DL>\n`;
    const started = await upload(file, user.token);
    expect(started.status).toBe(202);
    await until(
      async () => (await http.get(`/api/v1/imports/${started.body.id}`, { token: user.token })).body.progress.done > 0,
      'some progress',
    );
    const cancel = await http.delete(`/api/v1/imports/${started.body.id}`, { token: user.token });
    expect(cancel.status).toBe(202);
    const job = await finished(started.body.id, user.token);
    expect(job.state).toBe('canceled');
    expect(job.progress.done).toBeLessThan(3000);
    expect(await vaultItems(user.token)).toHaveLength(1);
    // It stays canceled: the runner stops at its next batch.
    const done = job.progress.done;
    await new Promise((r) => setTimeout(r, 300));
    expect((await http.get(`/api/v1/imports/${job.id}`, { token: user.token })).body.progress.done).toBe(done);
  });
});
