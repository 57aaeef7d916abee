// `npm run compose`: the built CLI writes the supergraph, and refuses a schema that does not compose.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TEST_DB } from '../helpers/server';

const CLI = path.join(__dirname, '../../dist/bin/compose.js');
// Composition reads no database: one pass is enough.
const once = TEST_DB === 'sqlite' ? describe : describe.skip;

function compose(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [CLI, ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
  });
}

once('npm run compose', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'compose-test-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('writes the supergraph SDL with every subgraph of the build', () => {
    const out = path.join(dir, 'supergraph.graphql');
    const res = compose([], { SUPERGRAPH_PATH: out });
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    const sdl = fs.readFileSync(out, 'utf8');
    expect(sdl).toMatch(/enum join__Graph/);
    expect(sdl).toMatch(/AUTH @join__graph\(name: "auth"/);
    expect(sdl).toMatch(/type Session/);
  });

  it('composes a compatible partner subgraph given as an SDL file', () => {
    const partner = path.join(dir, 'reviews.graphql');
    fs.writeFileSync(
      partner,
      `extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
      type User @key(fields: "id", resolvable: false) { id: ID! }
      type Review { id: ID! author: User! stars: Int! }
      type Query { reviews: [Review!]! }`,
    );
    const res = compose(['--check', '--with', `reviews=${partner}`]);
    expect(res.status).toBe(0);
    expect(res.stdout).toMatch(/compose/);
  });

  it('fails on a conflicting field type, naming both subgraphs and the field', () => {
    const partner = path.join(dir, 'karma.graphql');
    fs.writeFileSync(
      partner,
      `extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
      type User @key(fields: "id") { id: ID! username: Int karma: Int }
      type Query { topUsers: [User!]! }`,
    );
    const res = compose(['--check', '--with', `karma=${partner}`]);
    expect(res.status).toBe(1);
    expect(res.stderr).toMatch(/do not compose/);
    expect(res.stderr).toMatch(/User\.username/);
    expect(res.stderr).toMatch(/"auth"/);
    expect(res.stderr).toMatch(/"karma"/);
  });
});
