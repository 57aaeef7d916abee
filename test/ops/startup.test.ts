// Start-up: failures are one line naming the cause, exit 1, the stack only at LOG_LEVEL=debug;
// migrations are safe when processes start at once; `npm run migrate` for a separate step.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import { loadConfig } from '../../lib/config';
import { openDatabase } from '../../lib/database/open';
import { eventLogSpec } from '../../lib/event-log';
import { mysqlDatabaseName } from '../../lib/database/mysql-url';
import { selectSubgraphs } from '../../subgraphs';
import { cleanupDatabases, isolatedEnv, TEST_DB } from '../helpers/server';

const BIN = path.join(__dirname, '../../dist/bin');

/** Runs an entry point to its end: exit code and what it printed. */
function run(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(BIN, script), ...args], {
      env: { ...process.env, NODE_ENV: 'production', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A process's lines: each must be JSON (a log line); their messages. */
const entries = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { level: number; msg: string; err?: { stack?: string } });
const lines = (text: string) => entries(text).map((e) => e.msg);
/** What `npm run migrate` (a command, not a service) prints for a person. */
const textLines = (text: string) => text.split('\n').filter((l) => l.trim());

describe('start-up failures', () => {
  it('port in use: one line naming the port, exit 1', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const out = await run('facade.js', [], { GATEWAY_URL: 'http://127.0.0.1:9', PORT: String(port) });
      expect(out.code).toBe(1);
      expect(lines(out.stderr)).toEqual([
        `failed to start: port ${port} is already in use on 127.0.0.1; stop the other process or set PORT`,
      ]);
    } finally {
      taken.close();
    }
  });

  it('database unreachable: one line naming its host, exit 1; the stack only at LOG_LEVEL=debug', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve)); // nothing listens there now
    const env = { ...isolatedEnv(), DATABASE_URL: `mysql://root@127.0.0.1:${port}/nowhere` };
    const out = await run('subgraph.js', ['auth'], env);
    expect(out.code).toBe(1);
    expect(lines(out.stderr)).toEqual([`failed to start: database unreachable at 127.0.0.1:${port} (ECONNREFUSED)`]);
    const debug = await run('subgraph.js', ['auth'], { ...env, LOG_LEVEL: 'debug' });
    expect(debug.code).toBe(1);
    expect(lines(debug.stderr)[0]).toBe(`failed to start: database unreachable at 127.0.0.1:${port} (ECONNREFUSED)`);
    expect(entries(debug.stderr)[0].err?.stack).toMatch(/\n\s+at /); // with the stack
  });

  it('migration failed: one line naming the migration, exit 1', async () => {
    const env = isolatedEnv();
    const config = loadConfig(env);
    // A table in the way of the first tts migration, as a half-finished manual change would leave.
    if (TEST_DB === 'mysql') {
      const url = new URL(config.DATABASE_URL);
      const conn = await mysql.createConnection({
        host: url.hostname,
        port: Number(url.port || 3306),
        user: url.username || 'root',
      });
      const db = mysqlDatabaseName(config, 'tts');
      await conn.query('CREATE DATABASE ??', [db]);
      await conn.query('CREATE TABLE ??.voices (id INT)', [db]);
      await conn.end();
    } else {
      fs.mkdirSync(config.dataDir, { recursive: true });
      const db = new Database(path.join(config.dataDir, 'tts.sqlite'));
      db.exec('CREATE TABLE voices (id INTEGER)');
      db.close();
    }
    try {
      const out = await run('subgraph.js', ['tts'], env);
      expect(out.code).toBe(1);
      const [line, ...rest] = lines(out.stderr);
      expect(rest).toEqual([]);
      expect(line).toMatch(
        /^failed to start: migration "CreateTtsTables1733000000000" of the \w+ database failed: .*voices.*already exists/,
      );
    } finally {
      await cleanupDatabases(config);
    }
  });
});

describe('migrations', () => {
  it('npm run migrate migrates every database; servers with MIGRATIONS_RUN=false refuse an unmigrated one and start on a migrated one', async () => {
    const env = isolatedEnv();
    try {
      const refused = await run('subgraph.js', ['auth'], { ...env, MIGRATIONS_RUN: 'false' });
      expect(refused.code).toBe(1);
      expect(lines(refused.stderr)).toEqual([
        expect.stringMatching(
          /^failed to start: the (auth|events) database has migrations that have not run; run `npm run migrate` first/,
        ),
      ]);

      const migrated = await run('migrate.js', [], env);
      expect(migrated.code).toBe(0);
      // One line per database, naming every migration it ran, in order.
      const ran = textLines(migrated.stdout).map((l) => l.replace(/ \(\d+ ms\)$/, ''));
      // Every database of the build; a database's migrations run in the order of their timestamps.
      const databases = [...(await selectSubgraphs([])), eventLogSpec];
      const byTimestamp = (name: string) => Number(/(\d+)$/.exec(name)?.[1] ?? 0);
      expect(ran).toEqual(
        databases.map(
          (d) =>
            `${d.name}: ran ${d.migrations
              .map((m) => m.name)
              .sort((a, b) => byTimestamp(a) - byTimestamp(b))
              .join(', ')}`,
        ),
      );
      const again = await run('migrate.js', [], env);
      expect(textLines(again.stdout).map((l) => l.replace(/ \(.*/, ''))).toEqual(
        databases.map((d) => `${d.name}: up to date`),
      );

      // Starts (and is stopped by the test's kill of its own): the server answers once migrated.
      const child = spawn(process.execPath, [path.join(BIN, 'subgraph.js'), 'auth'], {
        env: {
          ...process.env,
          NODE_ENV: 'production',
          HOST: '127.0.0.1',
          PORT: '0',
          LOG_LEVEL: 'info',
          MIGRATIONS_RUN: 'false',
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const ready = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
          if (out.includes('subgraph ready')) resolve(out);
        });
        child.on('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      expect(ready).toContain('subgraph ready');
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    } finally {
      await cleanupDatabases(loadConfig(env));
    }
  });

  // Several processes starting at once on a fresh MySQL (SQLite is one process).
  (TEST_DB === 'mysql' ? it : it.skip)(
    'takes turns under a lock when many start at once: every one opens, each migration runs once',
    async () => {
      const config = loadConfig(isolatedEnv());
      const [tts] = await selectSubgraphs(['tts']);
      const spec = { name: 'tts', entities: tts.entities, migrations: tts.migrations };
      try {
        const ran: string[][] = [];
        const opened = await Promise.all([
          ...Array.from({ length: 6 }, () => openDatabase(config, spec, undefined, (names) => ran.push(names))),
          ...Array.from({ length: 6 }, () => openDatabase(config, eventLogSpec, undefined, (names) => ran.push(names))),
        ]);
        // Each migration ran once, in one of the processes; the others found nothing pending.
        expect(ran.flat().sort()).toEqual([...spec.migrations, ...eventLogSpec.migrations].map((m) => m.name).sort());
        const [{ n }] = await opened[0].query('SELECT COUNT(*) AS n FROM migrations');
        expect(Number(n)).toBe(spec.migrations.length);
        for (const ds of opened) await ds.destroy();
      } finally {
        await cleanupDatabases(config);
      }
    },
  );
});
