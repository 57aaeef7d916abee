// Where a module runs its expensive reads (a search's ranking statement): "run this read off the
// event loop, and within its share of the database". One per process, shared by every module in it.
// - SQLite on a file: in a read thread with a connection of its own (lib/database/read-threads.ts,
//   SQLITE_READ_THREADS), so that no statement of one request holds the event loop; at most
//   SQLITE_READ_TIMEOUT_MS each (beyond: 503 with Retry-After).
// - MySQL: at most EXPENSIVE_READ_CONNECTIONS of them hold a pooled connection at once (at most
//   DATABASE_POOL_SIZE − 2), the rest wait their turn here: many users' searches together cannot
//   take every connection, so that everyone's ordinary reads always find one (issue 41 finding 2).
// - Otherwise (an in-memory SQLite database, SQLITE_READ_THREADS=0): on the data source's connection.
import type { DataSource } from 'typeorm';
import { AppError } from '../errors';
import { inStatementSpan } from '../tracing';
import { SqliteReadThreads, sqliteFile } from '../database/read-threads';

export interface ExpensiveReadSettings {
  SQLITE_READ_THREADS: number;
  SQLITE_READ_TIMEOUT_MS: number;
  EXPENSIVE_READ_CONNECTIONS: number;
  DATABASE_POOL_SIZE: number;
}

export interface ExpensiveReads {
  /**
   * The rows of one SELECT that may cost much (parameterised: `?` placeholders), for `owner`: one
   * owner's expensive statements run one at a time in a process (a second waits for the first), so
   * that a user with two operations in flight takes one core of the database, not two.
   */
  select<T>(dataSource: DataSource, sql: string, params: unknown[], owner: string): Promise<T[]>;
  /** What runs or waits now: statements in read threads, and MySQL statements holding or awaiting a connection. */
  counts(): { threads: number; connections: number; waiting: number };
}

/** A first-come first-served count of slots. */
class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {}

  get inUse(): number {
    return this.used;
  }
  get queued(): number {
    return this.waiting.length;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.used < this.size) this.used++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve)); // the slot is handed over
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.used--;
    }
  }
}

/**
 * Connections expensive reads may hold at once: the setting, but at most the pool less two (the
 * pool keeps its last connection for work nested in a transaction, lib/database/shared-pool.ts,
 * and one more is left to ordinary reads), and at least one.
 */
export const expensiveConnections = (
  s: Pick<ExpensiveReadSettings, 'EXPENSIVE_READ_CONNECTIONS' | 'DATABASE_POOL_SIZE'>,
) => Math.max(1, Math.min(s.EXPENSIVE_READ_CONNECTIONS, s.DATABASE_POOL_SIZE - 2));

/**
 * Runs each owner's work after the owner's previous one has ended, whatever the outcome; at once
 * (in the caller's turn, ahead of work asked for after it) when the owner has none running.
 */
function oneAtATimePerOwner() {
  const running = new Map<string, Promise<void>>();
  return <T>(owner: string, work: () => Promise<T>): Promise<T> => {
    const before = running.get(owner);
    const run = before ? before.then(work) : work();
    // Forgotten in the first reaction to the run's end, ahead of its caller's: work the caller
    // then asks for starts at once.
    const release = () => {
      if (running.get(owner) === done) running.delete(owner);
    };
    const done: Promise<void> = run.then(release, release);
    running.set(owner, done);
    return run;
  };
}

export function expensiveReads(settings: ExpensiveReadSettings): ExpensiveReads {
  const slots = new Slots(expensiveConnections(settings));
  const inTurn = oneAtATimePerOwner();
  let threads: SqliteReadThreads | undefined;
  const readThreads = () =>
    (threads ??= new SqliteReadThreads({
      threads: settings.SQLITE_READ_THREADS,
      timeoutMs: settings.SQLITE_READ_TIMEOUT_MS,
      overrun: (ms) =>
        new AppError(
          'service_unavailable',
          `The search took more than ${ms} ms (SQLITE_READ_TIMEOUT_MS) and was stopped; narrow it, or try again.`,
          undefined,
          1,
        ),
      stopped: (reason) =>
        new AppError('service_unavailable', `The search stopped (${reason}); try again.`, undefined, 1),
    }));
  return {
    select<T>(dataSource: DataSource, sql: string, params: unknown[], owner: string): Promise<T[]> {
      if (dataSource.options.type === 'mysql')
        return inTurn(owner, () => slots.run(() => dataSource.query<T[]>(sql, params)));
      const file = settings.SQLITE_READ_THREADS > 0 ? sqliteFile(dataSource) : undefined;
      if (!file) return dataSource.query<T[]>(sql, params);
      // A span of the statement in a sampled trace (TypeORM's query events do not see the thread's).
      return inTurn(owner, () =>
        inStatementSpan(dataSource, sql, () => readThreads().select<T>(dataSource, file, sql, params)),
      );
    },
    counts: () => ({ threads: threads?.pending ?? 0, connections: slots.inUse, waiting: slots.queued }),
  };
}

const shared = new Map<string, ExpensiveReads>();

/** The process's expensive reads for these settings (servers with other values, in tests, get their own). */
export function sharedExpensiveReads(config: ExpensiveReadSettings): ExpensiveReads {
  const key = JSON.stringify([
    config.SQLITE_READ_THREADS,
    config.SQLITE_READ_TIMEOUT_MS,
    config.EXPENSIVE_READ_CONNECTIONS,
    config.DATABASE_POOL_SIZE,
  ]);
  let reads = shared.get(key);
  if (!reads) shared.set(key, (reads = expensiveReads(config)));
  return reads;
}
