// Distributed mode in one jest process: subgraph, gateway and facade each on their own HTTP
// port, talking HTTP to each other as separate processes would.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { startFacadeServer } from '../../bin/facade';
import { startGatewayServer } from '../../bin/gateway';
import { startSubgraphServer } from '../../bin/subgraph';
import { buildSubgraphSdls } from '../../bin/compose';
import { composeSupergraph } from '../../gateway/compose';
import { loadConfig } from '../../lib/config';
import { metricsText } from '../../lib/metrics';
import { api, request } from '../helpers/http';
import { until } from '../helpers/wait';
import { ADMIN, cleanupDatabases, isolatedEnv } from '../helpers/server';

const isolated = isolatedEnv();
const env: Record<string, string> = {
  ...isolated,
  HOST: '127.0.0.1',
  PORT: '0',
  LOG_LEVEL: 'silent',
  AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
  AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
  // The test client sets X-Forwarded-For at the facade, over loopback (TRUST_PROXY trusts no one by default).
  TRUST_PROXY: 'loopback',
  // The client address crosses the hops only with the hop secret (lib/hop.ts).
  SUBGRAPH_SECRET: 'a-hop-secret-of-at-least-thirty-two-characters',
};
const config = (extra: Record<string, string> = {}) => loadConfig({ ...env, ...extra });

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let services: { close(): Promise<void> }[] = [];
let facadeUrl: string;
let gatewayUrl: string;
let subgraphUrl: string;
let supergraphFile: string;

beforeAll(async () => {
  const auth = await startSubgraphServer(config(), 'auth');
  subgraphUrl = `${auth.url}/graphql`;
  supergraphFile = path.join(isolated.DATA_DIR, 'supergraph.graphql');
  fs.writeFileSync(supergraphFile, composeSupergraph(await buildSubgraphSdls(['auth'])));
  const gateway = await startGatewayServer(
    config({ SUBGRAPH_URLS: `auth=${subgraphUrl}`, SUPERGRAPH_PATH: supergraphFile }),
  );
  gatewayUrl = gateway.url;
  // The first gateway address refuses connections: the facade must go on to the next.
  const facade = await startFacadeServer(
    config({ GATEWAY_URL: `http://127.0.0.1:${await closedPort()},${gateway.url}` }),
  );
  facadeUrl = facade.url;
  services = [facade, gateway, auth];
}, 60_000);

afterAll(async () => {
  for (const s of services) await s.close();
  await cleanupDatabases(config());
}, 30_000);

describe('distributed mode over HTTP', () => {
  it('login and session through facade → gateway → subgraph, with readiness of every hop', async () => {
    const http = api(facadeUrl);
    const login = await http.post('/api/v1/auth/login', ADMIN);
    expect(login.status).toBe(202);
    for (let i = 0; i < 3; i++) {
      const session = await http.get('/api/v1/auth/session', { token: login.body.access_token });
      expect(session.status).toBe(200);
      expect(session.body.session_id).toBe(login.body.session_id);
    }
    const ready = await http.get('/health/ready');
    expect(ready.body).toEqual({
      status: 'ready',
      checks: { gateway: 'up', database: 'up', auth: 'up', events: 'up' },
    });
  });

  it('the subgraph verifies tokens itself when reached directly', async () => {
    const direct = api(subgraphUrl.replace(/\/graphql$/, ''));
    const anonymous = await direct.graphql('{ me { id } }');
    expect(anonymous.body.errors[0].extensions.code).toBe('unauthorized');
    const forged = await direct.graphql('{ me { id } }', {}, 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.');
    expect(forged.body.errors[0].extensions.code).toBe('unauthorized');
  });

  it('the client address crosses every hop: rate limits count per caller, not per gateway', async () => {
    const http = api(facadeUrl);
    const attempt = (ip: string) =>
      http.post(
        '/api/v1/auth/login',
        { username: ADMIN.username, password: 'wrong password' },
        { headers: { 'x-forwarded-for': ip } },
      );
    for (let i = 0; i < 5; i++) expect((await attempt('203.0.113.7')).status).toBe(401);
    expect((await attempt('203.0.113.7')).status).toBe(429);
    expect((await attempt('203.0.113.8')).status).toBe(401);
  });

  it('the gateway reloads the supergraph file when it changes, and keeps the old one when the new is broken', async () => {
    const gql = api(gatewayUrl);
    const description = async () =>
      (await gql.graphql('{ __type(name: "Query") { fields { name description } } }')).body.data.__type.fields.find(
        (f: any) => f.name === 'me',
      ).description;
    const original = fs.readFileSync(supergraphFile, 'utf8');
    const before = await description();
    expect(before).toMatch(/^The calling user/);

    // Node polls a watched file once for all its listeners: ours is called on the same poll as
    // the gateway's, after it. Then the gateway has seen the broken file.
    const polled = new Promise<void>((resolve) => {
      const seen = () => {
        fs.unwatchFile(supergraphFile, seen);
        resolve();
      };
      fs.watchFile(supergraphFile, { interval: 100 }, seen);
    });
    fs.writeFileSync(supergraphFile, 'this is not a supergraph {');
    await polled;
    expect(await description()).toBe(before);

    fs.writeFileSync(supergraphFile, original.replace(before, `Reloaded: ${before}`));
    await until(async () => (await description()) === `Reloaded: ${before}`, 'the reloaded supergraph', 20_000);
  });

  it("a subgraph's /graphql: POST of JSON only, request errors 400 with their code, answers 200, operations counted", async () => {
    const base = subgraphUrl.replace(/\/graphql$/, '');
    const refused = await request(base, 'GET', '/graphql?query=%7B__typename%7D');
    expect(refused.status).toBe(405);
    expect(refused.headers.get('allow')).toBe('POST');
    expect(refused.body.errors[0].extensions.code).toBe('method_not_allowed');
    const text = await request(base, 'POST', '/graphql', {
      raw: '{ __typename }',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
    expect(text.body.errors[0].extensions.code).toBe('unsupported_media_type');
    for (const body of [
      { query: 5 },
      { query: '{ __typename }', variables: [] },
      { variables: {} },
      { query: '{ __typename }', operationName: 1 },
      [{ query: '{ __typename }' }],
    ]) {
      const malformed = await request(base, 'POST', '/graphql', { body });
      expect(malformed.status).toBe(400);
      expect(malformed.body.errors[0].extensions.code).toBe('validation_error');
    }
    expect(
      (await request(base, 'POST', '/graphql', { body: [{ query: '{ __typename }' }] })).body.errors[0].message,
    ).toMatch(/batched/);
    // Bodies express.json refuses are GraphQL errors too, not an HTML page.
    const badJson = await request(base, 'POST', '/graphql', {
      raw: '{"query": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(badJson.status).toBe(400);
    expect(badJson.body.errors[0].extensions.code).toBe('validation_error');
    const huge = await request(base, 'POST', '/graphql', {
      body: { query: `{ __typename } # ${'x'.repeat(300 * 1024)}` },
    });
    expect(huge.status).toBe(413);
    expect(huge.body.errors[0].extensions.code).toBe('payload_too_large');
    // Nesting deep enough to exhaust the parser's stack: refused, and the process goes on.
    const deep = await request(base, 'POST', '/graphql', {
      body: { query: `${'{ a '.repeat(20_000)}${'}'.repeat(20_000)}` },
    });
    expect(deep.status).toBe(400);
    expect(deep.body.errors[0].extensions.code).toBe('validation_error');
    const subscription = await request(base, 'POST', '/graphql', { body: { query: 'subscription { x }' } });
    expect(subscription.status).toBe(400);
    const quotedCharset = await request(base, 'POST', '/graphql', {
      raw: JSON.stringify({ query: '{ __typename }' }),
      headers: { 'content-type': 'application/json; charset="utf-8"' },
    });
    expect(quotedCharset.status).toBe(200);
    expect(quotedCharset.headers.get('cache-control')).toBe('no-store');
    const invalid = await request(base, 'POST', '/graphql', { body: { query: '{ noSuchField }' } });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({
      errors: [
        expect.objectContaining({
          message: expect.stringContaining('noSuchField'),
          extensions: { code: 'validation_error' },
        }),
      ],
    });
    const unknownOperation = await request(base, 'POST', '/graphql', {
      body: { query: 'query A { __typename }', operationName: 'B' },
    });
    expect(unknownOperation.status).toBe(400);
    // An execution error is an answer: 200, with data.
    const anonymous = await request(base, 'POST', '/graphql', { body: { query: 'query SubgraphProbe { me { id } }' } });
    expect(anonymous.status).toBe(200);
    expect(anonymous.body).toEqual({
      data: null,
      errors: [expect.objectContaining({ path: ['me'], extensions: { code: 'unauthorized' } })],
    });
    const ok = await request(base, 'POST', '/graphql', { body: { query: 'query SubgraphProbe { _service { sdl } }' } });
    expect(ok.status).toBe(200);
    expect(ok.body.data._service.sdl).toContain('currentSession');
    const metrics = (await metricsText()).body;
    expect(metrics).toMatch(/graphql_operations_total\{operation="SubgraphProbe",type="query",outcome="ok"\} [1-9]/);
    expect(metrics).toMatch(
      /graphql_operations_total\{operation="SubgraphProbe",type="query",outcome="unauthorized"\} [1-9]/,
    );
    // Labels name operations that ran, not what a request claimed.
    expect(metrics).not.toContain('operation="B"');
  });

  it('a subgraph refuses introspection when GRAPHQL_INTROSPECTION is off, as the gateway does', async () => {
    const query = '{ __schema { queryType { name } } }';
    expect((await api(subgraphUrl.replace(/\/graphql$/, '')).graphql(query)).body.data.__schema.queryType.name).toBe(
      'Query',
    );
    const closed = await startSubgraphServer(config({ GRAPHQL_INTROSPECTION: 'false' }), 'auth');
    try {
      const refused = await api(closed.url).graphql(query);
      expect(refused.status).toBe(400);
      expect(refused.body.errors[0]).toMatchObject({
        message: expect.stringContaining('introspection'),
        extensions: { code: 'validation_error' },
      });
      const typo = await api(closed.url).graphql('{ currentSesion { id } }');
      expect(typo.body.errors[0].message).toContain('currentSesion');
      expect(typo.body.errors[0].message).not.toMatch(/Did you mean/);
      expect(
        (await api(subgraphUrl.replace(/\/graphql$/, '')).graphql('{ currentSesion { id } }')).body.errors[0].message,
      ).toMatch(/Did you mean/);
      // What gateways ask for composition is not introspection.
      expect((await api(closed.url).graphql('{ _service { sdl } }')).status).toBe(200);
    } finally {
      await closed.close();
    }
  });

  it("a subgraph answer that is no GraphQL answer (a proxy's 502 page, a connection cut mid-answer, kept alive or not) is an error of the operation: service_unavailable, not a failure of the gateway", async () => {
    const upstreams: http.RequestListener[] = [
      (_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>'),
      (req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' }).write('{"data":');
        setImmediate(() => req.socket.destroy());
      },
      // The same on a connection the server said it would close.
      (req, res) => {
        res
          .writeHead(200, { 'content-type': 'application/json', 'content-length': '100', connection: 'close' })
          .write('{"data":');
        setImmediate(() => req.socket.destroy());
      },
    ];
    for (const upstream of upstreams) {
      const proxy = http.createServer(upstream);
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      const file = path.join(isolated.DATA_DIR, 'supergraph-behind-proxy.graphql');
      fs.writeFileSync(file, fs.readFileSync(supergraphFile, 'utf8'));
      const gateway = await startGatewayServer(
        config({
          SUBGRAPH_URLS: `auth=http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}/graphql`,
          SUPERGRAPH_PATH: file,
        }),
      );
      try {
        const res = await api(gateway.url).graphql('{ currentSession { id } }');
        expect(res.status).toBeLessThan(500);
        expect(res.body.data?.currentSession ?? null).toBeNull();
        expect(res.body.errors[0].extensions.code).toBe('service_unavailable');
      } finally {
        await gateway.close();
        proxy.closeAllConnections();
        await new Promise((resolve) => proxy.close(resolve));
      }
    }
  });

  it("the gateway's readiness is 503 naming a subgraph that is down, and so is the facade's", async () => {
    const auth = services.pop()!; // the subgraph, started first
    await auth.close();
    const gatewayReady = await api(gatewayUrl).get('/health/ready');
    expect(gatewayReady.status).toBe(503);
    expect(gatewayReady.body).toEqual({ status: 'not_ready', checks: expect.objectContaining({ auth: 'down' }) });
    const facadeReady = await api(facadeUrl).get('/health/ready');
    expect(facadeReady.status).toBe(503);
    expect(facadeReady.body.status).toBe('not_ready');
    expect((await api(facadeUrl).get('/health/live')).status).toBe(200);
  });
});
