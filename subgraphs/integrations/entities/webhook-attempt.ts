import { Field, ID, Int, ObjectType } from 'type-graphql';
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { RequiresScopes } from '../../../lib/scopes';

/** One attempt to deliver one event to one webhook: the delivery log (kept WEBHOOK_LOG_RETENTION_SECONDS). */
@RequiresScopes('account:write')
@ObjectType({ description: 'One attempt to deliver an event to a webhook.' })
@Entity('webhook_attempts')
@Index(['webhookId', 'id'])
@Index(['createdAt'])
export class WebhookAttempt {
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'webhook_id', type: 'varchar', length: 36 })
  webhookId!: string;

  @Field(() => ID, { description: 'The delivery (this event for this webhook): retry it with its id.' })
  @Column({ name: 'delivery_id', type: 'varchar', length: 36 })
  deliveryId!: string;

  @Field(() => ID, { description: 'The event id, sent as `webhook-id`.' })
  @Column({ name: 'event_id', type: 'varchar', length: 36 })
  eventId!: string;

  @Field()
  @Column({ name: 'event_type', type: 'varchar', length: 100 })
  eventType!: string;

  @Field(() => Int, { description: '1 for the first attempt of the delivery.' })
  @Column({ type: 'integer' })
  attempt!: number;

  @Field({
    description:
      '`delivered` (2xx), `failed` (another status), `timeout`, `error` (no answer), `blocked_address` (nothing sent).',
  })
  @Column({ type: 'varchar', length: 32 })
  outcome!: string;

  @Field(() => Int, { nullable: true, description: "The receiver's HTTP status." })
  @Column({ type: 'integer', nullable: true })
  status!: number | null;

  @Field(() => Int)
  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs!: number;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 500, nullable: true })
  error!: string | null;

  @Field(() => Date, { nullable: true, description: 'When it is tried again; null when delivered or given up.' })
  @Column({ name: 'next_attempt_at', type: 'datetime', precision: 3, nullable: true })
  nextAttemptAt!: Date | null;

  @Field()
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
