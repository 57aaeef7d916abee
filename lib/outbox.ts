// The transactional outbox: the one place where a subgraph writes an event. The event row
// is inserted with the change in the same transaction, so an acknowledged command always
// has its event and a rolled-back one never does.
import crypto from 'node:crypto';
import {
  Column,
  Entity,
  EntityManager,
  Index,
  PrimaryGeneratedColumn,
  QueryRunner,
  Table,
  TableColumnOptions,
} from 'typeorm';
import { columns } from './database/portable';

export const OUTBOX_TABLE = 'outbox';

/** The columns of an event, in a subgraph's outbox and in the event log alike. */
export abstract class EventColumns {
  @Index({ unique: true })
  @Column({ name: 'event_id', type: 'varchar', length: 36 })
  eventId!: string;

  @Column({ type: 'varchar', length: 100 })
  type!: string;

  /** Whose stream the event belongs to. */
  @Column({ name: 'user_id', type: 'varchar', length: 36 })
  userId!: string;

  @Column({ name: 'resource_id', type: 'varchar', length: 64 })
  resourceId!: string;

  /** JSON of the resource's useful fields. */
  @Column({ type: 'text' })
  payload!: string;

  @Column({ name: 'occurred_at', type: 'datetime', precision: 3 })
  occurredAt!: Date;
}

@Entity(OUTBOX_TABLE)
export class OutboxEvent extends EventColumns {
  /** Order of writing within this subgraph's outbox. */
  @PrimaryGeneratedColumn()
  seq!: number;
}

export interface NewEvent {
  type: string;
  userId: string;
  resourceId: string;
  data?: Record<string, unknown>;
}

/** Adds an event to the outbox inside the caller's transaction. */
export async function recordEvent(manager: EntityManager, event: NewEvent): Promise<OutboxEvent> {
  const row = manager.create(OutboxEvent, {
    eventId: crypto.randomUUID(),
    type: event.type,
    userId: event.userId,
    resourceId: event.resourceId,
    payload: JSON.stringify(event.data ?? {}),
    occurredAt: new Date(),
  });
  return manager.save(OutboxEvent, row);
}

/** The table columns of EventColumns, for migrations of the outbox and of the event log. */
export function eventTableColumns(queryRunner: QueryRunner): TableColumnOptions[] {
  const c = columns(queryRunner);
  return [
    c.uuid('event_id', { isUnique: true }),
    c.string('type', 100),
    c.uuid('user_id'),
    c.string('resource_id', 64),
    c.text('payload'),
    c.timestamp('occurred_at'),
  ];
}

/** For a subgraph's first migration: its own outbox table. */
export async function createOutboxTable(queryRunner: QueryRunner): Promise<void> {
  const c = columns(queryRunner);
  await queryRunner.createTable(
    new Table({
      name: OUTBOX_TABLE,
      columns: [c.sequence('seq'), ...eventTableColumns(queryRunner)],
      indices: [{ columnNames: ['occurred_at'] }],
    }),
  );
}
