// Per-user caps, one mechanism for every module: a counter row per (owner, cap) in the module's
// own `user_caps` table, made outside the transaction (INSERT IGNORE), then taken inside the
// create's transaction by one guarded statement, `UPDATE … SET used = used + k WHERE owner AND
// cap AND used + k <= max`. That statement both checks and counts under the row's lock (MySQL)
// or the one writer (SQLite), so concurrent creates cannot pass the cap together, as a COUNT(*)
// before the insert could. Deletes (a cascade's included) release what they free in their own
// transaction; a deleted user's rows go with `forget`.
import { Column, Entity, PrimaryColumn, Table } from 'typeorm';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { affectedRows, columns } from '../database/portable';
import { AppError } from '../errors';
import { isSqlite } from '../database/driver';

/** A cap: the setting that sets it (also the counter's name) and its value. */
export interface Cap {
  /** The setting's name, e.g. a module's '<THINGS>_PER_USER': the counter's name and `details.limit`. */
  limit: string;
  max: number;
  /** A cap on what waits rather than on what is stored: refused as a rate (429 with Retry-After). */
  retryAfterSeconds?: number;
  /** The refusal's message, e.g. 'You have the most items allowed.' (the counts are appended). */
  what?: string;
}

/** The owner of counters that count for everyone (a cap on the whole service's rows, not a user's). */
export const EVERYONE = '*';

@Entity('user_caps')
export class UserCap {
  @PrimaryColumn({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  @PrimaryColumn({ name: 'cap', type: 'varchar', length: 64 })
  cap!: string;

  @Column({ name: 'used', type: 'bigint' })
  used!: string | number;
}

/**
 * The one refusal of a cap: 409 `conflict` (429 `rate_limit_exceeded` with Retry-After for a
 * cap on waiting work), `details: { limit, max, count }`, `count` being what is held now.
 */
export function capReached(cap: Cap, count: number): AppError {
  const message = `${cap.what ?? 'A limit is reached.'} (${cap.limit}: ${count} held, at most ${cap.max})`;
  const details = { limit: cap.limit, max: cap.max, count };
  return cap.retryAfterSeconds !== undefined
    ? new AppError('rate_limit_exceeded', message, details, cap.retryAfterSeconds)
    : new AppError('conflict', message, details);
}

/** One take: `n` more of `cap`. */
export interface CapTake {
  cap: Cap;
  n?: number;
}

const made = new WeakMap<DataSource, Set<string>>();

/** Writes the module's counter rows; the caller holds a DataSource whose entities list UserCap. */
export class UserCaps {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Makes the owner's counter rows, outside any transaction: an INSERT IGNORE inside one takes a
   * shared lock that the guarded UPDATE must then upgrade, and two such transactions deadlock
   * (MySQL). Remembered per process; take() makes a missing row itself (as a fallback).
   */
  async prepare(ownerId: string, limits: string[]): Promise<void> {
    let known = made.get(this.dataSource);
    if (!known) made.set(this.dataSource, (known = new Set()));
    const missing = limits.filter((l) => !known.has(`${ownerId}\n${l}`));
    if (!missing.length) return;
    await insertIgnore(this.dataSource.manager, ownerId, missing);
    if (known.size > 100_000) known.clear();
    for (const l of missing) known.add(`${ownerId}\n${l}`);
  }

  /**
   * Counts `n` more of each cap in one transaction, or refuses with capReached (and the caller's
   * transaction rolls back what was taken). Rows are taken in the order of their names, so two
   * transactions that take several never wait on each other in a circle.
   */
  async take(m: EntityManager, ownerId: string, ...takes: CapTake[]): Promise<void> {
    for (const { cap, n = 1 } of [...takes].sort((a, b) => (a.cap.limit < b.cap.limit ? -1 : 1))) {
      if (n <= 0) continue;
      if (await tryTake(m, ownerId, cap, n)) continue;
      // A locking read on MySQL (FOR UPDATE: MariaDB has no FOR SHARE; the failed UPDATE holds the row
      // already): it reads the latest committed count, where a plain read inside
      // REPEATABLE READ would show the transaction's snapshot (a refusal saying 4 held of 5).
      const row = await m.findOne(UserCap, {
        where: { ownerId, cap: cap.limit },
        ...(isSqlite(m.connection) ? {} : { lock: { mode: 'pessimistic_write' as const } }),
      });
      if (!row) {
        // Not made by prepare(): made here (a consumer's transaction, a new process).
        await insertIgnore(m, ownerId, [cap.limit]);
        if (await tryTake(m, ownerId, cap, n)) continue;
      }
      throw capReached(cap, row ? Number(row.used) : 0);
    }
  }

  /** Counts `n` fewer of `limit` (a delete, a cascade, work that stopped waiting). Never below 0. */
  async release(m: EntityManager, ownerId: string, limit: string, n = 1): Promise<void> {
    if (n <= 0) return;
    await m
      .createQueryBuilder()
      .update(UserCap)
      .set({ used: () => 'CASE WHEN used > :n THEN used - :n ELSE 0 END' })
      .where('owner_id = :ownerId AND cap = :limit', { ownerId, limit })
      .setParameter('n', n)
      .execute();
  }

  /**
   * Locks the owner's counter row until the transaction ends, to serialise other changes of
   * that owner's (e.g. a folder tree) behind it. The row must exist (prepare()).
   */
  async lock(m: EntityManager, ownerId: string, limit: string): Promise<void> {
    await m
      .createQueryBuilder()
      .update(UserCap)
      .set({ used: () => 'used' })
      .where('owner_id = :ownerId AND cap = :limit', { ownerId, limit })
      .execute();
  }

  /** What the owner holds of `limit` now. */
  async used(ownerId: string, limit: string, m: EntityManager = this.dataSource.manager): Promise<number> {
    const row = await m.findOneBy(UserCap, { ownerId, cap: limit });
    return row ? Number(row.used) : 0;
  }

  /** A deleted user's counters (after their rows went): the user writes nothing more. */
  async forget(m: EntityManager, ownerId: string): Promise<void> {
    await m.delete(UserCap, { ownerId });
    made
      .get(this.dataSource)
      ?.forEach((key) => key.startsWith(`${ownerId}\n`) && made.get(this.dataSource)?.delete(key));
  }
}

async function tryTake(m: EntityManager, ownerId: string, cap: Cap, n: number): Promise<boolean> {
  const result = await m
    .createQueryBuilder()
    .update(UserCap)
    .set({ used: () => 'used + :n' })
    .where('owner_id = :ownerId AND cap = :limit AND used + :n <= :max', { ownerId, limit: cap.limit, max: cap.max })
    .setParameter('n', n)
    .execute();
  return affectedRows(result) === 1;
}

async function insertIgnore(m: EntityManager, ownerId: string, limits: string[]): Promise<void> {
  await m
    .createQueryBuilder()
    .insert()
    .into(UserCap)
    .values(limits.map((cap) => ({ ownerId, cap, used: 0 })))
    .orIgnore()
    .execute();
}

/**
 * The migration step of a module that adopts the kit: makes `user_caps` and counts what each
 * owner holds now. `counts` maps a cap to a query answering `(owner_id, used)` rows.
 */
export async function createUserCapsTable(queryRunner: QueryRunner, counts: Record<string, string>): Promise<void> {
  const c = columns(queryRunner);
  await queryRunner.createTable(
    new Table({
      name: 'user_caps',
      columns: [
        c.string('owner_id', 36, { isPrimary: true }),
        c.string('cap', 64, { isPrimary: true }),
        { name: 'used', type: 'bigint', default: 0 },
      ],
    }),
  );
  for (const [cap, query] of Object.entries(counts))
    await queryRunner.query(
      `INSERT INTO user_caps (owner_id, cap, used) SELECT q.owner_id, ?, q.used FROM (${query}) q`,
      [cap],
    );
}
