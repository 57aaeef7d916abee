// Imports (issue 45), on SQLite and on MySQL: a Netscape bookmark file streamed to
// POST /api/v1/imports as the raw body, imported in the background through the vault's own
// capture mutation as the user (so its duplicate check and caps apply; ADD_DATE its captured_at),
// with progress, events, cancel, the list, and the refusals: an unknown format, a malformed file
// (the job fails with a clear error), a body over IMPORT_MAX_BYTES (413, by Content-Length or
// chunked). Karakeep's JSON export: links and texts into the vault, annotations into notes.
import fs from 'node:fs';
import path from 'node:path';
import { api, createUserAndLogin, login, request, UUID } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { openStream } from '../helpers/sse';
import { until } from '../helpers/wait';

const FIXTURES = path.join(__dirname, 'fixtures');
const firefox = fs.readFileSync(path.join(FIXTURES, 'firefox-bookmarks.html'));
const chrome = fs.readFileSync(path.join(FIXTURES, 'chrome-bookmarks.html'));
const karakeep = fs.readFileSync(path.join(FIXTURES, 'karakeep-export.json'));
const MAX_BYTES = 256 * 1024;

let server: TestServer;
let http: ReturnType<typeof api>;
let admin: string;

beforeAll(async () => {
  server = await startTestServer({
    SUBGRAPHS: 'auth,notes,vault,transfer',
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

async function importFile(body: Buffer | string, token: string, format = 'netscape'): Promise<Job> {
  const res = await upload(body, token, format, format === 'karakeep' ? 'application/json' : 'text/html');
  expect(res.status).toBe(202);
  expect(res.body).toMatchObject({ id: expect.stringMatching(UUID), format, state: 'queued' });
  expect(res.headers.get('location')).toBe(`/api/v1/imports/${res.body.id}`);
  return finished(res.body.id, token);
}

const VAULT =
  'query { vaultItems(first: 100, archived: "all") { items { id kind url title excerpt tags { name } capturedAt archived } nextCursor } }';
type Item = {
  id: string;
  kind: string;
  url: string;
  title: string;
  excerpt: string | null;
  tags: { name: string }[];
  capturedAt: string;
  archived: boolean;
};
async function vaultItems(token: string) {
  const res = await http.graphql(VAULT, {}, token);
  expect(res.body.errors).toBeUndefined();
  return res.body.data.vaultItems.items as Item[];
}
const tagsOf = (item: Item | undefined) => item?.tags.map((t) => t.name).sort();

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
      // ADD_DATE="1701234600" is when it was captured (the contract's captured_at).
      expect(book?.capturedAt).toBe(new Date(1701234600 * 1000).toISOString());
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

  it('refuses an unknown format, a missing token, and a body over IMPORT_MAX_BYTES (413, nothing kept)', async () => {
    const user = await createUserAndLogin(server.url, admin, 'importer-refused');
    const unknown = await upload(firefox, user.token, 'opml');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('validation_error');
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

  it('imports a Karakeep export: links and texts into the vault with tags, lists, dates and archived; notes from annotations; again: nothing new', async () => {
    const user = await createUserAndLogin(server.url, admin, 'importer-karakeep');
    const job = await importFile(karakeep, user.token, 'karakeep');
    expect(job).toMatchObject({
      state: 'succeeded',
      progress: { done: 8, total: 8 },
      counts: { notes: 2, folders: 0, vault_items: 5, hubs: 0, skipped: 0, duplicates: 1 },
      errors: [],
    });
    const items = await vaultItems(user.token);
    expect(items.map((i) => i.kind).sort()).toEqual(['link', 'link', 'link', 'text', 'text']);
    const rust = items.find((i) => i.url === 'https://blog.rust-lang.org/2024/11/28/Rust-1.83.0.html');
    // Its tags, and the path of the manual list it is in (Reading / Rust).
    expect(tagsOf(rust)).toEqual(['reading', 'release-notes', 'rust']);
    expect(rust).toMatchObject({ title: 'Announcing Rust 1.83.0 | Rust Blog', archived: false });
    expect(rust?.capturedAt).toBe(new Date(1733064000 * 1000).toISOString());
    // A smart list is a saved search, not a place: no tag.
    expect(tagsOf(items.find((i) => i.url === 'https://de.wikipedia.org/wiki/Kaffee'))).toEqual([
      'kaffee',
      'reading',
      'wikipedia',
    ]);
    const localFirst = items.find((i) => i.url === 'https://www.inkandswitch.com/local-first/');
    expect(localFirst).toMatchObject({ archived: true, capturedAt: new Date(1704067200 * 1000).toISOString() });
    const textOf = async (item: Item | undefined) =>
      (await http.graphql('query ($id: ID!) { vaultItem(id: $id) { text } }', { id: item?.id }, user.token)).body.data
        .vaultItem.text;
    const digest = items.find((i) => i.kind === 'text' && i.excerpt?.startsWith('Idea: a weekly digest'));
    expect(await textOf(digest)).toBe(
      "Idea: a weekly digest of the vault's new links, grouped by tag.\n\nStart with the tags that have the most items.",
    );
    expect(tagsOf(digest)).toEqual(['ideas']);
    expect(await textOf(items.find((i) => i.kind === 'text' && i.title === 'Café order'))).toBe(
      'Flat white, oat milk — 2 sugars ☕',
    );

    const notes = await http.graphql('query { notes(first: 10) { items { title excerpt tags } } }', {}, user.token);
    const byTitle = new Map(
      (notes.body.data.notes.items as { title: string; excerpt: string; tags: string[] }[]).map((n) => [n.title, n]),
    );
    expect([...byTitle.keys()].sort()).toEqual([
      'Café order',
      'Local-first software: you own your data, in spite of the cloud',
    ]);
    const annotation = byTitle.get('Local-first software: you own your data, in spite of the cloud')!;
    expect(annotation.excerpt).toContain('Re-read the section on CRDTs before the design review.');
    expect(annotation.excerpt).toContain('<https://www.inkandswitch.com/local-first/>');
    expect([...annotation.tags].sort()).toEqual(['crdt', 'local-first', 'reading']);

    const again = await importFile(karakeep, user.token, 'karakeep');
    expect(again.counts).toEqual({ notes: 0, folders: 0, vault_items: 0, hubs: 0, skipped: 0, duplicates: 8 });
    expect(await vaultItems(user.token)).toHaveLength(5);
  });

  it('fails a malformed Karakeep file with a clear error and imports nothing', async () => {
    const user = await createUserAndLogin(server.url, admin, 'importer-karakeep-malformed');
    const cases: [string, RegExp][] = [
      ['[{"bookmarks": []}]', /not a JSON object/],
      ['{"lists": []}', /no "bookmarks" list/],
      [karakeep.subarray(0, karakeep.length - 40).toString(), /ends before its end|not a Karakeep export/],
      ['{"bookmarks": [{"createdAt": 1, "content": {"type": "link", "url": "https://example.com/"},}]}', /JSON/],
      ['<!DOCTYPE NETSCAPE-Bookmark-file-1>', /not a JSON object/],
    ];
    for (const [body, message] of cases) {
      const job = await importFile(body, user.token, 'karakeep');
      expect([body.slice(0, 30), job.state]).toEqual([body.slice(0, 30), 'failed']);
      expect(job.errors.at(-1)?.message).toMatch(/not a Karakeep export/);
      expect(job.errors.at(-1)?.message).toMatch(message);
    }
    expect(await vaultItems(user.token)).toEqual([]);
  });

  it('keeps a past ADD_DATE as captured_at, takes now for one in the future; the vault refuses a capturedAt in the future', async () => {
    const user = await createUserAndLogin(server.url, admin, 'importer-dates');
    const file = [
      '<!DOCTYPE NETSCAPE-Bookmark-file-1>',
      '<DL><p>',
      '<DT><A HREF="https://example.org/past" ADD_DATE="946684800">Past</A>',
      '<DT><A HREF="https://example.org/future" ADD_DATE="32503680000">Future</A>',
      '</DL>',
    ].join('\n');
    const before = Date.now();
    const job = await importFile(file, user.token);
    expect(job.counts).toMatchObject({ vault_items: 2, skipped: 0 });
    const items = await vaultItems(user.token);
    expect(items.find((i) => i.url === 'https://example.org/past')?.capturedAt).toBe('2000-01-01T00:00:00.000Z');
    const future = Date.parse(items.find((i) => i.url === 'https://example.org/future')!.capturedAt);
    expect(future).toBeGreaterThanOrEqual(before - 1000);
    expect(future).toBeLessThanOrEqual(Date.now());

    const refused = await http.graphql(
      'mutation { captureVaultItem(url: "https://example.org/later", capturedAt: "3000-01-01T00:00:00Z") { id } }',
      {},
      user.token,
    );
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({
      code: 'validation_error',
      details: { captured_at: [expect.stringContaining('1970 to now')] },
    });
  });
});
