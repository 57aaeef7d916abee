// SIGTERM with event streams open: every process ends them with a final comment within 2 s,
// then exits 0. The one-process server on both databases; the facade and the gateway of the
// distributed layout (several processes share a database only on MySQL).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DistributedLayout, startDistributed, startProcess } from '../helpers/processes';
import { loadConfig } from '../../lib/config';
import { login } from '../helpers/http';
import { ADMIN, cleanupDatabases, isolatedEnv, TEST_DB } from '../helpers/server';
import { openStream } from '../helpers/sse';

const SHUTDOWN_COMMENT = ': server shutting down\n\n';

async function streamEnd(ended: Promise<void>) {
  await ended;
  return Date.now();
}

const env = {
  ...isolatedEnv(),
  LOG_LEVEL: 'warn',
  AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
  AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
};
afterAll(() => cleanupDatabases(loadConfig(env)));

it('one process: the open /api/v1/events stream gets the final comment and ends within 2 s; exit 0', async () => {
  const server = await startProcess('all-in-one', 'all-in-one.js', [], env);
  try {
    const { access_token } = await login(server.url, ADMIN);
    const stream = await openStream(`${server.url}/api/v1/events`, { token: access_token });
    expect(stream.status).toBe(200);
    const sent = Date.now();
    const endedAt = streamEnd(stream.ended);
    await server.kill('SIGTERM');
    expect((await endedAt) - sent).toBeLessThan(2000);
    expect(stream.text().endsWith(SHUTDOWN_COMMENT)).toBe(true);
    expect(await server.exited).toBe(0);
  } finally {
    await server.kill('SIGKILL');
  }
});

(TEST_DB === 'mysql' ? describe : describe.skip)('distributed', () => {
  let layout: DistributedLayout;
  beforeAll(async () => {
    fs.mkdirSync(`${env.DATA_DIR}/distributed`, { recursive: true });
    layout = await startDistributed({ ...env, DATA_DIR: `${env.DATA_DIR}/distributed` }, { gateways: 1, facades: 1 });
  }, 120_000);
  afterAll(() => layout?.stop(), 60_000);

  it('the facade ends its bridged stream, and the gateway its /graphql/stream, with a final comment within 2 s; both exit 0', async () => {
    const [facade] = layout.facades;
    const [gateway] = layout.gateways;
    const { access_token } = await login(facade.url, ADMIN);

    const viaFacade = await openStream(`${facade.url}/api/v1/events`, { token: access_token });
    expect(viaFacade.status).toBe(200);
    const sent = Date.now();
    const facadeEnded = streamEnd(viaFacade.ended);
    await facade.kill('SIGTERM');
    expect((await facadeEnded) - sent).toBeLessThan(2000);
    expect(viaFacade.text().endsWith(SHUTDOWN_COMMENT)).toBe(true);
    expect(await facade.exited).toBe(0);

    // GraphQL over SSE (distinct connections) straight at the gateway.
    const res = await fetch(`${gateway.url}/graphql/stream`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${access_token}`,
      },
      body: JSON.stringify({ query: 'subscription { events { seq type } }' }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    let raw = '';
    const gatewayEnded = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
        raw += decoder.decode(chunk, { stream: true });
      return Date.now();
    })();
    // fetch resolved with the stream's headers: the response is open on the gateway, nothing to wait for.
    const sentToGateway = Date.now();
    await gateway.kill('SIGTERM');
    expect((await gatewayEnded) - sentToGateway).toBeLessThan(2000);
    expect(raw).toContain(SHUTDOWN_COMMENT);
    expect(await gateway.exited).toBe(0);
  }, 60_000);
});

it('a gateway refuses to start, in one line, when the supergraph names a subgraph SUBGRAPH_URLS does not give', async () => {
  const bin = path.join(__dirname, '../../dist/bin');
  const supergraph = path.join(env.DATA_DIR, 'supergraph.graphql');
  const composed = spawnSync(process.execPath, [path.join(bin, 'compose.js')], {
    // Two subgraphs composed, one given an address: the one missing is named.
    env: { ...process.env, SUPERGRAPH_PATH: supergraph, SUBGRAPHS: 'auth,tts' },
    encoding: 'utf8',
  });
  expect(composed.status).toBe(0);
  const gateway = spawnSync(process.execPath, [path.join(bin, 'gateway.js')], {
    env: {
      ...process.env,
      ...env,
      NODE_ENV: 'production',
      PORT: '0',
      HOST: '127.0.0.1',
      SUPERGRAPH_PATH: supergraph,
      SUBGRAPH_URLS: 'auth=http://127.0.0.1:9/graphql',
    },
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(gateway.status).toBe(1);
  expect(
    gateway.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).msg),
  ).toEqual([
    `failed to start: the supergraph ${supergraph} names the subgraph tts that SUBGRAPH_URLS does not give; add tts=http://…/graphql`,
  ]);
});
