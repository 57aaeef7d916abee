// Exports (issue 45), on SQLite and on MySQL: the whole account as a zip written as a stream into
// the blob store, with the contract's layout, downloaded whole and by Range; one export per user
// at a time (409); another user's export is not_found; DELETE removes it.
import yauzl from 'yauzl';
import { api, createUserAndLogin, login, request } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';

let server: TestServer;
let http: ReturnType<typeof api>;
let admin: string;

beforeAll(async () => {
  server = await startTestServer({
    SUBGRAPHS: 'auth,notes,vault,hubs,tts,transfer',
    VAULT_ENRICH_CONCURRENCY: '0',
    SYNTHESIS_CONCURRENCY: '0',
  });
  http = api(server.url);
  admin = (await login(server.url, ADMIN)).access_token;
});
afterAll(() => server.close());

function unzip(zip: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) =>
    yauzl.fromBuffer(zip, { lazyEntries: true }, (err, z) => {
      if (err) return reject(err);
      const files = new Map<string, Buffer>();
      z.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName.endsWith('/')) return z.readEntry();
        z.openReadStream(entry, (e, s) => {
          if (e) return reject(e);
          const chunks: Buffer[] = [];
          s.on('data', (c: Buffer) => chunks.push(c));
          s.on('end', () => {
            files.set(entry.fileName, Buffer.concat(chunks));
            z.readEntry();
          });
        });
      });
      z.on('end', () => resolve(files));
      z.on('error', reject);
      z.readEntry();
    }),
  );
}

async function download(id: string, token: string, range?: string) {
  const res = await fetch(`${server.url}/api/v1/exports/${id}/download`, {
    headers: { authorization: `Bearer ${token}`, ...(range ? { range } : {}) },
  });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

async function importExport(zip: Buffer, token: string, from?: string, to?: string) {
  const body = Buffer.from(zip);
  if (from && to) for (let i = body.indexOf(from); i >= 0; i = body.indexOf(from, i + 1)) Buffer.from(to).copy(body, i);
  const res = await request(server.url, 'POST', '/api/v1/imports?format=export', {
    raw: body as unknown as string,
    token,
    headers: { 'content-type': 'application/zip' },
  });
  expect(res.status).toBe(202);
  return until(async () => {
    const job = await http.get(`/api/v1/imports/${res.body.id}`, { token });
    return ['succeeded', 'failed'].includes(job.body.state)
      ? (job.body as { state: string; counts: Record<string, number>; errors: { message: string }[] })
      : null;
  }, 'the import');
}

describe('exports', () => {
  it('exports notes, vault, hubs and voices as a zip in the contract layout, whole and by Range', async () => {
    const user = await createUserAndLogin(server.url, admin, 'exporter');
    const other = await createUserAndLogin(server.url, admin, 'exporter-other');
    const t = user.token;
    const folder = await http.graphql('mutation { createNoteFolder(name: "Été 2024") { id } }', {}, t);
    const folderId = folder.body.data.createNoteFolder.id;
    const note = await http.post(
      '/api/v1/notes',
      {
        title: 'Crème brûlée / recette',
        body: 'Sucre, œufs, crème.\n\n#dessert',
        folder_id: folderId,
        tags: ['cuisine'],
      },
      { token: t },
    );
    expect(note.status).toBe(202);
    expect((await http.post('/api/v1/vault/items', { url: 'https://example.org/article' }, { token: t })).status).toBe(
      202,
    );
    const pdf = Buffer.from('%PDF-1.4\n%%EOF\n');
    const file = await http.post(
      '/api/v1/vault/items',
      { file: { name: 'spec sheet.pdf', content_base64: pdf.toString('base64') } },
      { token: t },
    );
    expect(file.status).toBe(202);
    expect((await http.post('/api/v1/hubs', { name: 'Ideas' }, { token: t })).status).toBe(202);

    const [a, b] = await Promise.all([
      http.post('/api/v1/exports', {}, { token: t }),
      http.post('/api/v1/exports', { include: ['notes', 'vault', 'hubs', 'voices'] }, { token: t }),
    ]);
    expect([a.status, b.status].sort()).toEqual([202, 409]);
    const started = a.status === 202 ? a : b;
    const id = started.body.id as string;
    expect(started.headers.get('location')).toBe(`/api/v1/exports/${id}`);

    const job = await until(async () => {
      const res = await http.get(`/api/v1/exports/${id}`, { token: t });
      expect(res.status).toBe(200);
      return ['succeeded', 'failed'].includes(res.body.state) ? res.body : null;
    }, 'the export');
    expect(job).toMatchObject({ state: 'succeeded', errors: [] });
    expect((await http.get(`/api/v1/exports/${id}`, { token: other.token })).status).toBe(404);
    expect((await download(id, other.token)).status).toBe(404);

    const whole = await download(id, t);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('application/zip');
    expect(whole.headers.get('content-disposition')).toMatch(/attachment/);
    const files = await unzip(whole.body);
    const md = files.get('notes/Été 2024/Crème brûlée _ recette.md')?.toString('utf8');
    expect(md).toMatch(/^---\n/);
    expect(md).toContain('title: Crème brûlée / recette');
    expect(md).toContain('pinned: false');
    expect(md!.endsWith('---\nSucre, œufs, crème.\n\n#dessert')).toBe(true);
    expect(files.get('vault/bookmarks.html')?.toString()).toContain('HREF="https://example.org/article"');
    const items = JSON.parse(files.get('vault/items.json')!.toString()) as { id: string; kind: string }[];
    expect(items.map((i) => i.kind).sort()).toEqual(['file', 'link']);
    const fileItem = items.find((i) => i.kind === 'file')!;
    expect(files.get(`vault/files/${fileItem.id}-spec sheet.pdf`)).toEqual(pdf);
    expect(JSON.parse(files.get('hubs/Ideas.canvas')!.toString())).toMatchObject({ nodes: [], edges: [] });
    expect(JSON.parse(files.get('voices.json')!.toString())).toEqual([]);
    expect(JSON.parse(files.get('manifest.json')!.toString())).toMatchObject({
      format_version: 1,
      counts: { notes: 1, folders: 1, vault_items: 2, files: 1, hubs: 1, voices: 0 },
    });

    const part = await download(id, t, 'bytes=10-29');
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 10-29/${whole.body.length}`);
    expect(part.body).toEqual(whole.body.subarray(10, 30));
    expect((await download(id, t, `bytes=${whole.body.length + 5}-`)).status).toBe(416);

    // The round trip: the export imported into an empty account gives back what it holds; twice: nothing new.
    const fresh = await createUserAndLogin(server.url, admin, 'exporter-roundtrip');
    const imported = await importExport(whole.body, fresh.token);
    expect(imported).toMatchObject({
      state: 'succeeded',
      counts: { notes: 1, folders: 1, vault_items: 2, hubs: 1, skipped: 0, duplicates: 0 },
    });
    const notes = await http.graphql('query { notes(first: 10) { items { id } } }', {}, fresh.token);
    const copy = await http.graphql(
      'query ($id: ID!) { note(id: $id) { title body tags folderId } noteFolders { id path } }',
      { id: notes.body.data.notes.items[0].id },
      fresh.token,
    );
    expect(copy.body.data.note).toMatchObject({
      title: 'Crème brûlée / recette',
      body: 'Sucre, œufs, crème.\n\n#dessert',
      tags: expect.arrayContaining(['cuisine', 'dessert']),
      folderId: copy.body.data.noteFolders[0].id,
    });
    expect(copy.body.data.noteFolders.map((f: { path: string }) => f.path)).toEqual(['Été 2024']);
    const vault = await http.graphql(
      'query { vaultItems(first: 10) { items { id kind url fileName } } }',
      {},
      fresh.token,
    );
    const copied = vault.body.data.vaultItems.items as { id: string; kind: string; url: string; fileName: string }[];
    expect(copied.find((i) => i.kind === 'link')?.url).toBe('https://example.org/article');
    const copiedFile = copied.find((i) => i.kind === 'file')!;
    expect(copiedFile.fileName).toBe('spec sheet.pdf');
    const bytes = await fetch(`${server.url}/api/v1/vault/items/${copiedFile.id}/content`, {
      headers: { authorization: `Bearer ${fresh.token}` },
    });
    expect(Buffer.from(await bytes.arrayBuffer())).toEqual(pdf);
    const hubs = await http.get('/api/v1/hubs', { token: fresh.token });
    expect(hubs.body.items.map((h: { name: string }) => h.name)).toEqual(['Ideas']);
    const again = await importExport(whole.body, fresh.token);
    expect(again.counts).toMatchObject({ notes: 0, folders: 0, vault_items: 0, hubs: 0, duplicates: 4 });
    // Not an export of this service (no manifest.json): the job fails, nothing written.
    const stranger = await createUserAndLogin(server.url, admin, 'exporter-stranger');
    const notOurs = await importExport(Buffer.from(whole.body), stranger.token, 'manifest.json', 'manifest.jsom');
    expect(notOurs.state).toBe('failed');
    expect(notOurs.errors.at(-1)?.message).toMatch(/manifest.json/);

    // Another may start now; DELETE removes one.
    const next = await http.post('/api/v1/exports', { include: ['voices'] }, { token: t });
    expect(next.status).toBe(202);
    expect((await request(server.url, 'DELETE', `/api/v1/exports/${id}`, { token: t })).status).toBe(202);
    expect((await http.get(`/api/v1/exports/${id}`, { token: t })).status).toBe(404);
  });

  it('round trip of every kind: texts, archived, favourite and pinned, capture times, links to files, hub nodes pointing at notes and items; the trash stays out', async () => {
    const user = await createUserAndLogin(server.url, admin, 'exporter-rich');
    const fresh = await createUserAndLogin(server.url, admin, 'exporter-rich-copy');
    const gql = async (query: string, variables: Record<string, unknown> = {}, token = user.token) => {
      const res = await http.graphql(query, variables, token);
      expect(res.body.errors).toBeUndefined();
      return res.body.data;
    };
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    const file = (
      await gql('mutation ($f: VaultFileInput!) { captureVaultItem(file: $f, tags: ["pics"]) { id } }', {
        f: { name: 'schéma ✓.png', contentBase64: png.toString('base64') },
      })
    ).captureVaultItem.id;
    const text = (
      await gql(
        'mutation { captureVaultItem(text: "Ünïcode text ✓\\nsecond line", title: "Une note ✓", tags: ["t1"], capturedAt: "2020-05-01T10:00:00.000Z") { id } }',
      )
    ).captureVaultItem.id;
    const link = (
      await gql(
        'mutation { captureVaultItem(url: "https://example.org/old", capturedAt: "2019-01-02T03:04:05.000Z", favorite: true) { id version } }',
      )
    ).captureVaultItem;
    await gql('mutation ($id: ID!, $v: Int!) { updateVaultItem(id: $id, version: $v, archived: true) { id } }', {
      id: link.id,
      v: link.version,
    });
    const body = `Voir ![schéma](/api/v1/vault/items/${file}/content)`;
    const pinned = (
      await gql('mutation ($b: String!) { createNote(title: "Épinglée ★", body: $b, pinned: true) { id } }', {
        b: body,
      })
    ).createNote.id;
    const old = (await gql('mutation { createNote(title: "Old", body: "archived body") { id version } }')).createNote;
    await gql('mutation ($id: ID!, $v: Int!) { archiveNote(id: $id, version: $v) { id } }', {
      id: old.id,
      v: old.version,
    });
    // What is in the trash is not exported.
    const gone = (await gql('mutation { createNote(title: "Trashed note", body: "x") { id version } }')).createNote;
    await gql('mutation ($id: ID!, $v: Int!) { deleteNote(id: $id, version: $v) { id } }', {
      id: gone.id,
      v: gone.version,
    });
    const goneItem = (await gql('mutation { captureVaultItem(url: "https://example.org/trashed") { id version } }'))
      .captureVaultItem;
    await gql('mutation ($id: ID!, $v: Int!) { deleteVaultItem(id: $id, version: $v) { id } }', {
      id: goneItem.id,
      v: goneItem.version,
    });
    const goneHub = (await gql('mutation { createHub(name: "Trashed hub") { id version } }')).createHub;
    await gql('mutation ($id: ID!, $v: Int!) { deleteHub(id: $id, version: $v) { id } }', {
      id: goneHub.id,
      v: goneHub.version,
    });

    const hub = (await gql('mutation { createHub(name: "Carte ✓") { id } }')).createHub.id;
    const node = (vars: Record<string, unknown>) =>
      http.graphql(
        'mutation ($h: ID!, $type: String!, $x: Int!, $text: String, $refId: ID) { addHubNode(hubId: $h, type: $type, x: $x, y: 0, width: 200, height: 100, text: $text, refId: $refId) { id } }',
        { h: hub, ...vars },
        user.token,
      );
    const center = (await node({ type: 'text', x: 0, text: 'centre' })).body.data.addHubNode.id;
    // A note or item becomes referable once the hubs heard of it (within 2 s).
    const refNode = (vars: Record<string, unknown>) =>
      until(async () => (await node(vars)).body.data?.addHubNode?.id as string | undefined, 'a ref node');
    const noteNode = await refNode({ type: 'note', x: 300, refId: pinned });
    const itemNode = await refNode({ type: 'vault_item', x: 600, refId: text });
    const edge =
      'mutation ($h: ID!, $f: ID!, $t: ID!, $l: String) { addHubEdge(hubId: $h, fromNode: $f, toNode: $t, label: $l) { id } }';
    await gql(edge, { h: hub, f: center, t: noteNode, l: 'à propos' });
    await gql(edge, { h: hub, f: noteNode, t: itemNode });

    const started = await http.post('/api/v1/exports', {}, { token: user.token });
    expect(started.status).toBe(202);
    await until(
      async () =>
        ['succeeded', 'failed'].includes(
          (await http.get(`/api/v1/exports/${started.body.id}`, { token: user.token })).body.state,
        ),
      'the export',
    );
    const zip = (await download(started.body.id, user.token)).body;
    const files = await unzip(zip);
    const names = [...files.keys()];
    expect(names.filter((n) => n.startsWith('notes/')).sort()).toEqual(['notes/Old.md', 'notes/Épinglée ★.md']);
    expect(names.filter((n) => n.startsWith('hubs/'))).toEqual(['hubs/Carte ✓.canvas']);
    const items = JSON.parse(files.get('vault/items.json')!.toString()) as {
      kind: string;
      url: string;
      text?: string;
    }[];
    expect(items.map((i) => i.kind).sort()).toEqual(['file', 'link', 'text']);
    expect(items.find((i) => i.kind === 'text')?.text).toBe('Ünïcode text ✓\nsecond line');
    const canvas = JSON.parse(files.get('hubs/Carte ✓.canvas')!.toString()) as { nodes: { ref?: unknown }[] };
    expect(canvas.nodes.map((n) => n.ref).filter(Boolean)).toEqual([
      { type: 'note', id: pinned },
      { type: 'vault_item', id: text },
    ]);

    const imported = await importExport(zip, fresh.token);
    expect(imported).toMatchObject({
      state: 'succeeded',
      counts: { notes: 2, folders: 0, vault_items: 3, hubs: 1, skipped: 0, duplicates: 0 },
      errors: [],
    });
    const copy = async (query: string, variables: Record<string, unknown> = {}) => gql(query, variables, fresh.token);
    const vault = (
      await copy(
        'query { vaultItems(first: 10, archived: "all") { items { id kind url title fileName tags { name } favorite archived capturedAt } } }',
      )
    ).vaultItems.items as Record<string, unknown>[];
    expect(vault.find((i) => i.kind === 'link')).toMatchObject({
      url: 'https://example.org/old',
      favorite: true,
      archived: true,
      capturedAt: '2019-01-02T03:04:05.000Z',
    });
    const newText = vault.find((i) => i.kind === 'text')!;
    expect(newText).toMatchObject({
      title: 'Une note ✓',
      capturedAt: '2020-05-01T10:00:00.000Z',
      tags: [{ name: 't1' }],
    });
    expect((await copy('query ($id: ID!) { vaultItem(id: $id) { text } }', { id: newText.id })).vaultItem.text).toBe(
      'Ünïcode text ✓\nsecond line',
    );
    const newFile = vault.find((i) => i.kind === 'file')!;
    expect(newFile).toMatchObject({ fileName: 'schéma ✓.png', tags: [{ name: 'pics' }] });

    const notes = (await copy('query { notes(first: 10, archived: "all") { items { id title pinned archived } } }'))
      .notes.items as { id: string; title: string; pinned: boolean; archived: boolean }[];
    expect(notes.map((n) => [n.title, n.pinned, n.archived]).sort()).toEqual([
      ['Old', false, true],
      ['Épinglée ★', true, false],
    ]);
    const newPinned = notes.find((n) => n.title === 'Épinglée ★')!.id;
    // The link to the file points at the new item.
    expect((await copy('query ($id: ID!) { note(id: $id) { body } }', { id: newPinned })).note.body).toBe(
      `Voir ![schéma](/api/v1/vault/items/${newFile.id as string}/content)`,
    );

    // The hub's nodes point at the new note and item, with their edges.
    const hubs = (await copy('query { hubs(first: 5) { items { id name graph } } }')).hubs.items as {
      name: string;
      graph: {
        nodes: { id: string; type: string; refId: string | null; x: number; text: string | null }[];
        edges: { fromNode: string; toNode: string; label: string | null }[];
      };
    }[];
    expect(hubs.map((h) => h.name)).toEqual(['Carte ✓']);
    const { nodes, edges } = hubs[0].graph;
    const at = (x: number) => nodes.find((n) => n.x === x)!;
    expect(nodes.map((n) => [n.x, n.type, n.refId]).sort()).toEqual([
      [0, 'text', null],
      [300, 'note', newPinned],
      [600, 'vault_item', newText.id],
    ]);
    expect(edges.map((e) => [e.fromNode, e.toNode, e.label]).sort()).toEqual(
      [
        [at(0).id, at(300).id, 'à propos'],
        [at(300).id, at(600).id, null],
      ].sort(),
    );

    const again = await importExport(zip, fresh.token);
    expect(again.counts).toMatchObject({ notes: 0, vault_items: 0, hubs: 0, skipped: 0, duplicates: 6 });
  });
});
