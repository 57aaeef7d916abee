// The documents' recipes, run as written (issue 42 item 4): the README's quick start (one
// process, SQLite) and docs/operations.md's distributed mode (every subgraph, a worker, a gateway
// and a facade on MySQL). A recipe that stops working fails here. The only changes made to a
// block are listed in `adapt`: the project is already built, ports and the database prefix are
// this run's own, and npm runs this checkout from a scratch folder that takes the recipe's files.
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { loadConfig } from '../../lib/config';
import { natsServers } from '../../lib/event-backends';
import { api, login } from '../helpers/http';
import { freePort } from '../helpers/processes';
import { cleanupDatabases, isolatedEnv, TEST_DB } from '../helpers/server';
import { until } from '../helpers/wait';

const ROOT = path.join(__dirname, '../..');

/** The first ```sh block after `marker` in a document of the repository. */
export function shellBlock(document: string, marker: string): string {
  const text = fs.readFileSync(path.join(ROOT, document), 'utf8');
  const from = text.indexOf(marker);
  if (from < 0) throw new Error(`${document} has no "${marker}"`);
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(from));
  if (!block) throw new Error(`${document} has no sh block after "${marker}"`);
  return block[1];
}

/** Each change made to a recipe, applied in turn; a change that finds nothing to change is an error. */
function adapt(script: string, changes: [RegExp | string, string][]): string {
  return changes.reduce((s, [from, to]) => {
    const changed = typeof from === 'string' ? s.split(from).join(to) : s.replace(from, to);
    if (changed === s) throw new Error(`the recipe no longer has ${String(from)}`);
    return changed;
  }, script);
}

/** The recipe's ports, each replaced by a free one. */
async function portChanges(ports: number[]): Promise<[RegExp, string][]> {
  return Promise.all(
    ports.map(async (p) => [new RegExp(`\\b${p}\\b`, 'g'), String(await freePort())] as [RegExp, string]),
  );
}

interface RunningRecipe {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  /** Ends the recipe's shell and every process it started. */
  stop(): void;
}

function runRecipe(script: string, cwd: string, env: Record<string, string>): RunningRecipe {
  const { NODE_ENV: _jest, ...inherited } = process.env;
  // bash -e: a failing command ends the recipe, as it would stop a person following it.
  const child = spawn('bash', ['-e', '-c', script], {
    cwd,
    env: { ...inherited, ...env },
    detached: true, // its own process group: stop() reaches every job it started
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // Its processes are a group of their own: they would outlive a worker that ends before afterAll.
  const stopGroup = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* already gone */
    }
  };
  process.once('exit', stopGroup);
  return {
    child,
    output: () => output,
    exited,
    stop() {
      child.stdout.destroy();
      child.stderr.destroy();
      process.off('exit', stopGroup);
      stopGroup();
    },
  };
}

/** The exit code, or 'timed out' (the timer does not hold jest's worker open). */
const within = (exited: Promise<number | null>, ms: number) =>
  Promise.race([exited, new Promise((r) => setTimeout(() => r('timed out'), ms).unref())]);

const npmHere = (script: string) => script.replace(/\bnpm (start|run)\b/g, `npm --prefix "${ROOT}" $1`);

(TEST_DB === 'sqlite' ? describe : describe.skip)("the README's quick start", () => {
  const env = isolatedEnv();
  let recipe: RunningRecipe | undefined;
  afterAll(async () => {
    recipe?.stop();
    await cleanupDatabases(loadConfig(env));
  });

  it('runs as written: a user, a login, a session, a synthesis and its audio', async () => {
    const ports = await portChanges([8080]);
    const script = npmHere(adapt(shellBlock('README.md', 'Create the first user'), ports));
    // `npm start` listens on PORT, 8080 unless set: the recipe's curls were given this run's port.
    recipe = runRecipe(script, env.DATA_DIR, { ...env, LOG_LEVEL: 'warn', PORT: ports[0][1] });
    const code = await within(recipe.exited, 150_000);
    expect({ code, output: recipe.output() }).toMatchObject({ code: 0 });
    const audio = fs.readFileSync(path.join(env.DATA_DIR, 'hello.wav'));
    expect(audio.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(audio.length).toBeGreaterThan(10_000);
    expect(recipe.output()).toContain('"username":"alice"'); // the user added
    expect(recipe.output()).toContain('"state":"active"'); // the session read
  }, 180_000);
});

(TEST_DB === 'mysql' ? describe : describe.skip)('the distributed recipe in docs/operations.md', () => {
  const env = isolatedEnv();
  let recipe: RunningRecipe | undefined;
  let facade = '';
  let gateway = '';
  const go = path.join(env.DATA_DIR, 'go');
  afterAll(async () => {
    recipe?.stop();
    await cleanupDatabases(loadConfig(env));
  }, 60_000);

  it('starts every subgraph, the worker, the gateway and the facade as written', async () => {
    const ports = await portChanges([8080, 4000, 4001, 4002, 4003, 4004, 4005, 4006, 4007, 4008]);
    facade = `http://127.0.0.1:${ports[0][1]}`;
    gateway = `http://127.0.0.1:${ports[1][1]}`;
    const script = npmHere(
      adapt(shellBlock('docs/operations.md', '## Distributed mode'), [
        ['npm install && npm run build', ': built before the tests'],
        ['mysql://root@127.0.0.1:3306/shop', env.DATABASE_URL],
        ...ports,
        // The last line ends every process; the test holds it until it has used them.
        [/^kill \$\(jobs -p\)/m, `read -r _ < "${go}"; kill $(jobs -p); wait`],
      ]),
    );
    expect(spawnSync('mkfifo', [go]).status).toBe(0);
    recipe = runRecipe(script, env.DATA_DIR, {
      LOG_LEVEL: 'warn',
      SUPERGRAPH_PATH: path.join(env.DATA_DIR, 'sg.graphql'),
    });
    // Done when it has logged in; failed when the shell ended or a process could not start (its
    // fatal line names the cause), where the recipe's own readiness loop would wait for ever.
    await until(
      () => /access_token|failed to start/.test(recipe!.output()) || recipe!.child.exitCode !== null,
      'the recipe',
      240_000,
      200,
    );
    expect({ exit: recipe.child.exitCode, output: recipe.output() }).toMatchObject({ exit: null });
    expect(recipe.output()).not.toContain('failed to start');
  }, 270_000);

  it('serves every module through the facade, GraphQL on the gateway, rendering and enrichment on the worker', async () => {
    const password = /admin password: (\S+)/.exec(recipe!.output())![1];
    const { access_token: token } = await login(facade, { username: 'admin', password });
    const http = api(facade);
    expect((await http.get('/api/v1/auth/me', { token })).status).toBe(200);
    expect((await http.post('/api/v1/notes', { title: 'recipe', body: 'from the recipe' }, { token })).status).toBe(
      202,
    );
    expect((await http.post('/api/v1/hubs', { name: 'recipe' }, { token })).status).toBe(202);
    expect((await http.get('/api/v1/integrations/webhooks', { token })).status).toBe(200);
    // The tts and vault subgraphs leave their background work to the worker process.
    const synthesis = await http.post('/api/v1/tts/syntheses', { text: 'Hello there.', base_voice: 'f3' }, { token });
    expect(synthesis.status).toBe(202);
    const item = await http.post('/api/v1/vault/items', { text: 'Notes on the recipe.', title: 'Recipe' }, { token });
    expect(item.status).toBe(202);
    await until(
      async () => (await http.get(`/api/v1/tts/syntheses/${synthesis.body.id}`, { token })).body.state === 'succeeded',
      'the synthesis rendered by the worker',
      60_000,
      200,
    );
    await until(
      async () => (await http.get(`/api/v1/vault/items/${item.body.id}`, { token })).body.state === 'ready',
      'the vault item enriched by the worker',
      60_000,
      200,
    );
    const me = await api(gateway).graphql('{ me { username } }', {}, token);
    expect(me.body).toEqual({ data: { me: { username: 'admin' } } });
  }, 150_000);

  it("ends every process with the recipe's last line", async () => {
    // Opened without blocking: a recipe that never reached its last line has no reader there.
    await until(
      () => {
        try {
          const fd = fs.openSync(go, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
          fs.writeSync(fd, 'go\n');
          fs.closeSync(fd);
          return true;
        } catch {
          return false;
        }
      },
      'the recipe at its last line',
      10_000,
      100,
    );
    const code = await within(recipe!.exited, 40_000);
    expect(code).toBe(0);
  }, 60_000);
});

/** A run of `count` free ports from a random base (a recipe that counts its ports from one). */
async function freeRun(count: number): Promise<number> {
  const free = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
  for (;;) {
    const base = 20_000 + 10 * Math.floor(Math.random() * 3_000);
    const all = await Promise.all(Array.from({ length: count }, (_, i) => free(base + i)));
    if (all.every(Boolean)) return base;
  }
}

(TEST_DB === 'mysql' ? describe : describe.skip)('the multi-host recipe in docs/operations.md', () => {
  const env = isolatedEnv();
  const NATS = process.env.NATS_TEST_URL ?? 'nats://127.0.0.1:4222';
  const stream = `R${crypto.randomBytes(6).toString('hex')}`;
  const bucket = `recipe_${crypto.randomBytes(6).toString('hex')}`;
  let recipe: RunningRecipe | undefined;
  const facades: string[] = [];
  const go = path.join(env.DATA_DIR, 'go');
  afterAll(async () => {
    recipe?.stop();
    await cleanupDatabases(loadConfig(env));
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const { Objm } = await import('@nats-io/obj');
    const nc = await connect({ servers: natsServers(NATS) });
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
    await new Objm(nc)
      .open(bucket)
      .then((b) => b.destroy())
      .catch(() => undefined);
    await nc.close();
  }, 60_000);

  it('starts two hosts of every subgraph, a worker, a gateway and a facade, each with its own folder', async () => {
    const [a, b] = [await freeRun(10), await freeRun(10)];
    facades.push(`http://127.0.0.1:${a + 9}`, `http://127.0.0.1:${b + 9}`);
    const script = npmHere(
      adapt(shellBlock('docs/operations.md', '## Multi-host'), [
        ['npm install && npm run build', ': built before the tests'],
        ['mysql://root@127.0.0.1:3306/shop', env.DATABASE_URL],
        // Another NATS server when the tests are given one.
        ...(NATS === 'nats://127.0.0.1:4222' ? [] : [[/nats:\/\/127\.0\.0\.1:4222/g, NATS] as [RegExp, string]]),
        ['EVENT_LOG_STREAM=shop_events', `EVENT_LOG_STREAM=${stream}`],
        ['/shop_files', `/${bucket}`],
        // This run's pool: the machine's MariaDB is shared by the other tests.
        ['DATABASE_POOL_SIZE=8', 'DATABASE_POOL_SIZE=2'],
        [/\b4100\b/g, String(a)],
        [/\b4200\b/g, String(b)],
        [/\b4109\b/g, String(a + 9)],
        [/\b4209\b/g, String(b + 9)],
        [/^kill \$\(jobs -p\)/m, `read -r _ < "${go}"; kill $(jobs -p); wait`],
      ]),
    );
    expect(spawnSync('mkfifo', [go]).status).toBe(0);
    recipe = runRecipe(script, env.DATA_DIR, { LOG_LEVEL: 'warn' });
    await until(
      () => /access_token|failed to start/.test(recipe!.output()) || recipe!.child.exitCode !== null,
      'the recipe',
      300_000,
      200,
    );
    expect({ exit: recipe.child.exitCode, output: recipe.output() }).toMatchObject({ exit: null });
    expect(recipe.output()).not.toContain('failed to start');
    // No shared folder: each host wrote only under its own.
    expect(fs.existsSync(path.join(env.DATA_DIR, 'a'))).toBe(true);
    expect(fs.existsSync(path.join(env.DATA_DIR, 'b'))).toBe(true);
  }, 330_000);

  it('serves a synthesis and a vault file made on one host from the other', async () => {
    const password = /admin password: (\S+)/.exec(recipe!.output())![1];
    const { access_token: token } = await login(facades[0], { username: 'admin', password });
    const [one, two] = facades.map((f) => api(f));
    expect((await two.get('/api/v1/auth/me', { token })).status).toBe(200);
    const synthesis = await one.post(
      '/api/v1/tts/syntheses',
      { text: 'Hello from host a.', base_voice: 'f3' },
      { token },
    );
    expect(synthesis.status).toBe(202);
    await until(
      async () => (await two.get(`/api/v1/tts/syntheses/${synthesis.body.id}`, { token })).body.state === 'succeeded',
      'the synthesis rendered by a worker',
      90_000,
      200,
    );
    for (const facade of facades) {
      const audio = await fetch(`${facade}/api/v1/tts/syntheses/${synthesis.body.id}/audio`, {
        headers: { authorization: `Bearer ${token}`, range: 'bytes=0-11' },
      });
      expect(audio.status).toBe(206);
      expect(Buffer.from(await audio.arrayBuffer()).toString('latin1')).toMatch(/^RIFF....WAVE$/s);
    }
    const bytes = Buffer.from(`captured on host a ${crypto.randomUUID()}`);
    const item = await one.post(
      '/api/v1/vault/items',
      { file: { name: 'a.txt', content_base64: bytes.toString('base64') } },
      { token },
    );
    expect(item.status).toBe(202);
    const content = await fetch(`${facades[1]}/api/v1/vault/items/${item.body.id}/content`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(content.status).toBe(200);
    expect(Buffer.from(await content.arrayBuffer())).toEqual(bytes);
  }, 150_000);

  it("ends every process with the recipe's last line", async () => {
    await until(
      () => {
        try {
          const fd = fs.openSync(go, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
          fs.writeSync(fd, 'go\n');
          fs.closeSync(fd);
          return true;
        } catch {
          return false;
        }
      },
      'the recipe at its last line',
      10_000,
      100,
    );
    expect(await within(recipe!.exited, 60_000)).toBe(0);
  }, 90_000);
});
