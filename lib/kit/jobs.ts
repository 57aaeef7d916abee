// Background work over many rows, one shape for every module: a job is a row of `kit_jobs` in the
// module's own database, written in the transaction that answers the request (a tag rename) or
// that advances the module's event-log position (a deleted user's data), so nothing acknowledged is
// lost and nothing is asked twice. A runner takes jobs and does them one batch (at most
// `batchRows` rows, ≤ 1,000) per transaction:
//
// - Fair: after each batch the job goes back to the queue, and the next batch is taken from the
//   owner served longest ago (never served: first), as the synthesis workers do. One user's burst
//   delays another user's job by about one batch per runner, never by the whole burst.
// - Bounded: an owner may have `pendingPerUser` jobs asked by requests in the queue at once (a
//   guarded counter in `kit_job_owners`, so concurrent requests cannot overshoot); beyond it the
//   request is refused with 429 `rate_limit_exceeded` and `Retry-After`. Jobs the system asks for
//   (a deleted user's data) are never refused.
// - Safe with several processes: a job is taken by a compare-and-set on its `claim` (one of any
//   number of racing runners wins) under a lease; every batch's transaction first checks and
//   renews that claim, so a runner that lost its job (its lease ended, another took it) commits
//   nothing. A runner that dies leaves its job to be taken again once the lease ends; one that
//   kills runners is given up after MAX_TAKES takes without progress.
// - Exactly once: a batch writes its changes and its events in one transaction, fenced as above;
//   a batch must also be written so that doing it again after a crash changes nothing more (only
//   what the transaction itself removes or changes gets an event).
import crypto from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { Column, Entity, EntityManager, In, Index, LessThan, PrimaryColumn, QueryRunner, Table } from 'typeorm';
import type { DataSource } from 'typeorm';
import { affectedRows, columns, isUniqueViolation } from '../database/portable';
import { inTransaction, onCommit, retryOnLockConflict } from '../database/transactions';
import { AppError } from '../errors';
import type { Logger } from '../logger';
import { backgroundJobBatches } from '../metrics';
import { Poller, startPoller } from '../poller';
import { listenAcross, notifyAcross, wakesAcrossProcesses } from '../wakeups';

export const JOBS_TABLE = 'kit_jobs';
export const JOB_OWNERS_TABLE = 'kit_job_owners';

/** Takes in a row without a committed batch before the job is given up (a batch that kills its runner). */
export const MAX_TAKES = 5;
/** Retry-After of a refusal past the per-user limit: about how long a few batches take. */
const RETRY_AFTER_SECONDS = 5;

export type JobState = 'pending' | 'running' | 'failed';

@Entity(JOBS_TABLE)
@Index(['state', 'ownerId'])
export class KitJob {
  /** UUIDv7: an owner's oldest job sorts first. */
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  /** Which handler does it, e.g. `notes.tag_rename`, `tts.user_deleted`. */
  @Column({ type: 'varchar', length: 60 })
  kind!: string;

  @Index()
  @Column({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  @Column({ type: 'simple-json' })
  params!: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON of the kind's parameters

  @Column({ type: 'varchar', length: 16 })
  state!: JobState;

  /** Whether it counts against the owner's pending limit (asked by a request). */
  @Column({ type: 'boolean' })
  counted!: boolean;

  /** The current take's token (null while pending): the fence of every batch. */
  @Column({ type: 'varchar', length: 36, nullable: true })
  claim!: string | null;

  @Column({ name: 'lease_until', type: 'datetime', precision: 3, nullable: true })
  leaseUntil!: Date | null;

  /** Takes since the last committed batch. */
  @Column({ type: 'integer' })
  takes!: number;

  @Column({ type: 'integer' })
  batches!: number;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}

/** Per owner: pending jobs asked by requests (the limit's counter) and when one of theirs was last taken (the round). */
@Entity(JOB_OWNERS_TABLE)
export class KitJobOwner {
  @PrimaryColumn({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  @Column({ type: 'integer' })
  pending!: number;

  @Column({ name: 'last_served_at', type: 'datetime', precision: 3, nullable: true })
  lastServedAt!: Date | null;
}

/** The kit's job entities, for a module's entity list. */
export const JOB_ENTITIES = [KitJob, KitJobOwner];

/** For a module's migration: the job tables. */
export async function createJobTables(queryRunner: QueryRunner): Promise<void> {
  const c = columns(queryRunner);
  await queryRunner.createTable(
    new Table({
      name: JOBS_TABLE,
      columns: [
        c.uuid('id', { isPrimary: true }),
        c.string('kind', 60),
        c.uuid('owner_id'),
        c.text('params'),
        c.string('state', 16),
        { name: 'counted', type: 'boolean' },
        c.uuid('claim', { isNullable: true }),
        c.timestamp('lease_until', { isNullable: true }),
        c.int('takes'),
        c.int('batches'),
        c.timestamp('created_at'),
      ],
      indices: [{ columnNames: ['state', 'owner_id'] }, { columnNames: ['owner_id'] }],
    }),
  );
  await queryRunner.createTable(
    new Table({
      name: JOB_OWNERS_TABLE,
      columns: [
        c.uuid('owner_id', { isPrimary: true }),
        c.int('pending'),
        c.timestamp('last_served_at', { isNullable: true }),
      ],
    }),
  );
}

export async function dropJobTables(queryRunner: QueryRunner): Promise<void> {
  await queryRunner.dropTable(JOB_OWNERS_TABLE);
  await queryRunner.dropTable(JOBS_TABLE);
}

/** What a batch removed, by resource (`notes`, `voices`…): what per-user counters give back. */
export type Removed = Record<string, number>;

export interface BatchContext<P> {
  job: { id: string; kind: string; ownerId: string; params: P };
  /** Rows this batch may touch at most. */
  limit: number;
  dataSource: DataSource;
  /**
   * The batch's transaction. It first checks (and renews) that this runner still holds the job:
   * if not, nothing is committed. `removed(resource, n)` reports what went, for the per-batch hook.
   * Reads and slow work (files, parsing) belong before it; several calls are allowed.
   */
  transaction<T>(
    work: (m: EntityManager, removed: (resource: string, count: number) => void) => Promise<T>,
  ): Promise<T>;
}

export interface JobHandler<P = Record<string, unknown>> {
  kind: string;
  /** One batch; resolves true while there is more to do, false when the job is done. */
  batch(ctx: BatchContext<P>): Promise<boolean>;
  /** Rows per transaction for this kind (default: the runner's). */
  batchRows?: number;
}

/** Called inside every batch's transaction, after its work: e.g. to give back per-user cap counts. */
export type BatchHook = (
  m: EntityManager,
  batch: { kind: string; ownerId: string; jobId: string; removed: Removed },
) => Promise<void>;

export class JobLost extends Error {
  constructor(jobId: string) {
    super(`job ${jobId} was taken by another runner`);
  }
}

export interface JobQueueOptions {
  dataSource: DataSource;
  /** Jobs asked by requests one owner may have waiting or running; beyond it 429. */
  pendingPerUser: number;
  /** Rows per transaction (≤ 1,000) unless a handler says otherwise. */
  batchRows: number;
  leaseSeconds: number;
  /** Pause after finding work, and the first poll; polls back off to maxIntervalMs while idle. */
  intervalMs: number;
  maxIntervalMs: number;
  logger?: Logger;
  onBatch?: BatchHook;
}

/**
 * One module's queue and its runner. `add` writes a job inside the caller's transaction; the
 * runner in this process is woken when that transaction commits, and every runner polls (backing
 * off) for what other processes left.
 */
export class JobQueue {
  private readonly handlers = new Map<string, JobHandler>();
  private readonly hooks: BatchHook[] = [];
  private poller?: Poller;
  private stopWaking?: () => void;
  private leaseTimer?: NodeJS.Timeout;
  private added = false;
  private stopped = false;
  private readonly runnerId = crypto.randomUUID();

  constructor(private readonly options: JobQueueOptions) {
    if (options.onBatch) this.hooks.push(options.onBatch);
  }

  register<P>(handler: JobHandler<P>): this {
    // Stored by kind: the params a job holds are the ones its kind's handler was registered for.
    this.handlers.set(handler.kind, handler as unknown as JobHandler);
    return this;
  }

  /** Another per-batch hook (e.g. the caps' counters), run in each batch's transaction. */
  onBatch(hook: BatchHook): this {
    this.hooks.push(hook);
    return this;
  }

  /**
   * A job a request asks for, in a transaction of its own (with `also`, e.g. the request's own
   * writes): 429 past the owner's pending limit. The owner's counter row is made first, outside
   * the transaction, so that concurrent requests only ever update an existing row (on MySQL an
   * UPDATE of a missing row locks the gap, and two such then deadlock on their INSERTs).
   */
  async request<P extends Record<string, unknown>>(
    job: { kind: string; ownerId: string; params?: P },
    also?: (m: EntityManager) => Promise<void>,
  ): Promise<KitJob> {
    await this.options.dataSource.manager
      .createQueryBuilder()
      .insert()
      .into(KitJobOwner)
      .values({ ownerId: job.ownerId, pending: 0, lastServedAt: null })
      .orIgnore()
      .execute();
    return retryOnLockConflict(() =>
      inTransaction(this.options.dataSource, async (m) => {
        await also?.(m);
        return this.add(m, { ...job, counted: true });
      }),
    );
  }

  /**
   * Records a job in the caller's transaction. `counted` (jobs a request asks for): refused with
   * 429 past the owner's pending limit. System jobs (a deleted user's data) are always taken.
   */
  async add<P extends Record<string, unknown>>(
    m: EntityManager,
    job: { kind: string; ownerId: string; params?: P; counted?: boolean },
  ): Promise<KitJob> {
    const counted = job.counted ?? true;
    if (counted) await this.reserve(m, job.ownerId);
    const row = m.create(KitJob, {
      id: uuidv7(),
      kind: job.kind,
      ownerId: job.ownerId,
      params: job.params ?? {},
      state: 'pending',
      counted,
      claim: null,
      leaseUntil: null,
      takes: 0,
      batches: 0,
      createdAt: new Date(),
    });
    await m.insert(KitJob, row);
    this.added = true;
    return row;
  }

  /** One more pending job for the owner, unless at the limit (a guarded update: holds under concurrency). */
  private async reserve(m: EntityManager, ownerId: string): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const result = await m
        .createQueryBuilder()
        .update(KitJobOwner)
        .set({ pending: () => 'pending + 1' })
        .where('owner_id = :ownerId AND pending < :max', { ownerId, max: this.options.pendingPerUser })
        .execute();
      if (affectedRows(result) === 1) return;
      if (await m.existsBy(KitJobOwner, { ownerId })) break;
      try {
        await m.insert(KitJobOwner, { ownerId, pending: 1, lastServedAt: null });
        return;
      } catch (err) {
        if (!isUniqueViolation(err)) throw err; // made meanwhile by another request: try the update again
      }
    }
    throw new AppError(
      'rate_limit_exceeded',
      `Too many background jobs waiting (at most ${this.options.pendingPerUser} per user); try again later.`,
      { limit: 'JOBS_PENDING_PER_USER', max: this.options.pendingPerUser },
      RETRY_AFTER_SECONDS,
    );
  }

  start(): void {
    this.stopped = false;
    const topic = `jobs.${this.topic()}`;
    // Woken after a commit that added a job here; with a wake transport (EVENT_LOG_URL) every
    // process's runner is told too, and none polls while idle. Without one, runners poll for other
    // processes' jobs and ended leases.
    this.stopWaking = onCommit(this.options.dataSource, () => {
      if (!this.added) return;
      this.added = false;
      this.poller?.wake();
      notifyAcross(topic);
    });
    this.poller = startPoller({
      name: 'background jobs',
      intervalMs: this.options.intervalMs,
      maxIntervalMs: this.options.maxIntervalMs,
      work: () => this.drainThenWatchLeases(),
      wakeWith: (wake) => listenAcross(topic, wake),
      idlePoll: !wakesAcrossProcesses(),
      logger: this.options.logger,
    });
  }

  /** The queue's name across processes: its database's (one queue per module database). */
  private topic(): string {
    const db = String(this.options.dataSource.options.database ?? 'default');
    return db.replace(/^.*[\\/]/, '').replace(/[^A-Za-z0-9_-]/g, '_') || 'default';
  }

  /**
   * drain(); then, when runners do not poll (wake-ups cross processes), a look at the jobs other
   * runners hold: one that died holding a job is retaken once its lease ends, so the runner wakes
   * itself then. Nothing running anywhere: no timer, and no query until the next wake-up.
   */
  private async drainThenWatchLeases(): Promise<boolean> {
    const found = await this.drain();
    if (found || this.stopped || !wakesAcrossProcesses() || !this.kinds().length) return found;
    const held = await this.options.dataSource.manager.findOne(KitJob, {
      select: { id: true, leaseUntil: true },
      where: { state: 'running', kind: In(this.kinds()) },
      order: { leaseUntil: 'ASC' },
    });
    clearTimeout(this.leaseTimer);
    if (held?.leaseUntil) {
      const inMs = Math.max(0, held.leaseUntil.getTime() - Date.now()) + 50;
      this.leaseTimer = setTimeout(() => this.poller?.wake(), inMs);
      this.leaseTimer.unref();
    }
    return found;
  }

  async stop(): Promise<void> {
    clearTimeout(this.leaseTimer);
    this.stopped = true;
    this.stopWaking?.();
    await this.poller?.stop();
  }

  /** Takes and runs batches until the queue has nothing for this runner; true when it did any. */
  async drain(): Promise<boolean> {
    let any = false;
    while (!this.stopped) {
      const job = await this.claimNext();
      if (!job) break;
      any = true;
      await this.runOneBatch(job);
      // Other requests between batches.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return any;
  }

  /** The kinds this runner does. */
  private kinds(): string[] {
    return [...this.handlers.keys()];
  }

  /**
   * The next job to take: one whose runner stopped renewing its lease, else the oldest pending job
   * of the owner served longest ago. Null when there is none to win.
   */
  async claimNext(): Promise<KitJob | null> {
    const kinds = this.kinds();
    if (!kinds.length) return null;
    const { manager } = this.options.dataSource;
    const now = new Date();
    const abandoned = await manager.find(KitJob, {
      where: { state: 'running', leaseUntil: LessThan(now), kind: In(kinds) },
      order: { id: 'ASC' },
      take: 10,
    });
    const candidates = [...abandoned, ...(await this.nextPerOwner(kinds))];
    for (const seen of candidates) {
      if (seen.state === 'running' && seen.takes >= MAX_TAKES) {
        await this.giveUp(seen);
        continue;
      }
      const claim = crypto.randomUUID();
      const where =
        seen.state === 'running'
          ? { id: seen.id, state: 'running' as const, claim: seen.claim!, leaseUntil: LessThan(now) }
          : { id: seen.id, state: 'pending' as const, takes: seen.takes };
      // The take and the owner's place in the round in one transaction (on SQLite, a statement
      // outside one would join whatever transaction holds the one connection).
      const won = await retryOnLockConflict(() =>
        inTransaction(
          this.options.dataSource,
          async (m) => {
            const taken = await m.update(KitJob, where, {
              state: 'running',
              claim,
              takes: seen.takes + 1,
              leaseUntil: this.leaseEnd(),
            });
            if (affectedRows(taken) !== 1) return false;
            // The owner goes to the back of the round.
            if (affectedRows(await m.update(KitJobOwner, { ownerId: seen.ownerId }, { lastServedAt: now })) !== 1)
              await m
                .createQueryBuilder()
                .insert()
                .into(KitJobOwner)
                .values({ ownerId: seen.ownerId, pending: 0, lastServedAt: now })
                .orIgnore()
                .execute();
            return true;
          },
          { announce: false },
        ),
      );
      if (!won) continue;
      if (seen.state === 'running')
        this.options.logger?.warn(
          { job: seen.id, kind: seen.kind },
          'background job taken again after its runner stopped',
        );
      return Object.assign(seen, { state: 'running', claim, takes: seen.takes + 1 });
    }
    return null;
  }

  /** Each owner's oldest pending job, the owner whose job was taken longest ago (or never) first. */
  private async nextPerOwner(kinds: string[]): Promise<KitJob[]> {
    const { manager } = this.options.dataSource;
    // NULL (never served) sorts first in ascending order on SQLite and MySQL alike.
    const heads: { id: string }[] = await manager.query(
      `SELECT MIN(j.id) AS id FROM ${JOBS_TABLE} j LEFT JOIN ${JOB_OWNERS_TABLE} o ON o.owner_id = j.owner_id
       WHERE j.state = 'pending' AND j.kind IN (${kinds.map(() => '?').join(', ')})
       GROUP BY j.owner_id, o.last_served_at ORDER BY o.last_served_at ASC, MIN(j.id) ASC LIMIT 10`,
      kinds,
    );
    if (!heads.length) return [];
    const rows = await manager.findBy(KitJob, { id: In(heads.map((h) => h.id)), state: 'pending' });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return heads.map((h) => byId.get(h.id)).filter((r): r is KitJob => !!r);
  }

  private leaseEnd(): Date {
    return new Date(Date.now() + this.options.leaseSeconds * 1000);
  }

  /** One batch of a job this runner holds, then the job back to the queue (or gone when done). */
  private async runOneBatch(job: KitJob): Promise<void> {
    const handler = this.handlers.get(job.kind)!;
    const { dataSource, logger } = this.options;
    const fence = { id: job.id, claim: job.claim! };
    const ctx: BatchContext<Record<string, unknown>> = {
      job: { id: job.id, kind: job.kind, ownerId: job.ownerId, params: job.params },
      limit: Math.min(1000, handler.batchRows ?? this.options.batchRows),
      dataSource,
      transaction: (work) =>
        retryOnLockConflict(() =>
          inTransaction(dataSource, async (m) => {
            // The fence first: on MySQL it also locks the job's row until the commit.
            const held = await m.update(KitJob, fence, { leaseUntil: this.leaseEnd(), takes: 0 });
            if (affectedRows(held) !== 1) throw new JobLost(job.id);
            const removed: Removed = {};
            const result = await work(m, (resource, count) => {
              removed[resource] = (removed[resource] ?? 0) + count;
            });
            for (const hook of this.hooks)
              await hook(m, { kind: job.kind, ownerId: job.ownerId, jobId: job.id, removed });
            await m.increment(KitJob, { id: job.id }, 'batches', 1);
            return result;
          }),
        ),
    };
    let more: boolean;
    try {
      more = await handler.batch(ctx);
      backgroundJobBatches.inc({ kind: job.kind });
    } catch (err) {
      if (err instanceof JobLost) {
        logger?.warn({ job: job.id, kind: job.kind }, 'background job lost to another runner; its batch was undone');
        return;
      }
      // Left to its lease: taken again later (and given up after MAX_TAKES takes without a batch).
      logger?.error({ err, job: job.id, kind: job.kind }, 'background job batch failed; it is retried');
      return;
    }
    await retryOnLockConflict(() =>
      inTransaction(
        dataSource,
        async (m) => {
          if (more && !this.stopped) {
            await m.update(KitJob, fence, { state: 'pending', claim: null, leaseUntil: null, takes: 0 });
            return;
          }
          if (more) {
            // Stopping: back to the queue for another runner (or this one's next start).
            await m.update(KitJob, fence, { state: 'pending', claim: null, leaseUntil: null });
            return;
          }
          if (affectedRows(await m.delete(KitJob, fence)) === 1 && job.counted)
            await m.decrement(KitJobOwner, { ownerId: job.ownerId }, 'pending', 1);
          logger?.info({ job: job.id, kind: job.kind, owner: job.ownerId }, 'background job done');
        },
        { announce: false },
      ),
    );
  }

  /** A job that killed its runner MAX_TAKES times: kept as failed for an operator, no longer counted. */
  private async giveUp(job: KitJob): Promise<void> {
    await inTransaction(
      this.options.dataSource,
      async (m) => {
        const result = await m.update(
          KitJob,
          { id: job.id, state: 'running', claim: job.claim!, takes: job.takes },
          { state: 'failed', claim: null, leaseUntil: null },
        );
        if (affectedRows(result) === 1 && job.counted)
          await m.decrement(KitJobOwner, { ownerId: job.ownerId }, 'pending', 1);
      },
      { announce: false },
    );
    this.options.logger?.error({ job: job.id, kind: job.kind, takes: job.takes }, 'background job given up');
  }
}
