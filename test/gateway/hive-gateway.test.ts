// Partners may run any Federation 2 gateway over these subgraphs: Hive Gateway, given the same
// supergraph and the same subgraph processes, answers a cross-subgraph query exactly as the
// project's gateway does, and the subgraphs still verify the token it passes on.
// Run after `npm run build` (the processes are the built entry points). Hive Gateway is one of
// the bench tools (bench/package.json): it is loaded from bench/node_modules, installed here when
// missing (.ci/run installs it beforehand).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DistributedLayout, ServiceProcess, startDistributed, startProcess } from '../helpers/processes';
import { ensureBenchTools } from '../../bench/tools';
import { loadConfig } from '../../lib/config';
import { api } from '../helpers/http';
import { ADMIN, cleanupDatabases, isolatedEnv, TEST_DB } from '../helpers/server';

// Several processes share one database only on MySQL; SQLite is the one-process default.
const onMysql = TEST_DB === 'mysql' ? describe : describe.skip;

onMysql('Hive Gateway over the same subgraphs', () => {
  const env = {
    ...isolatedEnv(),
    LOG_LEVEL: 'silent',
    AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
    AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
    // The subgraphs run as in production: they answer only the hop secret's holders, Hive Gateway too.
    SUBGRAPH_SECRET: crypto.randomBytes(24).toString('hex'),
  };
  let layout: DistributedLayout;
  let hive: ServiceProcess;

  beforeAll(async () => {
    ensureBenchTools(); // a first install takes minutes: hence this hook's timeout
    layout = await startDistributed(env, { gateways: 1, facades: 0 });
    const urls = layout.subgraphs.map((s) => `${s.name.replace(/^subgraph /, '')}=${s.url}/graphql`).join(',');
    hive = await startProcess('hive gateway', '../bench/hive-gateway.js', [], {
      ...env,
      SUPERGRAPH_PATH: path.join(env.DATA_DIR, 'supergraph.graphql'),
      SUBGRAPH_URLS: urls,
    });
  }, 600_000);

  afterAll(async () => {
    await hive?.kill();
    await layout?.stop();
    await cleanupDatabases(loadConfig(env));
  }, 60_000);

  it('answers a query across auth and tts as the project gateway does', async () => {
    const ours = api(layout.gateways[0].url);
    const theirs = api(hive.url);
    const login = await ours.graphql(
      'mutation($u: String!, $p: String!) { login(username: $u, password: $p) { accessToken } }',
      { u: ADMIN.username, p: ADMIN.password },
    );
    const token = login.body.data.login.accessToken as string;
    const created = await theirs.graphql(
      'mutation { createVoice(name: "Hive", baseVoice: "f3") { id name } }',
      {},
      token,
    );
    expect(created.body.errors).toBeUndefined();

    // Voice (tts) → owner (auth, an entity reference) → session (auth): a plan with two subgraph fetches.
    const query = `{ voices(first: 10) { items { id name baseVoice owner { id username roles } } nextCursor }
      currentSession { id state user { username } } }`;
    const [a, b] = await Promise.all([ours.graphql(query, {}, token), theirs.graphql(query, {}, token)]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.body.errors).toBeUndefined();
    expect(a.body.data.voices.items).toEqual([
      {
        id: created.body.data.createVoice.id,
        name: 'Hive',
        baseVoice: 'f3',
        owner: { id: expect.any(String), username: ADMIN.username, roles: ['admin'] },
      },
    ]);
    expect(b.body).toEqual(a.body);
  });

  it('the subgraphs refuse what Hive Gateway passes on without a valid token', async () => {
    const theirs = api(hive.url);
    const anonymous = await theirs.graphql('{ currentSession { id } }');
    expect(anonymous.body.data).toBeNull();
    expect(anonymous.body.errors[0].extensions.code).toBe('unauthorized');
    const forged = await theirs.graphql(
      '{ voices(first: 1) { items { id } } }',
      {},
      'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
    );
    expect(forged.body.errors[0].extensions.code).toBe('unauthorized');
  });

  it('loads the published supergraph as it is, scope declarations included, and the subgraphs refuse a missing scope', async () => {
    const published = fs.readFileSync(path.join(env.DATA_DIR, 'supergraph.graphql'), 'utf8');
    expect(published).toMatch(/@requiresScopes\(scopes: \[\["admin:users"\]\]\)/);
    expect(published).toMatch(/specs\.apollo\.dev\/requiresScopes\/v0\.1", for: SECURITY/);
    const ours = api(layout.gateways[0].url);
    const theirs = api(hive.url);
    const admin = (
      await ours.graphql('mutation($u: String!, $p: String!) { login(username: $u, password: $p) { accessToken } }', {
        u: ADMIN.username,
        p: ADMIN.password,
      })
    ).body.data.login.accessToken as string;
    await ours.graphql(
      'mutation { createUser(username: "hive user", password: "a hive user password") { id } }',
      {},
      admin,
    );
    const user = (
      await ours.graphql('mutation { login(username: "hive user", password: "a hive user password") { accessToken } }')
    ).body.data.login.accessToken as string;
    const refused = await theirs.graphql('{ users { items { id } } }', {}, user);
    expect(refused.body.errors[0].extensions.code).toBe('forbidden');
  });
});
