// Canvas imports (issue 45), on SQLite and on MySQL: one JSON Canvas 1.0 file (Obsidian's
// Welcome.canvas, test/hubs/fixtures) or a zip of them, each a hub through the hubs module's own
// importHub; the same file twice creates nothing; a file that is not JSON fails the job clearly.
import fs from 'node:fs';
import path from 'node:path';
import yazl from 'yazl';
import { api, createUserAndLogin, login, request } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';

const welcome = fs.readFileSync(path.join(__dirname, '..', 'hubs', 'fixtures', 'obsidian-welcome.canvas'));

let server: TestServer;
let http: ReturnType<typeof api>;
let admin: string;

beforeAll(async () => {
  server = await startTestServer({ SUBGRAPHS: 'auth,hubs,transfer' });
  http = api(server.url);
  admin = (await login(server.url, ADMIN)).access_token;
});
afterAll(() => server.close());

async function importCanvas(body: Buffer, token: string) {
  const res = await request(server.url, 'POST', '/api/v1/imports?format=canvas', {
    raw: body as unknown as string,
    token,
    headers: { 'content-type': 'application/json' },
  });
  expect(res.status).toBe(202);
  return until(async () => {
    const job = await http.get(`/api/v1/imports/${res.body.id}`, { token });
    return ['succeeded', 'failed'].includes(job.body.state)
      ? (job.body as { state: string; counts: Record<string, number>; errors: { message: string }[] })
      : null;
  }, 'the import');
}

function zipOf(entries: [string, Buffer][]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, data] of entries) zip.addBuffer(data, name);
  zip.end();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

describe('canvas imports', () => {
  it('imports a canvas as a hub with its nodes; again: nothing new; a zip of canvases: one hub each', async () => {
    const user = await createUserAndLogin(server.url, admin, 'canvas-importer');
    const job = await importCanvas(welcome, user.token);
    expect(job).toMatchObject({ state: 'succeeded', counts: { hubs: 1, skipped: 0, duplicates: 0 } });
    const hubs = await http.get('/api/v1/hubs', { token: user.token });
    expect(hubs.body.items.map((h: { name: string }) => h.name)).toEqual(['Imported canvas']);
    const hub = await http.get(`/api/v1/hubs/${hubs.body.items[0].id}`, { token: user.token });
    const source = JSON.parse(welcome.toString()) as { nodes: unknown[] };
    expect(hub.body.nodes).toHaveLength(source.nodes.length);

    expect((await importCanvas(welcome, user.token)).counts).toMatchObject({ hubs: 0, duplicates: 1 });

    const small = Buffer.from(
      JSON.stringify({ nodes: [{ id: 'a', type: 'text', text: 'Été', x: 0, y: 0, width: 10, height: 10 }], edges: [] }),
    );
    const zipped = await importCanvas(
      await zipOf([
        ['Boards/Welcome.canvas', welcome],
        ['Boards/Petit été.canvas', small],
        ['notes.md', Buffer.from('x')],
      ]),
      user.token,
    );
    expect(zipped).toMatchObject({ state: 'succeeded', counts: { hubs: 2 } });
    const names = (await http.get('/api/v1/hubs', { token: user.token })).body.items.map(
      (h: { name: string }) => h.name,
    );
    expect(names.sort()).toEqual(['Imported canvas', 'Petit été', 'Welcome']);
  });

  it('fails a file that is not a canvas with a clear error', async () => {
    const user = await createUserAndLogin(server.url, admin, 'canvas-malformed');
    for (const body of ['{"nodes": [', '[1, 2, 3]']) {
      const job = await importCanvas(Buffer.from(body), user.token);
      expect(job.state).toBe('failed');
      expect(job.errors.at(-1)?.message).toMatch(/not a JSON Canvas document/);
    }
    // Valid JSON the hubs module refuses (a node without an id): skipped with its reason, nothing created.
    const refused = await importCanvas(Buffer.from('{"nodes":[{"type":"text","text":"x"}],"edges":[]}'), user.token);
    expect(refused.counts).toMatchObject({ hubs: 0, skipped: 1 });
    expect((await http.get('/api/v1/hubs', { token: user.token })).body.items).toEqual([]);
  });
});
