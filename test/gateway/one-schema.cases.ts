// /graphql shows what /graphql/stream serves (Subscription.events, Event, eventStreamPosition),
// so that codegen tools and the explorer see one schema; and the explorer's switch.
import { loadConfig } from '../../lib/config';
import { api, login, request } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

let server: TestServer;
let noExplorer: TestServer;
let http: ReturnType<typeof api>;
let token: string;

beforeAll(async () => {
  [server, noExplorer] = await Promise.all([startTestServer(), startTestServer({ GRAPHQL_EXPLORER: 'false' })]);
  http = api(server.url);
  token = (await login(server.url, ADMIN)).access_token;
});
afterAll(() => Promise.all([server?.close(), noExplorer?.close()]));

describe('one schema at /graphql', () => {
  it('introspection shows Subscription.events, its arguments and the Event type beside the supergraph', async () => {
    const res = await http.graphql(`{
      __schema { subscriptionType { name fields { name args { name } type { ofType { name } } } } queryType { fields { name } } }
      event: __type(name: "Event") { fields { name } }
      scope: __type(name: "EventScope") { enumValues { name } }
    }`);
    expect(res.status).toBe(200);
    const { __schema: schema, event, scope } = res.body.data;
    expect(schema.subscriptionType.name).toBe('Subscription');
    const events = schema.subscriptionType.fields.find((f: any) => f.name === 'events');
    expect(events.args.map((a: any) => a.name).sort()).toEqual(['after', 'scope', 'types']);
    expect(events.type.ofType.name).toBe('Event');
    expect(event.fields.map((f: any) => f.name)).toEqual(
      expect.arrayContaining(['seq', 'type', 'resourceId', 'occurredAt', 'data']),
    );
    expect(scope.enumValues.map((v: any) => v.name)).toEqual(['own', 'all']);
    // The supergraph's own fields are still there.
    expect(schema.queryType.fields.map((f: any) => f.name)).toEqual(
      expect.arrayContaining(['me', 'voices', 'eventStreamPosition']),
    );
  });

  it('eventStreamPosition is answered at /graphql and at /graphql/stream, for a caller with a token', async () => {
    await http.post('/api/v1/tts/voices', { name: 'Positioned', base_voice: 'f1' }, { token });
    const viaGateway = await http.graphql('query Where { eventStreamPosition }', {}, token);
    expect(viaGateway.body.data.eventStreamPosition).toMatch(/^\d+$/);
    const viaStream = await fetch(`${server.url}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: '{ eventStreamPosition }' }),
    });
    expect(await viaStream.text()).toMatch(/event: next\ndata: {"data":{"eventStreamPosition":"\d+"}}/);
    const anonymous = await http.graphql('{ eventStreamPosition }');
    expect(anonymous.body.errors[0].extensions.code).toBe('unauthorized');
  });

  it('a subscription sent to /graphql, or a mix with supergraph fields, is a client error that says where to go', async () => {
    const sub = await http.graphql('subscription { events { type } }', {}, token);
    expect(sub.status).toBeGreaterThanOrEqual(400);
    expect(sub.status).toBeLessThan(500);
    expect(sub.body.errors[0]).toMatchObject({
      message: expect.stringContaining('/graphql/stream'),
      extensions: { code: 'validation_error' },
    });
    const mixed = await http.graphql('{ eventStreamPosition me { id } }', {}, token);
    expect(mixed.body.errors[0].message).toMatch(/operation of its own/);
  });
});

describe('GRAPHQL_EXPLORER', () => {
  const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
  it('serves GraphiQL to a browser at GET /graphql, and JSON to GraphQL clients', async () => {
    const page = await request(server.url, 'GET', '/graphql', { headers: html });
    expect(page.status).toBe(200);
    expect(page.text).toContain('/graphql/explorer/graphiql.js');
    expect(page.text).not.toMatch(/https?:\/\//);
    const viaGet = await request(server.url, 'GET', `/graphql?query=${encodeURIComponent('{ __typename }')}`, {
      headers: { accept: 'application/json', 'apollo-require-preflight': 'true' },
    });
    expect(viaGet.body).toEqual({ data: { __typename: 'Query' } });
  });

  it('off: no page and no explorer files; off by default in production', async () => {
    const page = await request(noExplorer.url, 'GET', '/graphql', { headers: html });
    expect(page.text).not.toContain('graphiql');
    const asset = await request(noExplorer.url, 'GET', '/graphql/explorer/graphiql.js');
    expect(asset.status).toBeGreaterThanOrEqual(400);
    expect(asset.headers.get('content-type')).not.toMatch(/javascript/);
    expect(loadConfig({ NODE_ENV: 'production' }).graphqlExplorer).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', GRAPHQL_EXPLORER: 'true' }).graphqlExplorer).toBe(true);
    expect(loadConfig({}).graphqlExplorer).toBe(true);
  });
});
