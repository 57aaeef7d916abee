// A subgraph reacting to events of other subgraphs (e.g. tts deleting what a deleted user
// owned), durably and exactly once however many of its processes run. Its position in the event
// log is a row in the subgraph's OWN database (`event_consumers`), read under a lock and advanced
// in the same transaction as the changes the events caused: a crash before the commit leaves
// both undone (the events are handled again), a commit makes both true, and two processes never
// handle the same event because the second waits for the row and then starts after the first's
// position. The log hands out positions in commit order (lib/event-log.ts), so a reader that
// has seen position n has seen everything up to it.
import { Column, Entity, EntityManager, In, PrimaryColumn, QueryRunner, Raw, Table } from 'typeorm';
import type { DataSource } from 'typeorm';
import { columns, isUniqueViolation } from './database/portable';
import { inTransaction } from './database/transactions';
import type { DurableReader } from './event-backends';
import { EventLog, LoggedEvent } from './event-log';
import type { Logger } from './logger';
import { Poller, startPoller } from './poller';

export const EVENT_CONSUMERS_TABLE = 'event_consumers';

const bigintNumber = { to: (v: number) => v, from: (v: string | number) => Number(v) };

@Entity(EVENT_CONSUMERS_TABLE)
export class EventConsumerPosition {
  @PrimaryColumn({ type: 'varchar', length: 100 })
  name!: string;

  /** The last event-log position this consumer has handled. */
  @Column({ name: 'last_seq', type: 'bigint', transformer: bigintNumber })
  lastSeq!: number;
}

/** For a subgraph's migration: its table of consumer positions. */
export async function createEventConsumersTable(queryRunner: QueryRunner): Promise<void> {
  const c = columns(queryRunner);
  await queryRunner.createTable(
    new Table({
      name: EVENT_CONSUMERS_TABLE,
      columns: [c.string('name', 100, { isPrimary: true }), { name: 'last_seq', type: 'bigint' }],
    }),
  );
}

export interface EventConsumerOptions {
  /** Unique per purpose within the subgraph's database, e.g. `tts.user-deleted`. */
  name: string;
  /** The subgraph's own database, where the position lives and the handler writes. */
  dataSource: DataSource;
  log: EventLog;
  /** The event types it handles; undefined: every event (the webhooks' fan-out). */
  types?: string[];
  /** Runs inside the transaction that advances the position; throw to have the batch retried. */
  handle: (m: EntityManager, event: LoggedEvent) => Promise<void>;
  /** Instead of `handle` once per event: the whole batch (in log order) at once, in the same transaction. */
  handleBatch?: (m: EntityManager, events: LoggedEvent[]) => Promise<void>;
  intervalMs: number;
  /** The longest pause between looks while the log does not move (POLL_MAX_IDLE_MS). */
  maxIntervalMs?: number;
  logger?: Logger;
  /** Events handled per transaction. */
  batch?: number;
}

/** The longest range of the log whose event types the consumers of a process read together. */
const SHARED_RANGE_EVENTS = 1000;

export class EventConsumer {
  private poller?: Poller;
  private reader?: DurableReader;
  /** The position last seen in this process: nothing to do while the log has nothing newer. */
  private seen = -1;

  constructor(private readonly options: EventConsumerOptions) {}

  async start(): Promise<void> {
    await this.ensureRow();
    const { log, dataSource, name } = this.options;
    if (log.backend.durableReader) {
      // JetStream: a durable consumer of the stream delivers, woken by the server (no polling).
      // The row keeps the last position handled, written with the handler's changes: an event
      // delivered again (the process died between the commit and the ack) is skipped.
      this.reader = await log.backend.durableReader({
        name,
        types: this.options.types,
        logger: this.options.logger,
        startAfter: async () => (await dataSource.manager.findOneBy(EventConsumerPosition, { name }))?.lastSeq ?? 0,
        handle: (event) => this.handleOne(event),
      });
      return;
    }
    // Woken by this process's appends to the log; polls (backing off) for other processes' appends.
    this.poller = startPoller({
      name: `event consumer ${this.options.name}`,
      intervalMs: this.options.intervalMs,
      maxIntervalMs: this.options.maxIntervalMs,
      wakeOn: this.options.log.dataSource,
      work: async () => {
        const seen = this.seen;
        await this.drain();
        return this.seen !== seen;
      },
      logger: this.options.logger,
    });
  }

  async stop(): Promise<void> {
    await this.reader?.stop();
    await this.poller?.stop();
  }

  /** One event from a durable reader, in the transaction that advances the position; skipped when done. */
  private async handleOne(event: LoggedEvent): Promise<void> {
    const { dataSource, name, handle, handleBatch } = this.options;
    await inTransaction(dataSource, async (m) => {
      await m.query(`UPDATE ${EVENT_CONSUMERS_TABLE} SET last_seq = last_seq WHERE name = ?`, [name]);
      const position = await m.findOneByOrFail(EventConsumerPosition, { name });
      if (event.seq <= position.lastSeq) return;
      if (handleBatch) await handleBatch(m, [event]);
      else await handle(m, event);
      await m.update(EventConsumerPosition, { name }, { lastSeq: event.seq });
    });
    this.seen = Math.max(this.seen, event.seq);
  }

  /** A new consumer starts at the beginning of the log: handlers must tolerate what was already done (idempotent). */
  private async ensureRow(): Promise<void> {
    const { dataSource, name } = this.options;
    if (await dataSource.manager.existsBy(EventConsumerPosition, { name })) return;
    try {
      await dataSource.manager.insert(EventConsumerPosition, { name, lastSeq: 0 });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err; // another process made it
    }
  }

  /**
   * Whether the log holds events of this consumer's types in the range. A short range (what arrived
   * since the last look) is read once for all the process's consumers; a long one (catching up)
   * is asked on its own, stopping at the first event found.
   */
  private async anyBetween(after: number, end: number): Promise<boolean> {
    const { log, types } = this.options;
    if (end - after > SHARED_RANGE_EVENTS)
      return log.dataSource.manager.exists(LoggedEvent, {
        where: {
          seq: Raw((col) => `${col} > :after AND ${col} <= :end`, { after, end }),
          ...(types ? { type: In(types) } : {}),
        },
      });
    const present = await log.typesBetween(after, end);
    return types ? types.some((t) => present.has(t)) : present.size > 0;
  }

  /**
   * Handles every event of its types up to the log's current end; the number handled here. With
   * a durable reader (JetStream), waits until this consumer's position has reached the log's end.
   */
  async drain(): Promise<number> {
    const { dataSource, log, name, types, handle, handleBatch } = this.options;
    if (this.reader) {
      const { lastSeq: end } = await log.position();
      const before = this.seen;
      for (let i = 0; i < 600; i++) {
        const at = (await dataSource.manager.findOneBy(EventConsumerPosition, { name }))?.lastSeq ?? 0;
        const [next] = await log.backend.read(at, 1, types ? { types } : {});
        if (!next || next.seq > end) break; // nothing of its types left up to the end
        await new Promise((r) => setTimeout(r, 50));
      }
      return Math.max(0, this.seen - before);
    }
    const batch = this.options.batch ?? 100;
    let handled = 0;
    for (;;) {
      const { lastSeq: end } = await log.position();
      if (end <= this.seen) return handled;
      // Most new events are of other types: look without the lock first, and leave the position
      // row alone when there is nothing for us (no write transaction per unrelated event). The
      // stored position may then lag; the next handled batch scans on from it, which is cheap.
      if (this.seen >= 0 && !(await this.anyBetween(this.seen, end))) {
        this.seen = end;
        return handled;
      }
      const result = await inTransaction(dataSource, async (m) => {
        // The write comes first: on MySQL it locks the row until commit (and the read below then
        // sees the latest position); on SQLite it takes the database's write lock at once.
        await m.query(`UPDATE ${EVENT_CONSUMERS_TABLE} SET last_seq = last_seq WHERE name = ?`, [name]);
        const position = await m.findOneByOrFail(EventConsumerPosition, { name });
        const events = await log.dataSource.manager.find(LoggedEvent, {
          where: {
            seq: Raw((col) => `${col} > :after AND ${col} <= :end`, { after: position.lastSeq, end }),
            ...(types ? { type: In(types) } : {}),
          },
          order: { seq: 'ASC' },
          take: batch,
        });
        if (handleBatch) await handleBatch(m, events);
        else for (const event of events) await handle(m, event);
        // A full batch may leave more behind it; otherwise everything up to `end` has been seen.
        const through = events.length === batch ? events[events.length - 1].seq : Math.max(end, position.lastSeq);
        await m.update(EventConsumerPosition, { name }, { lastSeq: through });
        return { through, count: events.length };
      });
      handled += result.count;
      this.seen = result.through;
      if (result.count && this.options.logger)
        this.options.logger.debug({ consumer: name, handled: result.count, through: result.through }, 'events handled');
    }
  }
}
