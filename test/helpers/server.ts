// Starts the one-process server on an ephemeral port, on the database this jest project
// tests (SQLite in a temporary folder, or fresh MySQL databases with a unique prefix).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, StartOptions } from '../../bin/all-in-one';
import { Config, loadConfig } from '../../lib/config';
import { dropPrefixedDatabases } from '../../lib/database/mysql-admin';
import { mysqlTestServer } from './mysql-test-url';

export const TEST_DB = (process.env.TEST_DB ?? 'sqlite') as 'sqlite' | 'mysql';
const mysqlTest = TEST_DB === 'mysql' ? mysqlTestServer('t') : { server: 'mysql://root@127.0.0.1:3306', prefix: 't' };
/** The MySQL server of the tests (MYSQL_TEST_URL without its path). */
export const MYSQL_URL = mysqlTest.server;
/** What every test database's name starts with: MYSQL_TEST_URL's path, or `t`. */
export const TEST_DATABASE_PREFIX = mysqlTest.prefix;

export const ADMIN = { username: 'admin', password: 'correct horse battery' };

export interface TestServer {
  url: string;
  config: Config;
  close(): Promise<void>;
}

/** Settings for a fresh, isolated database (and data folder): `<prefix>_<random>_<subgraph>` on MySQL. */
export function isolatedEnv(): { DATA_DIR: string; DATABASE_URL: string } {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fav-test-'));
  const prefix = `${TEST_DATABASE_PREFIX}_${crypto.randomBytes(5).toString('hex')}`;
  return {
    DATA_DIR: dataDir,
    DATABASE_URL: TEST_DB === 'mysql' ? `${MYSQL_URL}/${prefix}` : 'sqlite',
  };
}

/**
 * The test folders whose files need only auth and tts: a server opens every subgraph it runs
 * (its database, its migrations), so a test of sessions or voices does not pay for the modules
 * beside them. Every other folder (the facade's route table, the gateway, the modules' own
 * tests) runs them all; a test may still name its own `SUBGRAPHS`.
 */
const AUTH_AND_TTS_FOLDERS = new Set(['auth', 'tts', 'events', 'observability', 'browser']);

function defaultSubgraphs(): string {
  const testPath = expect.getState().testPath ?? '';
  const folder = path.relative(path.join(__dirname, '..'), testPath).split(path.sep)[0];
  return AUTH_AND_TTS_FOLDERS.has(folder) ? 'auth,tts' : '';
}

/**
 * The run's key pair (test/setup/global-setup.js), where a fresh server looks for its own: it
 * would generate one (~0.2 s of CPU) at every start. A caller that names its DATA_DIR keeps it.
 */
function withRunKeys(dataDir: string): void {
  const file = process.env.TEST_JWT_KEY_FILE;
  if (!file) return;
  fs.mkdirSync(path.join(dataDir, 'keys'), { recursive: true });
  fs.copyFileSync(file, path.join(dataDir, 'keys', 'jwt-private.pem'));
}

/**
 * Cheaper password hashes for the test servers: argon2id at 1 MiB instead of 19 (~1 ms of CPU a
 * login or new user instead of ~25). lib/config.ts accepts them only with NODE_ENV=test, so a
 * test that runs a server as production (NODE_ENV given) keeps the default.
 */
const TEST_HASH_COST = { NODE_ENV: 'test', PASSWORD_HASH_MEMORY_KIB: '1024' };

export async function startTestServer(
  env: Record<string, string> = {},
  options: StartOptions = {},
): Promise<TestServer> {
  const isolated = isolatedEnv();
  if (!env.DATA_DIR) withRunKeys(isolated.DATA_DIR);
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
    AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
    SUBGRAPHS: defaultSubgraphs(),
    ...(env.NODE_ENV === undefined ? TEST_HASH_COST : {}),
    // A run on a shared MySQL server may ask for smaller pools (docs/testing.md).
    ...(process.env.DATABASE_POOL_SIZE ? { DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE } : {}),
    ...isolated,
    ...env,
  });
  const server = await startServer(config, options);
  return {
    url: server.url,
    config,
    async close() {
      await server.close();
      await cleanupDatabases(config);
    },
  };
}

const shared = new Map<string, Promise<TestServer>>();

/**
 * A server shared by the describes of one test file that ask for the same settings: a folder's
 * small files are merged into one jest file (test/<folder>/small-files.test.ts, a describe per
 * `*.cases.ts`), and those on the default settings use one server instead of one each. The
 * handle's close() leaves it running; the merged file's afterAll calls closeSharedServers().
 * A case whose checks depend on a fresh server (counts, limits) starts its own.
 */
export function sharedTestServer(env: Record<string, string> = {}): Promise<TestServer> {
  const key = JSON.stringify(Object.entries(env).sort(([a], [b]) => a.localeCompare(b)));
  let server = shared.get(key);
  if (!server) shared.set(key, (server = startTestServer(env)));
  return server.then((s) => ({ ...s, close: async () => {} }));
}

/** Closes the servers sharedTestServer started (in the merged file's afterAll). */
export async function closeSharedServers(): Promise<void> {
  const servers = [...shared.values()];
  shared.clear();
  await Promise.all(servers.map(async (s) => (await s.catch(() => undefined))?.close()));
}

/** Drops the MySQL databases of a test's prefix, and its data folder. */
export async function cleanupDatabases(config: Config): Promise<void> {
  await dropPrefixedDatabases(config);
  fs.rmSync(config.dataDir, { recursive: true, force: true });
}
