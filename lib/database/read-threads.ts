// SQLite reads off the event loop: better-sqlite3 runs a statement to its end on the calling
// thread, so a search over 100,000 of a user's notes held the event loop (and every other user's
// request) for ~70 ms (issue 41 finding 2). A small pool of worker threads (the kit's timed
// threads) each opens its own read-only connection to the database file; in WAL mode they read
// beside the writer, and see what is committed when the statement starts.
//
// Each thread keeps one connection per file, opened on first use and closed after a minute idle;
// a data source opened anew on the same path (a test's fresh database) is a new generation, and
// the thread reopens the file rather than read a stale one.
import type { DataSource } from 'typeorm';
import { TimedThreadPool } from '../kit/timed-thread';
import { sqliteConnection } from './driver';

/** The thread's code, as source text: it runs outside the caller's module loader (better-sqlite3 is required by path). */
const READ_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const open = new Map();
let idle;
const closeAll = () => { for (const c of open.values()) c.db.close(); open.clear(); };
function connection(file, generation, mmapSize) {
  let c = open.get(file);
  if (c && c.generation !== generation) { c.db.close(); open.delete(file); c = undefined; }
  if (!c) {
    const db = new Database(file, { readonly: true, fileMustExist: true, timeout: workerData.busyTimeoutMs });
    db.pragma('mmap_size = ' + Number(mmapSize || 0));
    c = { generation, db, statements: new Map() };
    open.set(file, c);
  }
  return c;
}
parentPort.on('message', ({ id, file, generation, mmapSize, sql, params }) => {
  clearTimeout(idle);
  try {
    const c = connection(file, generation, mmapSize);
    let statement = c.statements.get(sql);
    if (!statement) {
      if (c.statements.size >= 64) c.statements.clear();
      c.statements.set(sql, (statement = c.db.prepare(sql)));
    }
    const values = params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p));
    parentPort.postMessage({ id, result: statement.all(...values) });
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err) });
  }
  idle = setTimeout(closeAll, workerData.idleMs);
});
parentPort.postMessage({ ready: true });
`;

/** A connection a thread keeps unused this long is closed (a deleted test database's file is let go). */
const IDLE_MS = 60_000;

export interface ReadThreadOptions {
  threads: number;
  /**
   * The longest a caller waits for its rows, its wait for a free thread included; beyond, `overrun`
   * is thrown. The statement itself runs to its end: better-sqlite3 cannot interrupt one, and a
   * thread told to terminate goes on with it (and keeps the process from exiting), so its thread
   * stays busy until then and the threads never outnumber `threads`. A statement's cost is bounded
   * by what runs it (a search's terms and candidates, a user's caps), not here.
   */
  timeoutMs: number;
  overrun: (timeoutMs: number) => Error;
  stopped: (reason: string) => Error;
}

/** The database file of a SQLite data source; undefined for MySQL and for an in-memory or temporary database. */
export function sqliteFile(dataSource: DataSource): string | undefined {
  if (dataSource.options.type !== 'better-sqlite3') return undefined;
  const file = String(dataSource.options.database ?? '');
  return file && file !== ':memory:' && !file.startsWith('file::memory:') ? file : undefined;
}

let generations = 0;
const generationOf = new WeakMap<DataSource, number>();

export class SqliteReadThreads {
  private readonly pool: TimedThreadPool;

  constructor(options: ReadThreadOptions) {
    this.pool = new TimedThreadPool(
      {
        source: READ_THREAD,
        workerData: { driver: require.resolve('better-sqlite3'), idleMs: IDLE_MS, busyTimeoutMs: options.timeoutMs },
        // No limit on the thread itself: terminating it would not stop its statement (see below).
        timeoutMs: Infinity,
        announcesReady: true,
        queued: 'fail', // never used: the pool gives a thread one call at a time
        overrun: options.overrun,
        failed: (message) => new Error(message),
        stopped: options.stopped,
      },
      { size: options.threads, answerWithinMs: options.timeoutMs, late: options.overrun },
    );
  }

  /** Statements running or waiting for a thread. */
  get pending(): number {
    return this.pool.pending;
  }

  /** The rows of a SELECT on `dataSource`'s file (see sqliteFile), read by a thread. */
  select<T>(dataSource: DataSource, file: string, sql: string, params: unknown[]): Promise<T[]> {
    let generation = generationOf.get(dataSource);
    if (generation === undefined) generationOf.set(dataSource, (generation = ++generations));
    // The main connection's memory map (a module may set one: the notes' search reads scattered pages).
    const main = sqliteConnection(dataSource);
    const mmapSize = (main?.prepare('PRAGMA mmap_size').get() as { mmap_size?: number } | undefined)?.mmap_size;
    return this.pool.call<T[]>({ file, generation, mmapSize, sql, params });
  }

  stop(): Promise<void> {
    return this.pool.stop();
  }
}
