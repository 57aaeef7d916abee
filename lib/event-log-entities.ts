// The event log's table and its sequence row (the table backend, lib/event-backends.ts); kept
// apart so that the backends and the log can both import them.
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { EventColumns } from './outbox';

/** BIGINT comes back from MySQL as a string; positions stay well inside a double's integers. */
const bigintNumber = { to: (v: number) => v, from: (v: string | number) => Number(v) };

@Entity('events')
@Index(['userId', 'seq'])
@Index(['resourceId'])
@Index(['type', 'seq'])
export class LoggedEvent extends EventColumns {
  /** The stream position: assigned in commit order, so a reader at `seq > n` never skips one. */
  @PrimaryColumn({ type: 'bigint', transformer: bigintNumber })
  seq!: number;

  /** The subgraph that wrote it. */
  @Column({ type: 'varchar', length: 64 })
  source!: string;
}

/** One row: the last sequence number handed out, and up to where old events were pruned. */
@Entity('event_sequence')
export class EventSequence {
  @PrimaryColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'last_seq', type: 'bigint', transformer: bigintNumber })
  lastSeq!: number;

  @Column({ name: 'pruned_through', type: 'bigint', transformer: bigintNumber })
  prunedThrough!: number;
}
