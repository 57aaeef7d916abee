// One mysql2 pool per MySQL server in a process, however many module databases it opens: a
// process holds at most DATABASE_POOL_SIZE connections to a server (CONTRACT "Beyond one machine").
//
// On MySQL each module's database is a schema of one server, and a connection can serve any of
// them: `USE <schema>` switches it. Each TypeORM DataSource gets a stand-in for the mysql2 module
// (its `driver` option) whose createPool answers a view of the server's one pool: a connection
// taken through the view is switched to the view's schema first, when it is not there already
// (each connection remembers its schema, so a process that mostly serves one module rarely pays
// the extra round trip). Chosen over qualified table names (`db.table`) because TypeORM's
// migrations, its metadata queries and the modules' own SQL all name tables bare: one switch at
// checkout keeps them all correct without touching them. SQLite is not concerned.
//
// Sharing one pool across databases adds a hazard a pool per database did not have: work that holds a
// connection of one database while it waits for another (a transaction that reads another database
// inside it) could find every connection held by work that waits the same way. So the connections are
// taken through a gate: a transaction (TypeORM's, which every module's inTransaction uses) runs in an
// async context that counts the connections it holds; a connection asked for while the context holds
// one is NESTED, and may take the last free connection, which a first (outer) acquisition may not.
// With at least 2 connections and nesting one level deep, some work can always go on.
import { AsyncLocalStorage } from 'node:async_hooks';
import mysql from 'mysql2';
import type { Pool, PoolConnection, PoolOptions } from 'mysql2';
import { EntityManager } from 'typeorm';

type Callback = (err: Error | null, ...results: unknown[]) => void;

interface Shared {
  pool: Pool;
  views: number;
  gate: Gate;
}

/** The connections of a transaction's async context (and of what it calls). */
const holding = new AsyncLocalStorage<{ held: number }>();

// Every transaction gets a context; one begun inside another keeps the outer one's (its
// connection is nested).
// eslint-disable-next-line @typescript-eslint/unbound-method
const transaction = EntityManager.prototype.transaction as (...a: unknown[]) => unknown;
EntityManager.prototype.transaction = function (this: EntityManager, ...args: unknown[]) {
  const run = () => transaction.apply(this, args);
  return (holding.getStore() ? run() : holding.run({ held: 0 }, run)) as never;
};

/** Counts the server's connections in use: outer acquisitions leave the last one to nested ones. */
class Gate {
  private inUse = 0;
  private readonly nested: (() => void)[] = [];
  private readonly outer: (() => void)[] = [];

  constructor(private readonly size: number) {}

  enter(nested: boolean, go: () => void): void {
    if (this.admits(nested)) {
      this.inUse++;
      go();
    } else (nested ? this.nested : this.outer).push(go);
  }

  leave(): void {
    this.inUse--;
    const next = this.nested.length ? this.nested.shift() : this.admits(false) ? this.outer.shift() : undefined;
    if (next) {
      this.inUse++;
      next();
    }
  }

  private admits(nested: boolean): boolean {
    return this.inUse < (nested || this.size < 2 ? this.size : this.size - 1);
  }
}

/** The server's pools, by host, port and user (and what else decides a connection's session). */
const shared = new Map<string, Shared>();

const SCHEMA = Symbol('schema');
const RELEASE = Symbol('release');
const OWNER = Symbol('owner');
const DESTROY = Symbol('destroy');
type Tagged = PoolConnection & {
  [SCHEMA]?: string;
  [RELEASE]?: () => void;
  [DESTROY]?: () => void;
  [OWNER]?: { gate: Gate; context?: { held: number } };
};

/** mysql2's queue of free connections (a Denque): the pool takes the last one. */
interface FreeConnections {
  length: number;
  peekAt(index: number): Tagged | undefined;
  removeOne(index: number): Tagged | undefined;
  push(connection: Tagged): number;
}

/**
 * Puts a free connection already in `schema` where the pool takes the next one from, when there is
 * one: in the one-process server every module shares the pool, and a connection taken at random
 * paid a `USE` for about a fifth of all statements (an import on MariaDB: 4,700 of 21,400). mysql2's
 * free list is not public API; when it is not the shape known here, nothing is moved (the `USE` is
 * then paid as before).
 */
function preferSchema(pool: Pool, schema: string): void {
  const free = (pool as unknown as { _freeConnections?: FreeConnections })._freeConnections;
  if (!free || typeof free.peekAt !== 'function' || typeof free.removeOne !== 'function') return;
  const last = free.length - 1;
  if (last < 1 || free.peekAt(last)?.[SCHEMA] === schema) return;
  for (let i = last - 1; i >= 0; i--) {
    if (free.peekAt(i)?.[SCHEMA] !== schema) continue;
    const connection = free.removeOne(i);
    if (connection) free.push(connection);
    return;
  }
}

/** A view of the server's pool in one schema: what TypeORM and rate-limiter-flexible use of a mysql2 pool. */
class SchemaPool {
  private ended = false;

  constructor(
    private readonly key: string,
    private readonly entry: Shared,
    private readonly schema: string,
  ) {}

  getConnection(callback: (err: Error | null, connection?: PoolConnection) => void): void {
    if (this.ended) return callback(new Error('Pool is closed.'));
    const context = holding.getStore();
    this.entry.gate.enter(!!context && context.held > 0, () => this.take(context, callback));
  }

  private take(
    context: { held: number } | undefined,
    callback: (err: Error | null, connection?: PoolConnection) => void,
  ): void {
    const gate = this.entry.gate;
    preferSchema(this.entry.pool, this.schema);
    this.entry.pool.getConnection((err, connection) => {
      if (err) {
        gate.leave();
        return callback(err);
      }
      const tagged = connection as Tagged;
      // Given back once: the gate's count follows the pool's.
      if (!tagged[RELEASE]) {
        const release = connection.release.bind(connection);
        tagged[RELEASE] = release;
        connection.release = () => {
          const owner = tagged[OWNER];
          tagged[OWNER] = undefined;
          if (owner) {
            if (owner.context) owner.context.held--;
            owner.gate.leave();
          }
          release();
        };
      }
      if (!tagged[DESTROY]) {
        // A connection destroyed (lost, or closed on an error) frees its place at the gate too.
        const destroy = connection.destroy.bind(connection);
        tagged[DESTROY] = destroy;
        connection.destroy = () => {
          const owner = tagged[OWNER];
          tagged[OWNER] = undefined;
          if (owner) {
            if (owner.context) owner.context.held--;
            owner.gate.leave();
          }
          destroy();
        };
      }
      tagged[OWNER] = { gate, context };
      if (context) context.held++;
      if (tagged[SCHEMA] === this.schema) return callback(null, connection);
      connection.query(`USE \`${this.schema.replace(/`/g, '``')}\``, (useErr) => {
        if (useErr) {
          connection.release();
          return callback(useErr);
        }
        tagged[SCHEMA] = this.schema;
        callback(null, connection);
      });
    });
  }

  query(sql: unknown, params?: unknown, callback?: Callback): void {
    const done = (typeof params === 'function' ? params : callback) as Callback;
    const values = typeof params === 'function' ? undefined : params;
    this.getConnection((err, connection) => {
      if (err || !connection) return done(err ?? new Error('no connection'));
      const run = connection.query.bind(connection) as (
        sql: unknown,
        values: unknown,
        callback: (err: Error | null, ...results: unknown[]) => void,
      ) => void;
      run(sql, values ?? [], (queryErr, ...results) => {
        connection.release();
        done(queryErr, ...results);
      });
    });
  }

  on(): this {
    return this;
  }

  end(callback?: (err: Error | null) => void): void {
    if (this.ended) return callback?.(null);
    this.ended = true;
    if (--this.entry.views > 0) return callback?.(null);
    if (shared.get(this.key) === this.entry) shared.delete(this.key);
    this.entry.pool.end((err) => callback?.(err ?? null));
  }

  // mysql2's own counts, read by lib/database/driver.ts poolCounts (the server's pool: the budget).
  get _allConnections() {
    return (this.entry.pool as unknown as { _allConnections?: { length: number } })._allConnections;
  }
  get _freeConnections() {
    return (this.entry.pool as unknown as { _freeConnections?: { length: number } })._freeConnections;
  }
  get _connectionQueue() {
    return (this.entry.pool as unknown as { _connectionQueue?: { length: number } })._connectionQueue;
  }
}

/** What TypeORM's mysql driver takes as `driver`: createPool answers a view of the server's pool. */
export function sharedPoolDriver(schema: string): { createPool(options: PoolOptions): SchemaPool } {
  return {
    createPool(options: PoolOptions) {
      const { database: _database, ...server } = options;
      void _database;
      const key = JSON.stringify([
        server.host,
        server.port,
        server.user,
        server.password,
        server.charset,
        server.timezone,
      ]);
      let entry = shared.get(key);
      if (!entry) {
        // No default schema: every connection is switched at checkout.
        entry = { pool: mysql.createPool(server), views: 0, gate: new Gate(server.connectionLimit ?? 10) };
        shared.set(key, entry);
      }
      entry.views++;
      return new SchemaPool(key, entry, schema);
    },
  };
}

/** Connections this process holds to MySQL servers (tests, metrics). */
export function sharedPoolConnections(): number {
  let total = 0;
  for (const { pool } of shared.values())
    total += (pool as unknown as { _allConnections?: { length: number } })._allConnections?.length ?? 0;
  return total;
}
