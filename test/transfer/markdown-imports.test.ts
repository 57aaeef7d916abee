// Markdown vault imports (issue 45), on SQLite and on MySQL: an Obsidian vault as a zip, read
// entry by entry; folders become note folders, front matter is read, other files become vault
// files and the links to them point at the vault items; the same zip twice creates nothing.
// The zip guards: too many entries, a zip bomb, `..` and absolute paths each fail the job with a
// clear error before anything is written; a symbolic link is passed over; a file that is no zip fails.
import fs from 'node:fs';
import path from 'node:path';
import yazl from 'yazl';
import { api, createUserAndLogin, login, request } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';

const VAULT_DIR = path.join(__dirname, 'fixtures', 'obsidian-vault');
const JOPLIN_DIR = path.join(__dirname, 'fixtures', 'joplin-export');

let server: TestServer;
let http: ReturnType<typeof api>;
let admin: string;

beforeAll(async () => {
  server = await startTestServer({
    SUBGRAPHS: 'auth,notes,vault,transfer',
    IMPORT_BATCH_RECORDS: '3',
    IMPORT_ZIP_MAX_ENTRIES: '50',
    IMPORT_ZIP_MAX_UNCOMPRESSED_BYTES: String(1024 * 1024),
    VAULT_PENDING_PER_USER: '10000',
    VAULT_ENRICH_CONCURRENCY: '0',
  });
  http = api(server.url);
  admin = (await login(server.url, ADMIN)).access_token;
});
afterAll(() => server.close());

type Entry = { name: string; data: Buffer; mode?: number };

function zipOf(entries: Entry[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const e of entries) zip.addBuffer(e.data, e.name, e.mode ? { mode: e.mode } : {});
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

function vaultEntries(dir = VAULT_DIR, prefix = ''): Entry[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((d) =>
      d.isDirectory()
        ? vaultEntries(path.join(dir, d.name), `${prefix}${d.name}/`)
        : [{ name: `${prefix}${d.name}`, data: fs.readFileSync(path.join(dir, d.name)) }],
    );
}

/** The same bytes with one name spelled otherwise (same length): yazl refuses to write such names. */
const renamed = (zip: Buffer, from: string, to: string) => {
  const out = Buffer.from(zip);
  const a = Buffer.from(from);
  for (let i = out.indexOf(a); i >= 0; i = out.indexOf(a, i + 1)) Buffer.from(to).copy(out, i);
  return out;
};

type Job = {
  id: string;
  state: string;
  progress: { done: number; total: number };
  counts: Record<string, number>;
  errors: { path: string; message: string }[];
};

async function importZip(zip: Buffer, token: string, query = ''): Promise<Job> {
  const res = await request(server.url, 'POST', `/api/v1/imports?format=markdown${query}`, {
    raw: zip as unknown as string,
    token,
    headers: { 'content-type': 'application/zip' },
  });
  expect(res.status).toBe(202);
  return until(
    async () => {
      const job = await http.get(`/api/v1/imports/${res.body.id}`, { token });
      expect(job.status).toBe(200);
      return ['succeeded', 'failed', 'canceled'].includes(job.body.state) ? (job.body as Job) : null;
    },
    'the import to finish',
    60_000,
  );
}

const NOTES = 'query { notes(first: 100) { items { id title tags folderId } } }';
const NOTE = 'query ($id: ID!) { note(id: $id) { title body tags folderId pinned archived } }';
const FOLDERS = 'query { noteFolders { id path } }';
const gql = async (query: string, token: string, variables: Record<string, unknown> = {}) => {
  const res = await http.graphql(query, variables, token);
  expect(res.body.errors).toBeUndefined();
  return res.body.data;
};

describe('markdown imports', () => {
  it('imports an Obsidian vault: folders, front matter, files as vault items with links rewritten; again: nothing new', async () => {
    const user = await createUserAndLogin(server.url, admin, 'md-obsidian');
    const zip = await zipOf([
      ...vaultEntries(),
      // A symbolic link (mode 120777): passed over, never followed.
      { name: 'Projects/link-to-passwd.md', data: Buffer.from('/etc/passwd'), mode: 0o120777 },
    ]);
    const job = await importZip(zip, user.token);
    expect(job).toMatchObject({
      state: 'succeeded',
      progress: { done: 6, total: 6 },
      counts: { notes: 4, folders: 3, vault_items: 2, hubs: 0, skipped: 0, duplicates: 0 },
      errors: [],
    });

    const folders = (await gql(FOLDERS, user.token)).noteFolders as { id: string; path: string }[];
    expect(folders.map((f) => f.path).sort()).toEqual(['Journal', 'Projects', 'Projects/2024']);
    const notes = (await gql(NOTES, user.token)).notes.items as {
      id: string;
      title: string;
      folderId: string | null;
    }[];
    expect(notes.map((n) => n.title).sort()).toEqual([
      'Café ☕ — notes du matin',
      'Q1 Goals',
      'Roadmap',
      'Welcome to the vault',
    ]);
    const byTitle = (t: string) => notes.find((n) => n.title === t)!;
    const folderOf = (p: string) => folders.find((f) => f.path === p)!.id;
    expect(byTitle('Q1 Goals').folderId).toBe(folderOf('Projects/2024'));
    expect(byTitle('Welcome to the vault').folderId).toBeNull();

    const items = (await gql('query { vaultItems(first: 10) { items { id fileName } } }', user.token)).vaultItems
      .items as { id: string; fileName: string }[];
    const png = items.find((i) => i.fileName === 'diagram.png')!.id;
    const pdf = items.find((i) => i.fileName === 'spec sheet.pdf')!.id;

    const welcome = (await gql(NOTE, user.token, { id: byTitle('Welcome to the vault').id })).note;
    expect(welcome.tags).toEqual(expect.arrayContaining(['start', 'obsidian']));
    expect(welcome.body.startsWith('# Welcome')).toBe(true); // the front matter read, not kept in the body
    expect(welcome.body).toContain(`![diagram.png](/api/v1/vault/items/${png}/content)`);
    expect(welcome.body).toContain(`[the PDF](/api/v1/vault/items/${pdf}/content "Spec")`);
    expect(welcome.body).toContain('[[Roadmap]]'); // a link to a note is kept as written
    const roadmap = (await gql(NOTE, user.token, { id: byTitle('Roadmap').id })).note;
    expect(roadmap.body).toContain(`![Diagram](/api/v1/vault/items/${png}/content)`);
    expect(roadmap.tags).toContain('planning');
    const goals = (await gql(NOTE, user.token, { id: byTitle('Q1 Goals').id })).note;
    expect(goals.tags).toEqual(expect.arrayContaining(['goals', 'q1']));

    const again = await importZip(zip, user.token);
    expect(again).toMatchObject({
      state: 'succeeded',
      counts: { notes: 0, folders: 0, vault_items: 0, skipped: 0, duplicates: 6 },
    });
    expect((await gql(NOTES, user.token)).notes.items).toHaveLength(4);
    expect((await gql(FOLDERS, user.token)).noteFolders).toHaveLength(3);
  });

  it('fails a zip bomb, too many entries, `..` and absolute paths, and a file that is no zip, writing nothing', async () => {
    const user = await createUserAndLogin(server.url, admin, 'md-hostile');
    const note = (name: string) => ({ name, data: Buffer.from('# hello\n') });
    const cases: [string, Buffer, RegExp][] = [
      // 3 MiB of zeros deflate to a few KiB: stopped by IMPORT_ZIP_MAX_UNCOMPRESSED_BYTES (1 MiB here).
      [
        'a zip bomb',
        await zipOf([note('a.md'), { name: 'bomb.bin', data: Buffer.alloc(3 * 1024 * 1024) }]),
        /IMPORT_ZIP_MAX_UNCOMPRESSED_BYTES/,
      ],
      [
        'too many entries',
        await zipOf(Array.from({ length: 60 }, (_, i) => note(`n${i}.md`))),
        /IMPORT_ZIP_MAX_ENTRIES/,
      ],
      [
        'a path with ..',
        renamed(await zipOf([note('ok.md'), note('aa/bb/evil.md')]), 'aa/bb/', '../../'),
        /invalid relative path|refused/,
      ],
      [
        'an absolute path',
        renamed(await zipOf([note('ok.md'), note('xetc/evil.md')]), 'xetc/', '/etc/'),
        /absolute path|refused/,
      ],
      ['no zip', Buffer.from('# just markdown, not zipped\n'), /not a zip file/],
    ];
    for (const [what, zip, message] of cases) {
      const job = await importZip(zip, user.token);
      expect([what, job.state]).toEqual([what, 'failed']);
      expect([what, job.errors.at(-1)?.message]).toEqual([what, expect.stringMatching(message)]);
      expect(job.counts.notes).toBe(0);
    }
    expect((await gql(NOTES, user.token)).notes.items).toEqual([]);
    expect((await gql(FOLDERS, user.token)).noteFolders).toEqual([]);
  });

  it('puts the vault under target_folder_id; another user’s folder there fails the job', async () => {
    const user = await createUserAndLogin(server.url, admin, 'md-target');
    const other = await createUserAndLogin(server.url, admin, 'md-target-other');
    const target = (await gql('mutation { createNoteFolder(name: "Imported") { id } }', user.token)).createNoteFolder
      .id;
    const zip = await zipOf([
      { name: 'Sub/one.md', data: Buffer.from('one') },
      { name: 'two.md', data: Buffer.from('two') },
    ]);
    const job = await importZip(zip, user.token, `&target_folder_id=${target}`);
    expect(job.counts).toMatchObject({ notes: 2, folders: 1 });
    const folders = (await gql(FOLDERS, user.token)).noteFolders as { path: string }[];
    expect(folders.map((f) => f.path).sort()).toEqual(['Imported', 'Imported/Sub']);

    const refused = await importZip(zip, other.token, `&target_folder_id=${target}`);
    expect(refused.state).toBe('failed');
    expect(refused.errors.at(-1)?.message).toMatch(/target folder/);
  });

  it('imports a Joplin "Markdown + Front Matter" export: notebooks, front matter, _resources; _notebook.yml passed over', async () => {
    const user = await createUserAndLogin(server.url, admin, 'md-joplin');
    const zip = await zipOf(vaultEntries(JOPLIN_DIR));
    const job = await importZip(zip, user.token);
    expect(job).toMatchObject({
      state: 'succeeded',
      progress: { done: 6, total: 6 },
      counts: { notes: 4, folders: 3, vault_items: 2, hubs: 0, skipped: 0, duplicates: 0 },
      errors: [],
    });
    const folders = (await gql(FOLDERS, user.token)).noteFolders as { id: string; path: string }[];
    expect(folders.map((f) => f.path).sort()).toEqual(['Cooking', 'Cooking/Weeknight', 'Work']);
    const notes = (await gql(NOTES, user.token)).notes.items as { id: string; title: string; folderId: string }[];
    expect(notes.map((n) => n.title).sort()).toEqual([
      'Crème brûlée',
      'Pasta al limone',
      'Q2 planning: meeting notes',
      'Reading list',
    ]);
    const items = (await gql('query { vaultItems(first: 10) { items { id fileName } } }', user.token)).vaultItems
      .items as { id: string; fileName: string }[];
    expect(items.map((i) => i.fileName).sort()).toEqual(['creme-brulee.jpg', 'quarterly report.pdf']);
    const idOf = (name: string) => items.find((i) => i.fileName === name)!.id;
    const note = async (title: string) =>
      (await gql(NOTE, user.token, { id: notes.find((n) => n.title === title)!.id })).note;

    const creme = await note('Crème brûlée');
    expect(creme.folderId).toBe(folders.find((f) => f.path === 'Cooking')!.id);
    // Joplin's blank line after the front matter separates it: the body starts with the note.
    expect(creme.body.startsWith('# Crème brûlée\n')).toBe(true);
    expect(creme.body).toContain(`![creme-brulee.jpg](/api/v1/vault/items/${idOf('creme-brulee.jpg')}/content)`);
    expect(creme.body).toContain('[Pasta al limone](../Cooking/Weeknight/Pasta%20al%20limone.md)'); // a note: as written
    expect([...creme.tags].sort()).toEqual(['dessert', 'french']);
    const meeting = await note('Q2 planning: meeting notes');
    expect([...meeting.tags].sort()).toEqual(['meetings', 'project-atlas']);
    expect(meeting.body).toContain(
      `[quarterly report.pdf](/api/v1/vault/items/${idOf('quarterly report.pdf')}/content)`,
    );
    expect((await note('Pasta al limone')).folderId).toBe(folders.find((f) => f.path === 'Cooking/Weeknight')!.id);

    const again = await importZip(zip, user.token);
    expect(again.counts).toMatchObject({ notes: 0, folders: 0, vault_items: 0, duplicates: 6 });
  });

  it('keeps front matter pinned and archived (true, or "yes" as some exporters write it)', async () => {
    const user = await createUserAndLogin(server.url, admin, 'md-flags');
    const zip = await zipOf([
      { name: 'pinned.md', data: Buffer.from('---\ntitle: Pinned one\npinned: true\n---\nbody') },
      { name: 'archived.md', data: Buffer.from("---\ntitle: Archived one\narchived: 'yes'\n---\nbody") },
      { name: 'plain.md', data: Buffer.from('---\ntitle: Plain one\npinned: false\narchived: no\n---\nbody') },
    ]);
    const job = await importZip(zip, user.token);
    expect(job).toMatchObject({ state: 'succeeded', counts: { notes: 3 }, errors: [] });
    const all = (
      await gql('query { notes(first: 10, archived: "all") { items { title pinned archived } } }', user.token)
    ).notes.items as { title: string; pinned: boolean; archived: boolean }[];
    expect(all.map((n) => [n.title, n.pinned, n.archived]).sort()).toEqual([
      ['Archived one', false, true],
      ['Pinned one', true, false],
      ['Plain one', false, false],
    ]);
  });
});
