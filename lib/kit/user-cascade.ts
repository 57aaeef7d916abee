// A deleted user's data in a module, the one way: a durable consumer of auth's `user.deleted`
// (lib/event-consumer.ts) records a job in the transaction that advances its position (exactly
// once however many processes follow the log), and the module's job queue deletes the rows a batch
// per transaction (lib/kit/jobs.ts), each batch with its events.
import type { DataSource, EntityManager } from 'typeorm';
import type { Config } from '../config';
import type { EventConsumer } from '../event-consumer';
import type { EventLog } from '../event-log';
import type { Logger } from '../logger';
import { BatchContext, JobHandler, JobQueue } from './jobs';
import { defineEvent, typedConsumer } from './typed-events';

export const USER_DELETED = 'user.deleted';

/** Auth's `user.deleted`: the event's user is the deleted one. */
export const UserDeleted = defineEvent(USER_DELETED, { user_id: 'string', by: 'string?' });

/** A module's job queue with the kit's settings. */
export function jobQueue(deps: { config: Config; dataSource: DataSource; logger?: Logger }): JobQueue {
  const { config, dataSource, logger } = deps;
  return new JobQueue({
    dataSource,
    pendingPerUser: config.JOBS_PENDING_PER_USER,
    batchRows: config.JOBS_BATCH_ROWS,
    leaseSeconds: config.JOBS_LEASE_SECONDS,
    intervalMs: config.EVENT_POLL_MS,
    // Jobs added here wake the runner at once; polls find other processes' leftovers (ended leases).
    maxIntervalMs: Math.max(config.POLL_MAX_IDLE_MS, (config.JOBS_LEASE_SECONDS * 1000) / 3),
    logger,
  });
}

/**
 * One batch of a deleted user's rows: delete at most `ctx.limit` of them (and emit their events)
 * through `ctx.transaction`; resolve true while rows are left.
 */
export type UserCascadeBatch = (ctx: BatchContext<Record<string, never>>) => Promise<boolean>;

/**
 * Registers `<module>.user_deleted` on the queue and returns the consumer that asks for it; start
 * and stop the consumer with the module (the queue too).
 */
export function userCascade(options: {
  module: string;
  dataSource: DataSource;
  log: EventLog;
  queue: JobQueue;
  config: Config;
  logger?: Logger;
  batch: UserCascadeBatch;
  /** Rows per transaction (default JOBS_BATCH_ROWS). */
  batchRows?: number;
  /** Also done in the consumer's transaction, at once (small, bounded work: e.g. forgetting the user's refs). */
  onEvent?: (m: EntityManager, userId: string) => Promise<void>;
}): EventConsumer {
  const kind = `${options.module}.user_deleted`;
  const handler: JobHandler<Record<string, never>> = { kind, batch: options.batch, batchRows: options.batchRows };
  options.queue.register(handler);
  return typedConsumer(
    {
      name: `${options.module}.user-deleted`,
      dataSource: options.dataSource,
      log: options.log,
      intervalMs: options.config.EVENT_POLL_MS,
      maxIntervalMs: options.config.POLL_MAX_IDLE_MS,
      logger: options.logger,
    },
    (on) =>
      on.on(UserDeleted, async (m, _data, event) => {
        await options.onEvent?.(m, event.userId);
        await options.queue.add(m, { kind, ownerId: event.userId, counted: false });
      }),
  );
}
