// The examples subgraph through the gateway, on SQLite and on MySQL: create, read, the paged
// list, update and delete at the expected version, the events, and one user's items hidden from another;
// a deleted user's example items removed in batches (the kit's cascade); then the same through REST
// (/api/v1/examples/example-items), each answer checked against the OpenAPI document.
import { api, createUserAndLogin, login, request, UUID } from '../../test/helpers/http';
import { OpenApiDocument, undocumented } from '../../test/helpers/openapi';
import { ADMIN, startTestServer, TestServer } from '../../test/helpers/server';
import { openStream } from '../../test/helpers/sse';

let server: TestServer;
let http: ReturnType<typeof api>;
let token: string;

beforeAll(async () => {
  // Small batches, so that a deleted user's few example items take several.
  server = await startTestServer({ JOBS_BATCH_ROWS: '2' });
  http = api(server.url);
  token = (await login(server.url, ADMIN)).access_token;
});
afterAll(() => server.close());

const FIELDS = 'id title version owner { id username }';
const CREATE = `mutation ($t: String!) { createExampleItem(title: $t) { ${FIELDS} } }`;
const UPDATE = `mutation ($id: ID!, $v: Int!, $t: String!) { updateExampleItem(id: $id, version: $v, title: $t) { ${FIELDS} } }`;
const DELETE = 'mutation ($id: ID!, $v: Int!) { deleteExampleItem(id: $id, version: $v) { id version } }';
const GET = 'query ($id: ID!) { exampleItem(id: $id) { id title version } }';
const LIST =
  'query ($first: Int, $after: String) { exampleItems(first: $first, after: $after) { items { id } nextCursor } }';

async function create(title: string, as = token): Promise<string> {
  const res = await http.graphql(CREATE, { t: title }, as);
  expect(res.body.errors).toBeUndefined();
  return res.body.data.createExampleItem.id;
}

describe('examples', () => {
  it('creates with a UUIDv7 at version 1, resolves the owner from the auth subgraph, and lists page by page', async () => {
    const user = await createUserAndLogin(server.url, token, 'examples-lister');
    const res = await http.graphql(CREATE, { t: '  first ' }, user.token);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.createExampleItem).toEqual({
      id: expect.stringMatching(UUID),
      title: 'first',
      version: 1,
      owner: { id: user.id, username: user.username },
    });
    const ids = [
      res.body.data.createExampleItem.id,
      await create('second', user.token),
      await create('third', user.token),
    ];
    expect(ids[0][14]).toBe('7');

    const page1 = (await http.graphql(LIST, { first: 2 }, user.token)).body.data.exampleItems;
    expect(page1.items.map((i: { id: string }) => i.id)).toEqual(ids.slice(0, 2));
    const page2 = (await http.graphql(LIST, { first: 2, after: page1.nextCursor }, user.token)).body.data.exampleItems;
    expect(page2).toEqual({ items: [{ id: ids[2] }], nextCursor: null });
    const bad = await http.graphql(LIST, { after: 'not-a-cursor' }, user.token);
    expect(bad.body.errors[0].extensions).toMatchObject({
      code: 'validation_error',
      details: { cursor: expect.any(Array) },
    });
  });

  it('updates and deletes only at the expected version; a stale one is conflict with currentVersion', async () => {
    const stream = await openStream(
      `${server.url}/api/v1/events?types=example_item.created,example_item.updated,example_item.deleted`,
      { token },
    );
    try {
      const id = await create('before');
      const updated = await http.graphql(UPDATE, { id, v: 1, t: 'after' }, token);
      expect(updated.body.data.updateExampleItem).toMatchObject({ id, title: 'after', version: 2 });
      for (const [query, vars] of [
        [UPDATE, { id, v: 1, t: 'stale' }],
        [DELETE, { id, v: 1 }],
      ] as const) {
        const stale = await http.graphql(query, vars, token);
        expect(stale.body.errors[0].extensions).toMatchObject({ code: 'conflict', details: { currentVersion: 2 } });
      }
      expect((await http.graphql(GET, { id }, token)).body.data.exampleItem).toEqual({
        id,
        title: 'after',
        version: 2,
      });
      expect((await http.graphql(DELETE, { id, v: 2 }, token)).body.data.deleteExampleItem).toEqual({ id, version: 2 });
      expect((await http.graphql(GET, { id }, token)).body.errors[0].extensions.code).toBe('not_found');
      expect((await http.graphql(DELETE, { id, v: 2 }, token)).body.errors[0].extensions.code).toBe('not_found');

      const frames = await stream.waitFor((f) => f.data.id === id, 3, 20_000);
      expect(frames.map((f) => [f.event, f.data.version])).toEqual([
        ['example_item.created', 1],
        ['example_item.updated', 2],
        ['example_item.deleted', 2],
      ]);
    } finally {
      stream.close();
    }
  });

  it("needs a token, validates its input, and hides one user's example items from another", async () => {
    expect((await http.graphql(CREATE, { t: 'x' })).body.errors[0].extensions.code).toBe('unauthorized');
    expect((await http.graphql(CREATE, { t: '  ' }, token)).body.errors[0].extensions.code).toBe('validation_error');
    expect((await http.graphql(GET, { id: 'not-a-uuid' }, token)).body.errors[0].extensions.code).toBe(
      'validation_error',
    );
    expect((await http.graphql(DELETE, { id: await create('kept'), v: 0 }, token)).body.errors[0].extensions.code).toBe(
      'validation_error',
    );
    const mine = await create('private');
    const other = await createUserAndLogin(server.url, token, 'examples-other');
    expect((await http.graphql(GET, { id: mine }, other.token)).body.errors[0].extensions.code).toBe('not_found');
    expect(
      (await http.graphql(UPDATE, { id: mine, v: 1, t: 'taken' }, other.token)).body.errors[0].extensions.code,
    ).toBe('not_found');
    expect((await http.graphql(LIST, {}, other.token)).body.data.exampleItems).toEqual({ items: [], nextCursor: null });
  });

  it("deletes a deleted user's example items, each with one example_item.deleted, and no one else's", async () => {
    const user = await createUserAndLogin(server.url, token, 'examples-deleted');
    const keeper = await createUserAndLogin(server.url, token, 'examples-keeper');
    const ids = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((t) => create(t, user.token)));
    const kept = await create('kept', keeper.token);
    const audit = await openStream(`${server.url}/api/v1/events?scope=all&types=example_item.deleted`, { token });
    try {
      expect((await http.delete(`/api/v1/admin/users/${user.id}?version=1`, { token })).status).toBe(202);
      const frames = await audit.waitFor((f) => ids.includes(f.data.id), ids.length, 30_000);
      expect(frames.map((f) => f.data.id).sort()).toEqual([...ids].sort());
      expect(frames.every((f) => f.data.reason === 'user_deleted')).toBe(true);
      expect((await http.graphql(GET, { id: kept }, keeper.token)).body.data.exampleItem.id).toBe(kept);
    } finally {
      audit.close();
    }
  });
});

describe('examples over REST', () => {
  const PATH = '/api/v1/examples/example-items';
  const ONE = `${PATH}/{exampleItemId}`;
  let doc: OpenApiDocument;
  beforeAll(async () => {
    doc = (await http.get('/api/v1/openapi.json')).body;
  });
  /** The answer, after checking it is one the document promises. */
  const documented = <T extends { status: number }>(method: string, template: string, res: T): T => {
    expect(undocumented(doc, method, template, res as never)).toEqual([]);
    return res;
  };
  const send = (method: string, path: string, options: Parameters<typeof request>[3] = {}) =>
    request(server.url, method, path, { token, ...options });

  it('lists every route in the document with its operationId', () => {
    const ids = (template: string) => Object.values(doc.paths[template] ?? {}).map((op: any) => op.operationId);
    expect(ids(PATH).sort()).toEqual(['createExampleItem', 'listExampleItems']);
    expect(ids(ONE).sort()).toEqual(['deleteExampleItem', 'getExampleItem', 'updateExampleItem']);
  });

  it('creates (202 + Location), gets, lists, patches at the expected version (409 when stale) and deletes', async () => {
    const created = documented('post', PATH, await send('POST', PATH, { body: { title: ' rest ' } }));
    expect(created.status).toBe(202);
    const id: string = created.body.id;
    expect(id).toMatch(UUID);
    expect(created.headers.get('location')).toBe(`${PATH}/${id}`);

    const got = documented('get', ONE, await send('GET', `${PATH}/${id}`));
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id, title: 'rest', version: 1 });
    expect(got.headers.get('etag')).toBe('"1"');

    const page = documented('get', PATH, await send('GET', `${PATH}?limit=100`));
    expect(page.status).toBe(200);
    expect(page.body.items.map((i: { id: string }) => i.id)).toContain(id);
    expect(page.body).toHaveProperty('next_cursor');
    expect(documented('get', PATH, await send('GET', `${PATH}?cursor=nonsense`)).status).toBe(400);

    const patched = documented(
      'patch',
      ONE,
      await send('PATCH', `${PATH}/${id}`, { body: { title: 'renamed' }, headers: { 'if-match': '"1"' } }),
    );
    expect(patched.status).toBe(202);
    expect(patched.headers.get('etag')).toBe('"2"');
    const stale = documented(
      'patch',
      ONE,
      await send('PATCH', `${PATH}/${id}?version=1`, { body: { title: 'stale' } }),
    );
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ error: 'conflict', details: { current_version: 2 } });
    expect(documented('patch', ONE, await send('PATCH', `${PATH}/${id}?version=2`, { body: {} })).status).toBe(400);
    expect(documented('patch', ONE, await send('PATCH', `${PATH}/${id}`, { body: { title: 'x' } })).status).toBe(400);

    expect(documented('delete', ONE, await send('DELETE', `${PATH}/${id}?version=1`)).status).toBe(409);
    const deleted = documented('delete', ONE, await send('DELETE', `${PATH}/${id}?version=2`));
    expect(deleted.status).toBe(202);
    expect(documented('get', ONE, await send('GET', `${PATH}/${id}`)).status).toBe(404);
    expect(documented('get', PATH, await send('GET', PATH, { token: undefined })).status).toBe(401);
  });
});
