// The notes subgraph (CONTRACT.md "Notes") on SQLite and on MySQL, through GraphQL and REST: tags
// from #hashtags, wiki links and backlinks, folders, archive, full-text search in several scripts,
// the caps, optimistic locking under concurrency, the tag rename (racing an edit), events, one
// user's notes hidden from another (federation references included), the user.deleted cascade,
// and a fuzz of create and patch bodies. One server for the file, with small caps and batches.
import { In } from 'typeorm';
import type { ServerInternals } from '../../bin/all-in-one';
import { LoggedEvent } from '../../lib/event-log';
import type { RunningSubgraph } from '../../lib/subgraph';
import { Note } from '../../subgraphs/notes/entities/note';
import { NoteFolder } from '../../subgraphs/notes/entities/note-folder';
import { KitJob } from '../../lib/kit/jobs';
import { SqliteReadThreads } from '../../lib/database/read-threads';
import { sharedExpensiveReads } from '../../lib/kit/expensive-reads';
import { codeRanges, hashtags, renameHashtags, titleFromBody, wikiLinks } from '../../subgraphs/notes/markdown';
import { api, createUserAndLogin, login, request, UUID } from '../helpers/http';
import { OpenApiDocument, undocumented } from '../helpers/openapi';
import { ADMIN, startTestServer, TEST_DB, TestServer } from '../helpers/server';
import { openStream } from '../helpers/sse';
import { until } from '../helpers/wait';

const NOTES_CAP = 12;
const FOLDERS_CAP = 14;

let server: TestServer;
let internals: ServerInternals;
let notesSubgraph: RunningSubgraph;
let http: ReturnType<typeof api>;
let adminToken: string;
let doc: OpenApiDocument;

beforeAll(async () => {
  server = await startTestServer(
    {
      NOTES_PER_USER: String(NOTES_CAP),
      NOTE_FOLDERS_PER_USER: String(FOLDERS_CAP),
      NOTES_BATCH_ROWS: '3',
      LOGIN_MAX_ATTEMPTS_PER_CLIENT: '100000',
    },
    { mount: (_app, i) => (internals = i) },
  );
  notesSubgraph = internals.subgraphs.find((s) => s.name === 'notes')!;
  http = api(server.url);
  adminToken = (await login(server.url, ADMIN)).access_token;
  doc = (await http.get('/api/v1/openapi.json')).body;
}, 60_000);
afterAll(() => server?.close());

let users = 0;
const newUser = (name: string) => createUserAndLogin(server.url, adminToken, `${name}-${++users}`);

const FIELDS = 'id title body tags folderId pinned archived archivedAt version ownerId owner { id username }';
const CREATE = `mutation ($title: String, $body: String!, $folderId: ID, $tags: [String!], $pinned: Boolean) {
  createNote(title: $title, body: $body, folderId: $folderId, tags: $tags, pinned: $pinned) { ${FIELDS} } }`;
const UPDATE = `mutation ($id: ID!, $v: Int!, $title: String, $body: String, $folderId: ID, $tags: [String!], $pinned: Boolean) {
  updateNote(id: $id, version: $v, title: $title, body: $body, folderId: $folderId, tags: $tags, pinned: $pinned) { ${FIELDS} } }`;
const GET = `query ($id: ID!) { note(id: $id) { ${FIELDS} } }`;
const LIST = `query ($first: Int, $after: String, $folderId: ID, $tag: String, $archived: String, $pinned: Boolean, $q: String) {
  notes(first: $first, after: $after, folderId: $folderId, tag: $tag, archived: $archived, pinned: $pinned, q: $q) {
    items { id title excerpt tags pinned archived version } nextCursor } }`;
const BACKLINKS = 'query ($id: ID!) { noteBacklinks(id: $id) { items { id title } nextCursor } }';

async function gql(query: string, variables: Record<string, unknown>, token: string) {
  return (await http.graphql(query, variables, token)).body;
}
async function create(token: string, vars: Record<string, unknown>) {
  const res = await gql(CREATE, vars, token);
  expect(res.errors).toBeUndefined();
  return res.data.createNote;
}
const code = (res: any) => res.errors?.[0]?.extensions?.code;
const list = async (token: string, vars: Record<string, unknown> = {}) => {
  const res = await gql(LIST, vars, token);
  expect(res.errors).toBeUndefined();
  return res.data.notes as { items: any[]; nextCursor: string | null };
};
const ids = (page: { items: { id: string }[] }) => page.items.map((i) => i.id);

describe('Markdown rules', () => {
  it('finds #hashtags outside code spans and fenced blocks, lower-cased and nested', () => {
    const body = [
      '#Top and #project/Alpha, not a#tag, (#x) not either',
      'inline `#code` and ``#double ` tick`` and #after-code',
      '```js',
      '#infence',
      '```',
      '~~~',
      '#tilde-fence',
      '~~~',
      '# Heading is not a tag',
      '#trailing/ and #a//b',
    ].join('\n');
    expect(hashtags(body)).toEqual(['top', 'project/alpha', 'after-code', 'trailing', 'a/b']);
    expect(codeRanges('a `b` c').length).toBe(1);
    expect(hashtags('```\n#open fence to the end')).toEqual([]);
  });

  it('rewrites hashtags within a tag, and leaves code and other tags alone', () => {
    expect(renameHashtags('#project #Project/alpha #projects `#project` #other', 'project', 'work')).toBe(
      '#work #work/alpha #projects `#project` #other',
    );
  });

  it('reads wiki links by title (case-insensitive, collapsed spaces) or id, outside code', () => {
    const id = '01900000-0000-7000-8000-000000000000';
    expect(wikiLinks(`[[My  Note]] [[my note|shown]] [[${id}]] \`[[in code]]\` [[]]`)).toEqual([
      't:my note',
      `i:${id}`,
    ]);
    expect(titleFromBody('\n\n## Heading line\nrest')).toBe('Heading line');
  });
});

describe('notes over GraphQL', () => {
  it('creates with tags from the body, a title from the first line, and the owner resolved', async () => {
    const user = await newUser('notes-create');
    const note = await create(user.token, {
      body: '# Shopping list\nmilk #Groceries #home/kitchen\n`#notatag`',
      tags: ['Errands', 'groceries'],
    });
    expect(note).toMatchObject({
      id: expect.stringMatching(UUID),
      title: 'Shopping list',
      tags: ['errands', 'groceries', 'home/kitchen'],
      folderId: null,
      pinned: false,
      archived: false,
      archivedAt: null,
      version: 1,
      ownerId: user.id,
      owner: { id: user.id, username: user.username },
    });
    // A body edit keeps the given tags and recomputes the hashtags.
    const edited = (await gql(UPDATE, { id: note.id, v: 1, body: 'now #fresh' }, user.token)).data.updateNote;
    expect(edited).toMatchObject({ version: 2, title: 'Shopping list', tags: ['errands', 'groceries', 'fresh'] });
    const retagged = (await gql(UPDATE, { id: note.id, v: 2, tags: [] }, user.token)).data.updateNote;
    expect(retagged.tags).toEqual(['fresh']);
  });

  it('refuses what breaks the rules with validation_error', async () => {
    const user = await newUser('notes-rules');
    const cases: Record<string, unknown>[] = [
      { body: 'x', tags: ['has space'] },
      { body: 'x', tags: ['a'.repeat(51)] },
      { body: 'x', tags: ['/lead'] },
      { body: 'x', tags: Array.from({ length: 51 }, (_, i) => `t${i}`) },
      { body: Array.from({ length: 51 }, (_, i) => `#t${i}`).join(' ') },
      { body: 'x'.repeat(100_001) },
      { body: 'x', title: 't'.repeat(201) },
    ];
    for (const vars of cases)
      expect([JSON.stringify(vars).slice(0, 60), code(await gql(CREATE, vars, user.token))]).toEqual([
        JSON.stringify(vars).slice(0, 60),
        'validation_error',
      ]);
    // 100,000 characters outside the BMP are 100,000 characters.
    // (Over REST: the notes routes take bodies up to NOTES_BODY_LIMIT_BYTES; /graphql keeps BODY_LIMIT_BYTES.)
    const big = await http.post('/api/v1/notes', { body: '😀'.repeat(100_000), title: 'big' }, { token: user.token });
    expect(big.status).toBe(202);
    expect((await gql(GET, { id: big.body.id }, user.token)).data.note.body).toHaveLength(200_000);
    const over = await http.post('/api/v1/notes', { body: '😀'.repeat(100_001) }, { token: user.token });
    expect([over.status, over.body.details]).toEqual([400, { body: [expect.stringMatching(/100,?000/)] }]);
    expect(code(await gql(LIST, { archived: 'maybe' }, user.token))).toBe('validation_error');
    expect(code(await gql(LIST, { tag: 'Not A Tag' }, user.token))).toBe('validation_error');
  });

  it('lists pinned first, then the newest change, with excerpts, filters and cursors', async () => {
    const user = await newUser('notes-list');
    const a = await create(user.token, { title: 'a', body: `#work ${'long '.repeat(100)}` });
    const b = await create(user.token, { title: 'b', body: '#work/alpha b', pinned: true });
    const c = await create(user.token, { title: 'c', body: '#workshop c' });
    const d = await create(user.token, { title: 'd', body: 'd' });
    await gql(UPDATE, { id: a.id, v: 1, title: 'a2' }, user.token); // a is now the newest change

    const all = await list(user.token);
    expect(ids(all)).toEqual([b.id, a.id, d.id, c.id]);
    expect(all.items[1].excerpt).toHaveLength(300);
    const page1 = await list(user.token, { first: 3 });
    const page2 = await list(user.token, { first: 3, after: page1.nextCursor });
    expect([...ids(page1), ...ids(page2)]).toEqual(ids(all));
    expect(page2.nextCursor).toBeNull();
    expect(code(await gql(LIST, { after: 'bm9wZQ' }, user.token))).toBe('validation_error');

    expect(ids(await list(user.token, { tag: 'work' }))).toEqual([b.id, a.id]);
    expect(ids(await list(user.token, { tag: 'work/alpha' }))).toEqual([b.id]);
    expect(ids(await list(user.token, { tag: 'work', q: 'long' }))).toEqual([a.id]); // search within a tag
    expect(ids(await list(user.token, { tag: 'work', q: 'alpha' }))).toEqual([b.id]);
    expect(ids(await list(user.token, { tag: 'nothing' }))).toEqual([]);
    expect(ids(await list(user.token, { pinned: false }))).toEqual([a.id, d.id, c.id]);

    // Archived notes leave the default listing.
    const archived = (
      await gql(
        'mutation ($id: ID!) { archiveNote(id: $id, version: 1) { archived archivedAt version } }',
        { id: d.id },
        user.token,
      )
    ).data.archiveNote;
    expect(archived).toMatchObject({ archived: true, archivedAt: expect.any(String), version: 2 });
    expect(ids(await list(user.token))).not.toContain(d.id);
    expect(ids(await list(user.token, { archived: 'true' }))).toEqual([d.id]);
    expect(ids(await list(user.token, { archived: 'all' }))).toHaveLength(4);
    const back = await gql(
      'mutation ($id: ID!) { unarchiveNote(id: $id, version: 2) { archived archivedAt version } }',
      { id: d.id },
      user.token,
    );
    expect(back.data.unarchiveNote).toEqual({ archived: false, archivedAt: null, version: 3 });
    expect(
      code(await gql('mutation ($id: ID!) { archiveNote(id: $id, version: 2) { id } }', { id: d.id }, user.token)),
    ).toBe('conflict');
  });

  it('finds words with accents and in other scripts, best match first, a page at a time', async () => {
    const user = await newUser('notes-search');
    const other = await newUser('notes-search-other');
    const cafe = await create(user.token, { title: 'Café visit', body: 'The crème brûlée was good.' });
    const mention = await create(user.token, { title: 'Errands', body: 'buy coffee near the cafe, then more things' });
    const russian = await create(user.token, { title: 'Заметка', body: 'Привет, мир! Москва зимой.' });
    const greek = await create(user.token, { title: 'Σημείωση', body: 'Καλημέρα κόσμε' });
    const german = await create(user.token, { title: 'Straße', body: 'Grüße aus München' });
    const japanese = await create(user.token, { title: 'メモ', body: '明日は 東京都に行く' });
    await create(other.token, { title: 'Café of another user', body: 'cafe cafe cafe' });
    const search = async (q: string, token = user.token) => ids(await list(token, { q, archived: 'all' }));

    expect(await search('cafe')).toEqual([cafe.id, mention.id]); // the title match ranks first
    expect(await search('CAFÉ')).toEqual([cafe.id, mention.id]);
    expect(await search('creme brulee')).toEqual([cafe.id]);
    expect(await search('привет')).toEqual([russian.id]);
    expect(await search('москва')).toEqual([russian.id]);
    expect(await search('καλημέρα')).toEqual([greek.id]);
    expect(await search('münchen')).toEqual([german.id]);
    expect(await search('grüße')).toEqual([german.id]);
    expect(await search('東京')).toEqual([japanese.id]); // a run of CJK, by its start (docs/notes.md)
    // A word of 2 characters: indexed behind its owner's tag, it is longer than InnoDB's minimum token size.
    expect(await search('メモ')).toEqual([japanese.id]);
    expect(await search('münch')).toEqual([german.id]);
    expect(await search('visi')).toEqual([cafe.id]); // a word's start
    expect(await search('"coffee near"')).toEqual([mention.id]);
    expect(await search('"near coffee"')).toEqual([]);
    expect(await search('cafe nothingmatches')).toEqual([]);
    expect(await search('cafe', other.token)).toHaveLength(1);

    const first = await list(user.token, { q: 'cafe', first: 1 });
    expect(ids(first)).toEqual([cafe.id]);
    const second = await list(user.token, { q: 'cafe', first: 1, after: first.nextCursor });
    expect(ids(second)).toEqual([mention.id]);
    expect(second.nextCursor).toBeNull();
    // A cursor belongs to its query.
    expect(code(await gql(LIST, { q: 'coffee', first: 1, after: first.nextCursor }, user.token))).toBe(
      'validation_error',
    );
    expect(await search('"" ***')).toEqual([]);
    expect(code(await gql(CREATE, { body: 'x', folderId: '01900000-0000-7000-8000-000000000000' }, user.token))).toBe(
      'not_found',
    );
    // Archived notes are searched only when asked for; edits reach the index at once.
    await gql('mutation ($id: ID!) { archiveNote(id: $id, version: 1) { id } }', { id: mention.id }, user.token);
    expect(ids(await list(user.token, { q: 'cafe' }))).toEqual([cafe.id]);
    await gql(UPDATE, { id: cafe.id, v: 1, title: 'Tea visit', body: 'no more' }, user.token);
    expect(await search('cafe')).toEqual([mention.id]);
    expect(await search('tea')).toEqual([cafe.id]);
    await gql('mutation ($id: ID!) { deleteNote(id: $id, version: 2) { id } }', { id: cafe.id }, user.token);
    expect(await search('tea')).toEqual([]);
  });

  it("runs a search's ranking as the kit's expensive read: in a read thread on SQLite (issue 41 finding 2)", async () => {
    const user = await newUser('notes-search-read');
    const note = await create(user.token, { title: 'Ranked', body: 'ranked in a thread of its own' });
    const reads = sharedExpensiveReads(server.config);
    const select = jest.spyOn(reads, 'select');
    const threads = jest.spyOn(SqliteReadThreads.prototype, 'select');
    try {
      // Just written, and found: the thread's connection sees what is committed.
      expect(ids(await list(user.token, { q: 'thread' }))).toEqual([note.id]);
      expect(select).toHaveBeenCalledTimes(1);
      expect(select.mock.calls[0][0]).toBe(notesSubgraph.dataSource);
      expect(threads).toHaveBeenCalledTimes(TEST_DB === 'sqlite' ? 1 : 0);
    } finally {
      select.mockRestore();
      threads.mockRestore();
    }
  });

  it('links by [[title]] or [[id]], and counts links written before their target existed', async () => {
    const user = await newUser('notes-links');
    const early = await create(user.token, { title: 'early', body: 'see [[Future  Plan]] and `[[Ignored]]`' });
    const target = await create(user.token, { title: 'future plan', body: 'here at last' });
    const byId = await create(user.token, { title: 'by id', body: `points at [[${target.id}|the plan]]` });
    const self = await create(user.token, { title: 'Ignored', body: 'no one links here outside code [[Ignored]]' });
    const backlinks = async (id: string, token = user.token) => gql(BACKLINKS, { id }, token);
    expect(ids((await backlinks(target.id)).data.noteBacklinks)).toEqual([early.id, byId.id]);
    expect(ids((await backlinks(self.id)).data.noteBacklinks)).toEqual([]);
    // A note renamed to a linked title gains its backlinks; the old title's links stay behind.
    const renamed = await create(user.token, { title: 'someday', body: 'x' });
    await create(user.token, { title: 'wish', body: '[[Someday Maybe]]' });
    expect(ids((await backlinks(renamed.id)).data.noteBacklinks)).toEqual([]);
    await gql(UPDATE, { id: renamed.id, v: 1, title: 'someday maybe' }, user.token);
    expect((await backlinks(renamed.id)).data.noteBacklinks.items.map((i: any) => i.title)).toEqual(['wish']);
    // Another user's note of the same title does not link; their backlinks query is not_found.
    const stranger = await newUser('notes-links-other');
    await create(stranger.token, { title: 'theirs', body: '[[future plan]]' });
    expect(ids((await backlinks(target.id)).data.noteBacklinks)).toHaveLength(2);
    expect(code(await backlinks(target.id, stranger.token))).toBe('not_found');
  });

  it('keeps folders a tree: paths, counts, cycles, depth, sibling names, non-empty deletes', async () => {
    const user = await newUser('notes-folders');
    const CREATE_FOLDER =
      'mutation ($n: String!, $p: ID) { createNoteFolder(name: $n, parentId: $p) { id name parentId path noteCount version } }';
    const MOVE =
      'mutation ($id: ID!, $v: Int!, $p: ID, $n: String) { updateNoteFolder(id: $id, version: $v, parentId: $p, name: $n) { id path version } }';
    const DELETE_FOLDER = 'mutation ($id: ID!, $v: Int!) { deleteNoteFolder(id: $id, version: $v) { id } }';
    const folder = async (n: string, p?: string) => {
      const res = await gql(CREATE_FOLDER, { n, p }, user.token);
      expect(res.errors).toBeUndefined();
      return res.data.createNoteFolder;
    };
    const top = await folder('Work');
    const mid = await folder('Projects', top.id);
    const leaf = await folder('Alpha', mid.id);
    expect(leaf).toMatchObject({ path: 'Work/Projects/Alpha', parentId: mid.id, noteCount: 0, version: 1 });
    expect((await gql(CREATE_FOLDER, { n: 'projects', p: top.id }, user.token)).errors[0].extensions).toMatchObject({
      code: 'conflict',
      details: { reason: 'name_taken' },
    });
    expect(code(await gql(CREATE_FOLDER, { n: 'a/b' }, user.token))).toBe('validation_error');

    // Into itself or below it: a cycle.
    for (const p of [top.id, leaf.id])
      expect((await gql(MOVE, { id: top.id, v: 1, p }, user.token)).errors[0].extensions).toMatchObject({
        code: 'conflict',
        details: { reason: 'cycle' },
      });
    // Depth: a chain of 10 is the most; an 11th level, made or moved, is refused.
    let parent = leaf.id;
    for (let depth = 4; depth <= 10; depth++) parent = (await folder(`level ${depth}`, parent)).id;
    expect((await gql(CREATE_FOLDER, { n: 'too deep', p: parent }, user.token)).errors[0].extensions).toMatchObject({
      code: 'conflict',
      details: { limit: 10 },
    });
    const loose = await folder('Loose');
    const sub = await folder('Sub', loose.id);
    expect(sub.path).toBe('Loose/Sub');
    expect((await gql(MOVE, { id: loose.id, v: 1, p: parent }, user.token)).errors[0].extensions.details).toMatchObject(
      { limit: 10 },
    );
    const moved = (await gql(MOVE, { id: loose.id, v: 1, p: mid.id, n: 'Misc' }, user.token)).data.updateNoteFolder;
    expect(moved).toMatchObject({ path: 'Work/Projects/Misc', version: 2 });

    // Notes in folders: counted, filtered, and a folder with contents is not deleted.
    const inLeaf = await create(user.token, { body: 'in alpha', folderId: leaf.id });
    const folders = (await gql('{ noteFolders { id path noteCount } }', {}, user.token)).data.noteFolders;
    expect(folders.find((f: any) => f.id === leaf.id)).toEqual({
      id: leaf.id,
      path: 'Work/Projects/Alpha',
      noteCount: 1,
    });
    expect(ids(await list(user.token, { folderId: leaf.id }))).toEqual([inLeaf.id]);
    expect((await gql(DELETE_FOLDER, { id: leaf.id, v: 1 }, user.token)).errors[0].extensions).toMatchObject({
      code: 'conflict',
      details: { noteCount: 1, folderCount: 1 },
    });
    expect((await gql(DELETE_FOLDER, { id: sub.id, v: 1 }, user.token)).data.deleteNoteFolder.id).toBe(sub.id);
    await gql(UPDATE, { id: inLeaf.id, v: 1, folderId: null }, user.token);
    // Another user's folder is not one of yours.
    const stranger = await newUser('notes-folders-other');
    expect(code(await gql(CREATE, { body: 'x', folderId: top.id }, stranger.token))).toBe('not_found');
    expect(code(await gql(MOVE, { id: top.id, v: 1, n: 'mine' }, stranger.token))).toBe('not_found');
  });

  it('keeps at most NOTES_PER_USER notes and NOTE_FOLDERS_PER_USER folders (conflict with details.limit)', async () => {
    const user = await newUser('notes-cap');
    const made = await Promise.all(
      Array.from({ length: NOTES_CAP + 3 }, (_, i) => gql(CREATE, { body: `n${i}` }, user.token)),
    );
    const ok = made.filter((r) => !r.errors);
    expect(ok).toHaveLength(NOTES_CAP);
    for (const r of made.filter((x) => x.errors))
      expect(r.errors[0].extensions).toMatchObject({
        code: 'conflict',
        details: { limit: 'NOTES_PER_USER', max: NOTES_CAP, count: NOTES_CAP },
      });
    // A trashed note still counts (test/trash); one deleted for good frees its place.
    await gql(
      'mutation ($id: ID!) { deleteNote(id: $id, version: 1, permanent: true) { id } }',
      { id: ok[0].data.createNote.id },
      user.token,
    );
    expect((await gql(CREATE, { body: 'room again' }, user.token)).errors).toBeUndefined();
    const folders = await Promise.all(
      Array.from({ length: FOLDERS_CAP + 2 }, (_, i) =>
        gql('mutation ($n: String!) { createNoteFolder(name: $n) { id } }', { n: `f${i}` }, user.token),
      ),
    );
    expect(folders.filter((r) => !r.errors)).toHaveLength(FOLDERS_CAP);
    expect(folders.find((r) => r.errors).errors[0].extensions.details).toEqual({
      limit: 'NOTE_FOLDERS_PER_USER',
      max: FOLDERS_CAP,
      count: FOLDERS_CAP,
    });
  });

  it('lets one of concurrent updates at a version win; the rest are conflict', async () => {
    const user = await newUser('notes-race');
    const note = await create(user.token, { body: 'start' });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => gql(UPDATE, { id: note.id, v: 1, body: `writer ${i} #w${i}` }, user.token)),
    );
    const winners = results.filter((r) => !r.errors);
    expect(winners).toHaveLength(1);
    for (const r of results.filter((x) => x.errors))
      expect(r.errors[0].extensions).toMatchObject({ code: 'conflict', details: { currentVersion: 2 } });
    const stored = (await gql(GET, { id: note.id }, user.token)).data.note;
    expect(stored).toMatchObject({
      version: 2,
      body: winners[0].data.updateNote.body,
      tags: winners[0].data.updateNote.tags,
    });
    // The derived rows follow the winner only.
    const tags = (await gql('{ noteTags { tag count } }', {}, user.token)).data.noteTags;
    expect(tags).toEqual([{ tag: winners[0].data.updateNote.tags[0], count: 1 }]);
  });

  it('renames a tag and its nested tags in the background, bodies included, one version and event per note', async () => {
    const user = await newUser('notes-rename');
    const stream = await openStream(`${server.url}/api/v1/events?types=note.updated`, { token: user.token });
    try {
      const a = await create(user.token, { body: 'plan #project and `#project` in code' });
      const b = await create(user.token, { body: 'deep #Project/alpha/one', tags: ['project'] });
      const c = await create(user.token, { body: '#projects are other', tags: ['keep'] });
      const many = await Promise.all(
        Array.from({ length: 5 }, (_, i) => create(user.token, { body: `n${i}`, tags: ['project/beta'] })),
      );
      const res = await gql('mutation { renameNoteTag(from: "project", to: "work") { id from to } }', {}, user.token);
      expect(res.data.renameNoteTag).toMatchObject({ id: expect.stringMatching(UUID), from: 'project', to: 'work' });
      const changed = [a, b, ...many].map((n) => n.id);
      const frames = await stream.waitFor((f) => changed.includes(f.data.note_id), changed.length, 30_000);
      expect(new Set(frames.map((f) => f.data.note_id)).size).toBe(changed.length);
      expect(frames.every((f) => f.data.version === 2 && f.data.body === undefined)).toBe(true);
      const get = async (id: string) => (await gql(GET, { id }, user.token)).data.note;
      expect(await get(a.id)).toMatchObject({ body: 'plan #work and `#project` in code', tags: ['work'], version: 2 });
      expect(await get(b.id)).toMatchObject({
        body: 'deep #work/alpha/one',
        tags: ['work', 'work/alpha/one'],
        version: 2,
      });
      expect(await get(c.id)).toMatchObject({ tags: ['keep', 'projects'], version: 1 });
      expect(await get(many[0].id)).toMatchObject({ tags: ['work/beta'], version: 2 });
      const counts = (await gql('{ noteTags { tag count } }', {}, user.token)).data.noteTags;
      expect(counts).toEqual([
        { tag: 'keep', count: 1 },
        { tag: 'projects', count: 1 },
        { tag: 'work', count: 2 },
        { tag: 'work/alpha/one', count: 1 },
        { tag: 'work/beta', count: 5 },
      ]);
      expect(code(await gql('mutation { renameNoteTag(from: "a", to: "a/b") { id } }', {}, user.token))).toBe(
        'validation_error',
      );
      expect(code(await gql('mutation { renameNoteTag(from: "A B", to: "c") { id } }', {}, user.token))).toBe(
        'validation_error',
      );
    } finally {
      stream.close();
    }
  });

  it('a rename racing edits loses neither: every note ends renamed, and every accepted edit stays', async () => {
    const user = await newUser('notes-rename-race');
    const notes = await Promise.all(
      Array.from({ length: 9 }, (_, i) => create(user.token, { title: `r${i}`, body: `#old ${i}` })),
    );
    const rename = gql('mutation { renameNoteTag(from: "old", to: "new") { id } }', {}, user.token);
    // Each note edited at version 1 while the rename runs: either may come first.
    const edits = notes.map((n, i) => gql(UPDATE, { id: n.id, v: 1, title: `edited ${i}` }, user.token));
    await rename;
    const editResults = await Promise.all(edits);
    for (const r of editResults) if (r.errors) expect(code(r)).toBe('conflict');
    await until(async () => (await list(user.token, { tag: 'old' })).items.length === 0, 'the rename to finish');
    for (const [i, n] of notes.entries()) {
      const note = (await gql(GET, { id: n.id }, user.token)).data.note;
      expect(note.tags).toEqual(['new']);
      expect(note.body).toBe(`#new ${i}`);
      if (!editResults[i].errors) expect(note.title).toBe(`edited ${i}`);
      expect(note.version).toBe(editResults[i].errors ? 2 : 3);
    }
  });

  it('emits events with ids, titles and changed fields, never bodies', async () => {
    const user = await newUser('notes-events');
    const stream = await openStream(
      `${server.url}/api/v1/events?types=note.created,note.updated,note.archived,note.unarchived,note.deleted,note_folder.created,note_folder.updated,note_folder.deleted`,
      { token: user.token },
    );
    try {
      const folder = (await gql('mutation { createNoteFolder(name: "F") { id } }', {}, user.token)).data
        .createNoteFolder;
      await gql(
        'mutation ($id: ID!) { updateNoteFolder(id: $id, version: 1, name: "G") { id } }',
        { id: folder.id },
        user.token,
      );
      const note = await create(user.token, { title: 'secret title', body: 'secret body' });
      await gql(UPDATE, { id: note.id, v: 1, body: 'new secret body', pinned: true }, user.token);
      await gql('mutation ($id: ID!) { archiveNote(id: $id, version: 2) { id } }', { id: note.id }, user.token);
      await gql('mutation ($id: ID!) { unarchiveNote(id: $id, version: 3) { id } }', { id: note.id }, user.token);
      await gql(
        'mutation ($id: ID!) { deleteNote(id: $id, version: 4, permanent: true) { id } }',
        { id: note.id },
        user.token,
      );
      await gql('mutation ($id: ID!) { deleteNoteFolder(id: $id, version: 2) { id } }', { id: folder.id }, user.token);
      const frames = await stream.waitFor(() => true, 8, 20_000);
      expect(frames.map((f) => f.event)).toEqual([
        'note_folder.created',
        'note_folder.updated',
        'note.created',
        'note.updated',
        'note.archived',
        'note.unarchived',
        'note.deleted',
        'note_folder.deleted',
      ]);
      expect(frames[3].data).toMatchObject({
        note_id: note.id,
        title: 'secret title',
        version: 2,
        changed: ['body', 'pinned'],
      });
      expect(frames[1].data).toMatchObject({ folder_id: folder.id, name: 'G', changed: ['name'] });
      expect(frames.map((f) => JSON.stringify(f.data)).join()).not.toMatch(/secret body/);
      const logged = await internals.log.dataSource.manager.find(LoggedEvent, { where: { resourceId: note.id } });
      expect(logged.every((e) => e.userId === user.id)).toBe(true);
      expect(logged.map((e) => e.type)).toContain('note.created');
    } finally {
      stream.close();
    }
  });

  it("hides one user's notes from another: queries, writes, and federation references", async () => {
    const owner = await newUser('notes-owner');
    const other = await newUser('notes-intruder');
    const note = await create(owner.token, { title: 'private', body: '#mine [[x]]' });
    expect(code(await gql(GET, { id: note.id }, other.token))).toBe('not_found');
    expect(code(await gql(UPDATE, { id: note.id, v: 1, body: 'taken' }, other.token))).toBe('not_found');
    expect(
      code(await gql('mutation ($id: ID!) { deleteNote(id: $id, version: 1) { id } }', { id: note.id }, other.token)),
    ).toBe('not_found');
    expect(
      code(await gql('mutation ($id: ID!) { archiveNote(id: $id, version: 1) { id } }', { id: note.id }, other.token)),
    ).toBe('not_found');
    expect(await list(other.token)).toEqual({ items: [], nextCursor: null });
    expect((await gql('{ noteTags { tag } }', {}, other.token)).data.noteTags).toEqual([]);
    expect(code(await gql(GET, { id: note.id }, ''))).toBe('unauthorized');

    // What another subgraph (hubs) gets for a reference: the note for its owner, null for anyone else.
    const entities = async (token: string, id: string) =>
      notesSubgraph.execute(
        {
          query: 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Note { id title } } }',
          variables: { r: [{ __typename: 'Note', id }] },
        },
        { headers: { authorization: `Bearer ${token}` }, clientIp: '127.0.0.1' },
      );
    expect((await entities(owner.token, note.id)).data).toEqual({ _entities: [{ id: note.id, title: 'private' }] });
    expect((await entities(other.token, note.id)).data).toEqual({ _entities: [null] });
    expect((await entities(owner.token, 'not-a-uuid')).data).toEqual({ _entities: [null] });
  });

  it("removes a deleted user's notes and folders in batches, each note.deleted exactly once", async () => {
    const user = await newUser('notes-cascade');
    const folder = (await gql('mutation { createNoteFolder(name: "F") { id } }', {}, user.token)).data.createNoteFolder;
    const child = (
      await gql('mutation ($p: ID) { createNoteFolder(name: "C", parentId: $p) { id } }', { p: folder.id }, user.token)
    ).data.createNoteFolder;
    const made = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        create(user.token, { body: `#t${i % 3} cascade ${i}`, folderId: i % 2 ? child.id : null }),
      ),
    );
    const keeper = await newUser('notes-cascade-keeper');
    const kept = await create(keeper.token, { body: 'stays' });
    expect((await http.delete(`/api/v1/admin/users/${user.id}?version=1`, { token: adminToken })).status).toBe(202);
    const db = notesSubgraph.dataSource.manager;
    await until(
      async () =>
        (await db.countBy(Note, { ownerId: user.id })) === 0 &&
        (await db.countBy(NoteFolder, { ownerId: user.id })) === 0,
      'the cascade',
      30_000,
    );
    const noteIds = made.map((n) => n.id);
    await until(
      async () =>
        (await internals.log.dataSource.manager.countBy(LoggedEvent, {
          type: 'note.deleted',
          resourceId: In(noteIds),
        })) === noteIds.length,
      'the events',
    );
    const events = await internals.log.dataSource.manager.find(LoggedEvent, {
      where: { type: 'note.deleted', resourceId: In(noteIds) },
    });
    expect(events.map((e) => e.resourceId).sort()).toEqual([...noteIds].sort());
    expect(events.every((e) => e.userId === user.id && JSON.parse(e.payload).reason === 'user_deleted')).toBe(true);
    const folderEvents = () =>
      internals.log.dataSource.manager.countBy(LoggedEvent, {
        type: 'note_folder.deleted',
        resourceId: In([folder.id, child.id]),
      });
    await until(async () => (await folderEvents()) === 2, 'the folder events');
    // The job is done and gone; nothing was emitted twice.
    await until(async () => (await db.countBy(KitJob, { ownerId: user.id })) === 0, 'the job to end');
    expect(await folderEvents()).toBe(2);
    expect(
      await internals.log.dataSource.manager.countBy(LoggedEvent, { type: 'note.deleted', resourceId: In(noteIds) }),
    ).toBe(noteIds.length);
    expect((await gql(GET, { id: kept.id }, keeper.token)).data.note.id).toBe(kept.id);
    expect(Number((await db.query('SELECT COUNT(*) AS n FROM note_tags WHERE owner_id = ?', [user.id]))[0].n)).toBe(0);
  });
});

describe('notes over REST', () => {
  const documented = <T extends { status: number }>(method: string, template: string, res: T): T => {
    expect(undocumented(doc, method, template, res as never)).toEqual([]);
    return res;
  };

  it('lists every route in the document with its operationId', () => {
    const opIds = (template: string) =>
      Object.values(doc.paths[template] ?? {})
        .map((op: any) => op.operationId)
        .sort();
    expect(opIds('/api/v1/notes')).toEqual(['createNote', 'listNotes']);
    expect(opIds('/api/v1/notes/{noteId}')).toEqual(['deleteNote', 'getNote', 'updateNote']);
    expect(opIds('/api/v1/notes/{noteId}/archive')).toEqual(['archiveNote']);
    expect(opIds('/api/v1/notes/{noteId}/unarchive')).toEqual(['unarchiveNote']);
    expect(opIds('/api/v1/notes/{noteId}/backlinks')).toEqual(['listNoteBacklinks']);
    expect(opIds('/api/v1/notes/folders')).toEqual(['createNoteFolder', 'listNoteFolders']);
    expect(opIds('/api/v1/notes/folders/{folderId}')).toEqual(['deleteNoteFolder', 'updateNoteFolder']);
    expect(opIds('/api/v1/notes/tags')).toEqual(['listNoteTags']);
    expect(opIds('/api/v1/notes/tags/rename')).toEqual(['renameNoteTag']);
  });

  it('creates (202 + Location), gets (ETag), lists with excerpts, patches, archives, and deletes', async () => {
    const user = await newUser('notes-rest');
    const send = (method: string, path: string, options: Parameters<typeof request>[3] = {}) =>
      request(server.url, method, path, { token: user.token, ...options });
    const folderRes = documented(
      'post',
      '/api/v1/notes/folders',
      await send('POST', '/api/v1/notes/folders', { body: { name: 'Inbox' } }),
    );
    expect(folderRes.status).toBe(202);
    const folderId = folderRes.body.id;
    // 100,000 three-byte characters: larger than BODY_LIMIT_BYTES, within the notes routes' own limit.
    const body = `#euro ${'€'.repeat(99_990)}`;
    const created = documented(
      'post',
      '/api/v1/notes',
      await send('POST', '/api/v1/notes', { body: { body, folder_id: folderId, tags: ['Money'] } }),
    );
    expect(created.status).toBe(202);
    const id = created.body.id;
    expect(created.headers.get('location')).toBe(`/api/v1/notes/${id}`);
    const got = documented('get', '/api/v1/notes/{noteId}', await send('GET', `/api/v1/notes/${id}`));
    expect(got.headers.get('etag')).toBe('"1"');
    expect(got.body).toMatchObject({
      id,
      title: `#euro ${'€'.repeat(194)}`,
      body,
      folder_id: folderId,
      tags: ['money', 'euro'],
      owner_id: user.id,
      archived: false,
      archived_at: null,
      pinned: false,
    });
    const page = documented('get', '/api/v1/notes', await send('GET', '/api/v1/notes?tag=money&limit=10'));
    expect(page.body.items).toHaveLength(1);
    expect(page.body.items[0]).not.toHaveProperty('body');
    expect([...page.body.items[0].excerpt]).toHaveLength(300);
    expect(documented('get', '/api/v1/notes', await send('GET', '/api/v1/notes?archived=maybe')).status).toBe(400);
    expect(
      documented('get', '/api/v1/notes', await send('GET', `/api/v1/notes?q=euro&folder_id=${folderId}`)).body.items,
    ).toHaveLength(1);

    const patched = documented(
      'patch',
      '/api/v1/notes/{noteId}',
      await send('PATCH', `/api/v1/notes/${id}`, {
        body: { title: 'Money', pinned: true },
        headers: { 'if-match': '"1"' },
      }),
    );
    expect(patched.status).toBe(202);
    expect(patched.headers.get('etag')).toBe('"2"');
    const stale = documented(
      'patch',
      '/api/v1/notes/{noteId}',
      await send('PATCH', `/api/v1/notes/${id}?version=1`, { body: { title: 'x' } }),
    );
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ error: 'conflict', details: { current_version: 2 } });
    expect(
      documented('post', '/api/v1/notes/{noteId}/archive', await send('POST', `/api/v1/notes/${id}/archive?version=2`))
        .status,
    ).toBe(202);
    expect(
      documented('get', '/api/v1/notes', await send('GET', '/api/v1/notes?archived=true')).body.items.map(
        (i: any) => i.id,
      ),
    ).toEqual([id]);
    expect(
      documented(
        'post',
        '/api/v1/notes/{noteId}/unarchive',
        await send('POST', `/api/v1/notes/${id}/unarchive?version=3`),
      ).status,
    ).toBe(202);

    const tags = documented('get', '/api/v1/notes/tags', await send('GET', '/api/v1/notes/tags'));
    expect(tags.body).toEqual([
      { tag: 'euro', count: 1 },
      { tag: 'money', count: 1 },
    ]);
    const folders = documented('get', '/api/v1/notes/folders', await send('GET', '/api/v1/notes/folders'));
    expect(folders.body.items).toEqual([
      expect.objectContaining({ id: folderId, path: 'Inbox', note_count: 1, parent_id: null }),
    ]);
    const notEmpty = documented(
      'delete',
      '/api/v1/notes/folders/{folderId}',
      await send('DELETE', `/api/v1/notes/folders/${folderId}?version=1`),
    );
    expect(notEmpty.status).toBe(409);
    expect(notEmpty.body.details).toMatchObject({ note_count: 1, folder_count: 0 });
    const cycle = documented(
      'patch',
      '/api/v1/notes/folders/{folderId}',
      await send('PATCH', `/api/v1/notes/folders/${folderId}?version=1`, { body: { parent_id: folderId } }),
    );
    expect(cycle.status).toBe(409);
    expect(cycle.body.details).toMatchObject({ reason: 'cycle' });

    const linker = documented(
      'post',
      '/api/v1/notes',
      await send('POST', '/api/v1/notes', { body: { body: 'see [[money]]' } }),
    );
    const backlinks = documented(
      'get',
      '/api/v1/notes/{noteId}/backlinks',
      await send('GET', `/api/v1/notes/${id}/backlinks`),
    );
    expect(backlinks.body).toMatchObject({
      items: [expect.objectContaining({ id: linker.body.id, excerpt: 'see [[money]]' })],
      next_cursor: null,
    });

    const renamed = documented(
      'post',
      '/api/v1/notes/tags/rename',
      await send('POST', '/api/v1/notes/tags/rename', { body: { from: 'euro', to: 'eur' } }),
    );
    expect(renamed.status).toBe(202);
    await until(async () => (await send('GET', `/api/v1/notes/${id}`)).body.tags.includes('eur'), 'the rename');
    expect(
      documented(
        'post',
        '/api/v1/notes/tags/rename',
        await send('POST', '/api/v1/notes/tags/rename', { body: { from: 'x y', to: 'z' } }),
      ).status,
    ).toBe(400);

    expect(
      documented('delete', '/api/v1/notes/{noteId}', await send('DELETE', `/api/v1/notes/${id}?version=4`)).status,
    ).toBe(409);
    expect(
      documented('delete', '/api/v1/notes/{noteId}', await send('DELETE', `/api/v1/notes/${id}?version=5`)).status,
    ).toBe(202);
    expect(documented('get', '/api/v1/notes/{noteId}', await send('GET', `/api/v1/notes/${id}`)).status).toBe(404);
    expect(documented('get', '/api/v1/notes', await send('GET', '/api/v1/notes', { token: undefined })).status).toBe(
      401,
    );
  });

  it('refuses a body over NOTES_BODY_LIMIT_BYTES with 413, and 100,001 characters with 400', async () => {
    const user = await newUser('notes-rest-limits');
    const huge = await request(server.url, 'POST', '/api/v1/notes', {
      token: user.token,
      body: { body: 'x'.repeat(server.config.NOTES_BODY_LIMIT_BYTES + 10) },
    });
    expect(huge.status).toBe(413);
    expect(huge.body.error).toBe('payload_too_large');
    const long = documented(
      'post',
      '/api/v1/notes',
      await request(server.url, 'POST', '/api/v1/notes', { token: user.token, body: { body: 'x'.repeat(100_001) } }),
    );
    expect(long.status).toBe(400);
    // Other routes keep BODY_LIMIT_BYTES.
    const folder = await request(server.url, 'POST', '/api/v1/notes/folders', {
      token: user.token,
      body: { name: 'x', pad: 'y'.repeat(server.config.BODY_LIMIT_BYTES) },
    });
    expect(folder.status).toBe(413);
  });

  it('refuses lone surrogates with 400: a folder named "\\ud800" twice is no 500 (issue 41, finding 9)', async () => {
    const user = await newUser('notes-surrogates');
    for (const name of ['\ud800', '\ud800', 'a\udfffb']) {
      const res = documented(
        'post',
        '/api/v1/notes/folders',
        await request(server.url, 'POST', '/api/v1/notes/folders', { token: user.token, body: { name } }),
      );
      expect([res.status, res.body.error, res.body.details]).toEqual([
        400,
        'validation_error',
        { name: [expect.any(String)] },
      ]);
    }
    const note = await request(server.url, 'POST', '/api/v1/notes', {
      token: user.token,
      body: { title: 'ok', body: 'half a pair \ud83d', tags: ['fine'] },
    });
    expect([note.status, Object.keys(note.body.details)]).toEqual([400, ['body']]);
    // A whole pair is text like any other.
    const emoji = await request(server.url, 'POST', '/api/v1/notes/folders', {
      token: user.token,
      body: { name: '😀' },
    });
    expect(emoji.status).toBe(202);
  });

  it('answers every fuzzed create and patch with a 2xx or a 4xx, never a 5xx', async () => {
    const user = await newUser('notes-fuzz');
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)];
    const pieces = [
      '#',
      '[[',
      ']]',
      '`',
      '```\n',
      '~~~',
      '\n',
      ' ',
      '#tag',
      '#Ä',
      '/',
      '|',
      '"',
      '\\',
      '\u0000',
      // Lone surrogates are refused as a whole (the surrogates test); a noncharacter is well-formed.
      '\uffff',
      '😀',
      'é',
      '中文',
      'ß',
      '*',
      '-',
      '<script>',
      "'; DROP TABLE notes; --",
      '%',
      '_',
    ];
    const text = () => Array.from({ length: Math.floor(random() * 40) }, () => pick(pieces)).join('');
    const value = () => pick<unknown>([text(), 12, null, true, [], [text()], { a: 1 }, -1, 1e308, '']);
    const statuses = new Set<number>();
    let id: string | undefined;
    let version = 1;
    for (let i = 0; i < 60; i++) {
      const body: Record<string, unknown> = {};
      for (const field of ['title', 'body', 'tags', 'folder_id', 'pinned', 'extra'])
        if (random() < 0.6)
          body[field] =
            field === 'tags' && random() < 0.5
              ? [text(), text()]
              : field === 'body' && random() < 0.5
                ? text()
                : value();
      const res =
        id && random() < 0.5
          ? await request(server.url, 'PATCH', `/api/v1/notes/${id}?version=${pick([version, version, 0, 99])}`, {
              token: user.token,
              body,
            })
          : await request(server.url, 'POST', '/api/v1/notes', { token: user.token, body });
      statuses.add(res.status);
      expect([res.status, res.text.slice(0, 200)]).toEqual([expect.any(Number), expect.any(String)]);
      expect(res.status).toBeLessThan(500);
      if (res.status === 202 && res.headers.get('location')?.endsWith(res.body.id)) {
        const got = await request(server.url, 'GET', `/api/v1/notes/${res.body.id}`, { token: user.token });
        expect(got.status).toBe(200);
        id = res.body.id;
        version = got.body.version;
      }
      if (random() < 0.2) {
        const q = await request(
          server.url,
          'GET',
          `/api/v1/notes?q=${encodeURIComponent(text().replace(/[\ud800-\udfff]/g, '') || 'x')}`,
          {
            token: user.token,
          },
        );
        expect(q.status).toBeLessThan(500);
      }
    }
    expect(statuses.has(202)).toBe(true);
    expect(statuses.has(400)).toBe(true);
  });
});
