// The examples subgraph through the gateway, on SQLite and on MySQL: create, read, the paged
// list, update and delete at the expected version, the events, and one user's items hidden from another.
import { api, createUserAndLogin, login, UUID } from '../../test/helpers/http';
import { ADMIN, startTestServer, TestServer } from '../../test/helpers/server';
import { openStream } from '../../test/helpers/sse';

let server: TestServer;
let http: ReturnType<typeof api>;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
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
});
