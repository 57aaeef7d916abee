// The trash, one shape for every module that keeps one (notes, vault items, hubs; CONTRACT.md
// "Trash"). Each module owns its trashed rows: a nullable `deleted_at` column on its own table
// (null: live; set: in the trash since then), so every other reader (an export, an import's
// duplicate check) tells the two apart by one column. What is the same everywhere lives here:
//
// - the GraphQL types of a trash listing (TrashEntry, TrashPage: @shareable, each module's
//   subgraph serves its own part, `trashedNotes`, `trashedVaultItems`, `trashedHubs`);
// - one order for every part, `deleted_at` newest first then id (UUIDv7, unique across modules),
//   so one cursor pages all three parts at once: a part answers the rows past the cursor, and
//   the merge (mergeTrashPages, in the facade) keeps the first `limit` of the union and hands out
//   the cursor of the last one kept. No part is read past what the page needs, and no module
//   reads another's tables (docs/trash.md);
// - the retention purge: a timer armed for the earliest purge_at of the module's trash (none
//   while the trash is empty: no polling while nothing happens), which records one purge job per
//   owner on the module's fair job queue (lib/kit/jobs.ts), purged in batches.
import { Directive, Field, ID, ObjectType } from 'type-graphql';
import type { DataSource, EntityTarget, ObjectLiteral, QueryRunner, SelectQueryBuilder } from 'typeorm';
import { inTransaction } from '../database/transactions';
import type { Logger } from '../logger';
import { Page, PageOf, pageOf, PageOrder } from '../paging';
import { Authenticated } from '../scopes';
import { KitJob, type JobQueue } from './jobs';

export type TrashType = 'note' | 'vault_item' | 'hub';
export const TRASH_TYPES: readonly TrashType[] = ['note', 'vault_item', 'hub'];

const DAY_MS = 24 * 60 * 60 * 1000;

/** When something trashed at `deletedAt` is purged. */
export const purgeAt = (deletedAt: Date, retentionDays: number): Date =>
  new Date(deletedAt.getTime() + retentionDays * DAY_MS);

// What an entry holds is the caller's own; the queries that return one need the module's read scope.
@Authenticated()
@Directive('@shareable')
@ObjectType({ description: 'Something of yours in the trash: a note, a vault item or a hub.' })
export class TrashEntry {
  @Field({ description: '`note`, `vault_item` or `hub`.' })
  type!: string;

  @Field(() => ID)
  id!: string;

  @Field({ description: 'Its title (a hub: its name).' })
  title!: string;

  @Field({ description: 'When it was put in the trash.' })
  deletedAt!: Date;

  @Field({ description: 'When it will be purged for good (TRASH_RETENTION_DAYS after deletedAt).' })
  purgeAt!: Date;
}

@Directive('@shareable')
@ObjectType({ description: 'A page of the trash, newest first; the cursor is the same for every part of it.' })
export class TrashPage extends PageOf(TrashEntry) {}

@Authenticated()
@Directive('@shareable')
@ObjectType({ description: 'An emptying of the trash, accepted: it runs in the background.' })
export class TrashEmptying {
  @Field(() => ID, { description: 'The background job.' })
  id!: string;
}

/** The one order of every part of the trash. */
export function trashOrder<T extends { deletedAt: Date | null; id: string }>(): PageOrder<T> {
  return {
    keys: [
      { property: 'deletedAt', kind: 'time' },
      { property: 'id', kind: 'uuid' },
    ] as PageOrder<T>['keys'],
    direction: 'DESC',
  };
}

/** A module's part of the trash: `query` holds the owner's trashed rows (its own filters applied). */
export async function trashPage<T extends ObjectLiteral & { deletedAt: Date | null; id: string }>(
  query: SelectQueryBuilder<T>,
  limit: number,
  cursor: string | null | undefined,
  entry: (row: T) => { type: TrashType; title: string },
  retentionDays: number,
): Promise<Page<TrashEntry>> {
  const page = await pageOf(query, trashOrder<T>(), limit, cursor);
  return {
    items: page.items.map((row) => ({
      ...entry(row),
      id: row.id,
      deletedAt: row.deletedAt!,
      purgeAt: purgeAt(row.deletedAt!, retentionDays),
    })),
    nextCursor: page.nextCursor,
  };
}

export { mergeTrashPages, type TrashRow } from './trash-merge';

/**
 * For a module's migration: the trash column of `table` and its index (owner, deleted_at). A plain
 * ALTER TABLE ADD COLUMN on both databases: TypeORM's addColumn rebuilds a SQLite table, which
 * would drop the triggers that keep a full-text index (the vault's).
 */
export async function addTrashColumn(queryRunner: QueryRunner, table: string): Promise<void> {
  const mysql = queryRunner.connection.options.type === 'mysql';
  await queryRunner.query(`ALTER TABLE ${table} ADD COLUMN deleted_at ${mysql ? 'datetime(3)' : 'datetime'} NULL`);
  await queryRunner.query(`CREATE INDEX IDX_${table}_trash ON ${table} (owner_id, deleted_at)`);
}

export async function dropTrashColumn(queryRunner: QueryRunner, table: string): Promise<void> {
  const mysql = queryRunner.connection.options.type === 'mysql';
  await queryRunner.query(mysql ? `DROP INDEX IDX_${table}_trash ON ${table}` : `DROP INDEX IDX_${table}_trash`);
  await queryRunner.query(`ALTER TABLE ${table} DROP COLUMN deleted_at`);
}

/** The parameters of a module's purge job: rows trashed at or before `before` (ms) go. */
export type PurgeParams = { before: number };

/** Asks the module's queue to purge the owner's whole trash (as it is now), in batches. */
export async function requestEmptyTrash(queue: JobQueue, kind: string, ownerId: string): Promise<TrashEmptying> {
  const job = await queue.request<PurgeParams>({ kind, ownerId, params: { before: Date.now() } });
  return { id: job.id };
}

/** After a purge was asked for and nothing else is due: a look whether it left anything. */
const RECHECK_MS = 10 * 60 * 1000;

/** setTimeout's longest wait. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The retention purge of one module: armed for the earliest purge_at of its trash, it records a
 * purge job per owner whose rows are due (at most one pending per owner) and arms again. Several
 * processes may each arm one; the jobs' batches are idempotent (a row is deleted once).
 */
export class TrashRetention {
  private timer?: NodeJS.Timeout;
  private armedFor = Infinity;
  private stopped = true;

  constructor(
    private readonly options: {
      dataSource: DataSource;
      queue: JobQueue;
      /** The purge job's kind, e.g. `notes.trash_purge`. */
      kind: string;
      /** The entity of the trashed rows (its properties ownerId and deletedAt). */
      entity: EntityTarget<ObjectLiteral>;
      retentionDays: number;
      logger?: Logger;
    },
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    await this.arm();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Infinity;
  }

  /** Something was trashed at `deletedAt` (after the commit): armed for it when nothing earlier is. */
  trashed(deletedAt: Date): void {
    if (this.stopped) return;
    const due = purgeAt(deletedAt, this.options.retentionDays).getTime();
    if (due < this.armedFor) this.setTimer(due);
  }

  private setTimer(due: number): void {
    clearTimeout(this.timer);
    this.armedFor = due;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.armedFor = Infinity;
        this.fire().catch((err) => this.options.logger?.error({ err }, 'trash retention purge failed; retried'));
      },
      Math.min(MAX_TIMER_MS, Math.max(0, due - Date.now()) + 50),
    );
    this.timer.unref?.();
  }

  /** Armed for the earliest trashed row of the module after `after` (none: no timer). */
  private async arm(after?: Date): Promise<boolean> {
    if (this.stopped) return false;
    const query = this.options.dataSource
      .createQueryBuilder(this.options.entity, 't')
      .select('MIN(t.deletedAt)', 'at')
      .where('t.deletedAt IS NOT NULL');
    if (after) query.andWhere('t.deletedAt > :after', { after });
    const row = await query.getRawOne<{ at: string | Date | null }>();
    if (!row?.at) return false;
    // SQLite answers the stored UTC text, MySQL a Date (the connection's time zone is UTC).
    const at = row.at instanceof Date ? row.at : new Date(`${row.at.replace(' ', 'T')}Z`);
    const due = purgeAt(at, this.options.retentionDays).getTime();
    if (due < this.armedFor) this.setTimer(due);
    return true;
  }

  /**
   * Records a purge job for each owner with due rows (a pending one of the owner's is moved on to
   * the new bound instead), then arms for the next row to fall due.
   */
  async fire(): Promise<void> {
    if (this.stopped) return;
    const { dataSource, queue, kind, entity, retentionDays } = this.options;
    const before = Date.now() - retentionDays * DAY_MS;
    const owners = await dataSource
      .createQueryBuilder(entity, 't')
      .select('DISTINCT t.ownerId', 'owner_id')
      .where('t.deletedAt IS NOT NULL AND t.deletedAt <= :before', { before: new Date(before) })
      .limit(1000)
      .getRawMany<{ owner_id: string }>();
    for (const { owner_id: ownerId } of owners)
      await inTransaction(dataSource, async (m) => {
        const pending = await m.findOneBy(KitJob, { kind, ownerId, state: 'pending' });
        // Only while still pending (a runner's claim changes the state): its next batch reads the new bound.
        const params: Partial<KitJob> = { params: { before } };
        if (pending) await m.update(KitJob, { id: pending.id, state: 'pending' }, params);
        else await queue.add<PurgeParams>(m, { kind, ownerId, params: { before }, counted: false });
      });
    const next = await this.arm(new Date(before));
    // Due rows left behind (more than 1,000 owners, a job that failed): looked at again a while later.
    if (owners.length && !next) this.setTimer(Date.now() + RECHECK_MS);
  }
}
