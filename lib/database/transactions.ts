// Transactions the same way on both databases: queued on SQLite's one connection, retried after
// a lost lock conflict, and announced to this process's listeners once committed (onCommit), on
// SQLite and MySQL alike: a commit made here is known here without asking the database.
import type { DataSource, EntityManager } from 'typeorm';
import { isLockConflictError } from '../graphql-errors';
import { isSqlite } from './driver';

// SQLite has one connection: TypeORM would interleave two concurrent transactions on it,
// so they are queued. MySQL gives each transaction its own pooled connection.
const sqliteQueues = new WeakMap<DataSource, Promise<unknown>>();
const commitListeners = new WeakMap<DataSource, Set<() => void>>();

/**
 * `announce: false` keeps a commit from this process's listeners (pollers woken by it): for a
 * transaction known to write nothing another loop waits for; call announceCommit() if it did.
 */
export function inTransaction<T>(
  dataSource: DataSource,
  work: (manager: EntityManager) => Promise<T>,
  { announce = true }: { announce?: boolean } = {},
): Promise<T> {
  let done: Promise<T>;
  if (!isSqlite(dataSource)) done = dataSource.transaction(work);
  else {
    const previous = sqliteQueues.get(dataSource) ?? Promise.resolve();
    done = previous.catch(() => undefined).then(() => dataSource.transaction(work));
    sqliteQueues.set(
      dataSource,
      done.catch(() => undefined),
    );
  }
  return done.then((result) => {
    if (announce) announceCommit(dataSource);
    return result;
  });
}

/** Tells this process's listeners on the data source that a transaction committed. */
export function announceCommit(dataSource: DataSource): void {
  commitListeners.get(dataSource)?.forEach((listener) => listener());
}

/** Calls `listener` after each transaction of inTransaction() on this data source commits. */
export function onCommit(dataSource: DataSource, listener: () => void): () => void {
  let listeners = commitListeners.get(dataSource);
  if (!listeners) commitListeners.set(dataSource, (listeners = new Set()));
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * Runs `transaction` (a whole inTransaction call) again when it lost a lock conflict (deadlock,
 * lock wait timeout: see isLockConflictError), at most `attempts` times in all, after a short
 * jittered pause (10, 20, 40 ms… ×0.5–1.5). Other errors, and the last conflict, are thrown.
 */
export async function retryOnLockConflict<T>(transaction: () => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (err) {
      if (attempt >= attempts || !isLockConflictError(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** (attempt - 1) * (0.5 + Math.random())));
    }
  }
}
