// The kit's expensive reads (lib/kit/expensive-reads.ts), issue 41 finding 2. On SQLite a costly
// statement runs in a read thread with its own connection, so the event loop keeps turning while
// it runs (checked as the longest gap between timer ticks against the statement's own time, and
// against the same statement on the connection, which holds the loop for all of it); the thread
// sees committed rows only, follows a database opened anew at the same path, and is stopped past
// its time limit with 503. On MySQL the expensive reads hold at most EXPENSIVE_READ_CONNECTIONS of
// the pool, so that an ordinary read finds a connection while they run.
import fs from 'node:fs';
import path from 'node:path';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../lib/config';
import { openDatabase } from '../../lib/database/open';
import { SqliteReadThreads } from '../../lib/database/read-threads';
import { AppError } from '../../lib/errors';
import { expensiveReads, ExpensiveReadSettings } from '../../lib/kit/expensive-reads';
import { cleanupDatabases, isolatedEnv, TEST_DB } from '../helpers/server';
import { until } from '../helpers/wait';

const SPEC = { name: 'expensive_reads', entities: [], migrations: [] };
const settings = (s: Partial<ExpensiveReadSettings> = {}): ExpensiveReadSettings => ({
  SQLITE_READ_THREADS: 1,
  SQLITE_READ_TIMEOUT_MS: 60_000,
  EXPENSIVE_READ_CONNECTIONS: 3,
  DATABASE_POOL_SIZE: 10,
  ...s,
});
/** A statement that runs for a while whatever the tables hold: counting to n. */
const COUNT_TO =
  'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT count(*) AS n FROM c';

const config = loadConfig({ ...isolatedEnv(), LOG_LEVEL: 'silent', DATABASE_POOL_SIZE: '4' });
const opened: DataSource[] = [];
const open = async () => {
  const ds = await openDatabase(config, SPEC);
  opened.push(ds);
  return ds;
};
afterAll(async () => {
  for (const ds of opened) if (ds.isInitialized) await ds.destroy();
  await cleanupDatabases(config);
});

/** The longest the event loop went without a timer tick while `work` ran, and how long it ran. */
async function loopGap<T>(work: () => Promise<T>): Promise<{ gap: number; ms: number; result: T }> {
  let last = performance.now();
  let gap = 0;
  const ticks = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
  }, 2);
  const t0 = performance.now();
  try {
    const result = await work();
    const ms = performance.now() - t0;
    gap = Math.max(gap, performance.now() - last);
    return { gap, ms, result };
  } finally {
    clearInterval(ticks);
  }
}

(TEST_DB === 'sqlite' ? describe : describe.skip)('SQLite: read threads', () => {
  let ds: DataSource;
  beforeAll(async () => {
    ds = await open();
    await ds.query('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  });

  it('runs a costly statement in a thread: the event loop keeps turning while it runs', async () => {
    const reads = expensiveReads(settings());
    await reads.select(ds, 'SELECT 1 AS one', [], 'u'); // the thread started
    const off = await loopGap(() => reads.select<{ n: number }>(ds, COUNT_TO, [1_000_000], 'u'));
    expect(off.result).toEqual([{ n: 1_000_000 }]);
    // On the connection (SQLITE_READ_THREADS=0, as before): the loop is held for the whole statement.
    const on = await loopGap(() =>
      expensiveReads(settings({ SQLITE_READ_THREADS: 0 })).select(ds, COUNT_TO, [1_000_000], 'u'),
    );
    expect(on.gap).toBeGreaterThan(on.ms * 0.8);
    // In its thread: ticks all along (a loaded machine's descheduling aside, well under the statement's time).
    expect(off.gap).toBeLessThan(off.ms / 2);
  });

  it('sees committed rows only, and a database opened anew at the same path', async () => {
    const reads = expensiveReads(settings());
    const count = async (on: DataSource) =>
      (await reads.select<{ n: number }>(on, 'SELECT count(*) AS n FROM t', [], 'u'))[0].n;
    await ds.query("INSERT INTO t (v) VALUES ('a')");
    expect(await count(ds)).toBe(1);
    const writer = ds.createQueryRunner();
    await writer.startTransaction();
    await writer.query("INSERT INTO t (v) VALUES ('b')");
    expect(await count(ds)).toBe(1);
    await writer.commitTransaction();
    await writer.release();
    expect(await count(ds)).toBe(2);

    // The file replaced (a test's fresh database at the same path): the thread reads the new one.
    const file = String(ds.options.database);
    await ds.destroy();
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
    ds = await open();
    expect(path.resolve(String(ds.options.database))).toBe(path.resolve(file));
    await ds.query('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
    expect(await count(ds)).toBe(0);
  });

  it('reads an in-memory database on its connection (a thread could not open it)', async () => {
    const memory = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
    await memory.initialize();
    opened.push(memory);
    const threads = jest.spyOn(SqliteReadThreads.prototype, 'select');
    try {
      expect(await expensiveReads(settings()).select(memory, 'SELECT 2 AS two', [], 'u')).toEqual([{ two: 2 }]);
      expect(threads).not.toHaveBeenCalled();
    } finally {
      threads.mockRestore();
    }
  });

  it('answers 503 with Retry-After past SQLITE_READ_TIMEOUT_MS; the thread stays busy until its statement ends', async () => {
    const reads = expensiveReads(settings({ SQLITE_READ_TIMEOUT_MS: 300 }));
    await reads.select(ds, 'SELECT 1 AS one', [], 'u'); // the thread started
    const long = reads.select(ds, COUNT_TO, [2_000_000], 'u').catch((e: unknown) => e);
    // Behind it (another user's), waiting for the one thread: late too, its wait counted.
    const behind = reads.select(ds, 'SELECT 2 AS two', [], 'v').catch((e: unknown) => e);
    for (const err of [await long, await behind]) {
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'service_unavailable', retryAfter: 1 });
    }
    // Its one thread still busy with the statement (which cannot be interrupted), then free again.
    expect(reads.counts().threads).toBe(1);
    await until(async () => reads.counts().threads === 0, 'the statement to end');
    expect(await reads.select(ds, 'SELECT 4 AS four', [], 'u')).toEqual([{ four: 4 }]);
  });
});

(TEST_DB === 'mysql' ? describe : describe.skip)('MySQL: a share of the pool', () => {
  it('lets expensive reads hold at most EXPENSIVE_READ_CONNECTIONS: an ordinary read finds a connection', async () => {
    const ds = await open(); // DATABASE_POOL_SIZE=4: 3 connections for first acquisitions, the last kept for nested ones
    const reads = expensiveReads(settings({ EXPENSIVE_READ_CONNECTIONS: 10, DATABASE_POOL_SIZE: 4 }));
    let done = 0;
    const sleeps = Array.from({ length: 4 }, (_, i) =>
      reads.select(ds, 'SELECT SLEEP(1) AS s', [], `user ${i}`).then(() => done++),
    );
    await until(async () => reads.counts().connections === 2 && reads.counts().waiting === 2, 'the reads to queue');
    // At most the pool less two, whatever the setting asks: one connection is left to ordinary reads.
    expect(await ds.query('SELECT 1 AS one')).toHaveLength(1);
    expect(done).toBe(0);
    await Promise.all(sleeps);
    expect(reads.counts()).toEqual({ threads: 0, connections: 0, waiting: 0 });
  });

  it("runs one user's statements one at a time, another user's beside them", async () => {
    const ds = await open();
    const reads = expensiveReads(settings({ EXPENSIVE_READ_CONNECTIONS: 3, DATABASE_POOL_SIZE: 5 }));
    const t0 = performance.now();
    const ended: Record<string, number> = {};
    const sleep = (owner: string, name: string) =>
      reads.select(ds, 'SELECT SLEEP(1) AS s', [], owner).then(() => (ended[name] = performance.now() - t0));
    await Promise.all([sleep('a', 'a1'), sleep('a', 'a2'), sleep('b', 'b')]);
    // The second of a's waited for the first; b's ran beside a's first (1 s statements).
    expect(ended.a2 - ended.a1).toBeGreaterThan(800);
    expect(Math.abs(ended.b - ended.a1)).toBeLessThan(500);
  });
});
