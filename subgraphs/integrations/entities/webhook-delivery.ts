import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

export enum DeliveryState {
  PENDING = 'pending',
  DELIVERED = 'delivered',
  /** Given up after the retry period (the endpoint was disabled). */
  FAILED = 'failed',
}

const bigintNumber = { to: (v: number) => v, from: (v: string | number) => Number(v) };

/** One event for one webhook: a job, delivered in `(eventSeq, id)` order per webhook. */
@Entity('webhook_deliveries')
@Index(['webhookId', 'state', 'eventSeq'])
@Index(['createdAt'])
export class WebhookDelivery {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'webhook_id', type: 'varchar', length: 36 })
  webhookId!: string;

  /** The event's id: `webhook-id`, the same on every attempt so receivers can de-duplicate. */
  @Column({ name: 'event_id', type: 'varchar', length: 36 })
  eventId!: string;

  @Column({ name: 'event_type', type: 'varchar', length: 100 })
  eventType!: string;

  /** The event's position in the log (the order of delivery). */
  @Column({ name: 'event_seq', type: 'bigint', transformer: bigintNumber })
  eventSeq!: number;

  /** The body: the event as the event stream shows it (JSON). */
  @Column({ type: 'text' })
  payload!: string;

  @Column({ type: 'varchar', length: 16 })
  state!: DeliveryState;

  @Column({ type: 'integer' })
  attempts!: number;

  @Column({ name: 'next_attempt_at', type: 'datetime', precision: 3, nullable: true })
  nextAttemptAt!: Date | null;

  /** When the event happened: the lag metric's start. */
  @Column({ name: 'occurred_at', type: 'datetime', precision: 3 })
  occurredAt!: Date;

  /** When the retry period started: made, or retried by hand. */
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
