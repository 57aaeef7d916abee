// The distributed layout as real processes on one MySQL: the subgraphs, two gateways and two
// facades. Requests alternate between the facades; one gateway and one facade are killed
// mid-run; the rest keep answering and nothing that was acknowledged is lost.
import crypto from 'node:crypto';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { api, login } from '../helpers/http';
import { startProcess, ServiceProcess } from '../../bench/processes';
import { ADMIN, cleanupDatabases, isolatedEnv, TEST_DB } from '../helpers/server';
import { loadConfig } from '../../lib/config';

// Several processes share one database only on MySQL; SQLite is the one-process default.
const onMysql = TEST_DB === 'mysql' ? describe : describe.skip;

onMysql('distributed mode as separate processes', () => {
  // Many logins from one address: lift the per-address limit, which has its own tests.
  const env = { ...isolatedEnv(), LOG_LEVEL: 'info', AUTH_BOOTSTRAP_USERNAME: ADMIN.username, AUTH_BOOTSTRAP_PASSWORD: ADMIN.password, LOGIN_MAX_ATTEMPTS_PER_CLIENT: '100000' };
  const supergraph = path.join(env.DATA_DIR, 'supergraph.graphql');
  const all: ServiceProcess[] = [];
  let subgraphs: ServiceProcess[];
  let gateways: ServiceProcess[];
  let facades: ServiceProcess[];

  beforeAll(async () => {
    const composed = spawnSync(process.execPath, [path.join(__dirname, '../../dist/bin/compose.js')], { env: { ...process.env, ...env, SUPERGRAPH_PATH: supergraph }, encoding: 'utf8' });
    if (composed.status !== 0) throw new Error(composed.stderr);
    const names = ['auth'];
    subgraphs = [];
    for (const name of names) subgraphs.push(await startProcess(`subgraph ${name}`, 'subgraph.js', [name], env));
    all.push(...subgraphs);
    const subgraphUrls = names.map((name, i) => `${name}=${subgraphs[i].url}/graphql`).join(',');
    gateways = await Promise.all([1, 2].map((i) => startProcess(`gateway ${i}`, 'gateway.js', [], { ...env, SUBGRAPH_URLS: subgraphUrls, SUPERGRAPH_PATH: supergraph })));
    all.push(...gateways);
    // Each facade prefers a different gateway and falls back on the other.
    facades = await Promise.all([
      startProcess('facade 1', 'facade.js', [], { ...env, GATEWAY_URL: `${gateways[0].url},${gateways[1].url}` }),
      startProcess('facade 2', 'facade.js', [], { ...env, GATEWAY_URL: `${gateways[1].url},${gateways[0].url}` }),
    ]);
    all.push(...facades);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(all.map((p) => p.kill()));
    await cleanupDatabases(loadConfig(env));
  }, 60_000);

  it('serves the flow through either facade, survives losing a gateway and a facade, and loses nothing acknowledged', async () => {
    const via = (i: number) => api(facades[i % facades.length].url);
    const tokens = await login(facades[0].url, ADMIN);

    // One request id through every hop.
    const requestId = `e2e-${crypto.randomUUID()}`;
    const traced = await via(1).get('/api/v1/auth/session', { token: tokens.access_token, headers: { 'x-request-id': requestId } });
    expect(traced.status).toBe(200);
    expect(traced.headers.get('x-request-id')).toBe(requestId);
    await new Promise((r) => setTimeout(r, 200)); // let the log lines arrive
    const logged = (p: ServiceProcess) => p.logs.some((l) => JSON.stringify(l).includes(requestId));
    expect(logged(facades[1])).toBe(true);
    expect(gateways.some(logged)).toBe(true);
    expect(subgraphs.some(logged)).toBe(true);

    // Sessions created alternately through both facades, each read back through the other.
    const acknowledged: string[] = [];
    const run = async (rounds: number, facadeCount: number) => {
      for (let i = 0; i < rounds; i++) {
        const facade = i % facadeCount;
        const res = await via(facade).post('/api/v1/auth/login', ADMIN);
        expect(res.status).toBe(202); // no 5xx, also across the kill
        acknowledged.push(res.body.session_id);
        const read = await via(facade + 1).get(`/api/v1/auth/session/${res.body.session_id}`, { token: res.body.access_token });
        expect(read.status).toBe(200);
      }
    };
    await run(6, 2);

    // Traffic through both facades while gateway 1 and facade 1 die without warning. A
    // request caught in a dying process may fail (it was never acknowledged); none may 500.
    let stop = false;
    const statuses: number[] = [];
    const traffic = [0, 1].map(async (facade) => {
      const target = facades[facade].url;
      while (!stop) {
        const res = await api(target).post('/api/v1/auth/login', ADMIN).catch(() => null);
        if (!res) {
          if (facade === 0) return; // its process is gone
          continue;
        }
        statuses.push(res.status);
        if (res.status === 202) acknowledged.push(res.body.session_id);
      }
    });
    await new Promise((r) => setTimeout(r, 500));
    await Promise.all([gateways[0].kill('SIGKILL'), facades[0].kill('SIGKILL')]);
    await new Promise((r) => setTimeout(r, 1000));
    stop = true;
    await Promise.all(traffic);
    expect(statuses.filter((s) => s !== 202 && s !== 503)).toEqual([]);
    expect(statuses.filter((s) => s === 202).length).toBeGreaterThan(5);

    // Facade 2 falls back on gateway 2 for good.
    facades = [facades[1]];
    await run(6, 1);

    // Everything acknowledged is there.
    for (const id of acknowledged) {
      const res = await via(0).get(`/api/v1/auth/session/${id}`, { token: tokens.access_token });
      expect(res.status).toBe(200);
    }
    expect((await via(0).get('/health/ready')).status).toBe(200);
  }, 120_000);
});
