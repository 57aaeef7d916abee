import { Directive, Field, ID, Int, ObjectType } from 'type-graphql';
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { RequiresScopes } from '../../../lib/scopes';

const jsonList = {
  to: (v: string[]) => JSON.stringify(v),
  from: (v: string) => JSON.parse(v) as string[],
};

@Directive('@key(fields: "id")')
@RequiresScopes('account:write')
@ObjectType({
  description:
    "An address that receives events by POST (Standard Webhooks), signed with the webhook's secret. Its secret is shown once, when created or rotated.",
})
@Entity('webhooks')
@Index(['ownerId', 'id'])
@Index(['nextDeliveryAt'])
export class Webhook {
  /** UUIDv7: ordered by creation, so pages follow the id. */
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  /** The user who owns it; the gateway resolves `owner` from the auth subgraph. */
  @Column({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  @Field({ description: 'Where events are sent: an http(s) URL at a public address.' })
  @Column({ type: 'varchar', length: 2048 })
  url!: string;

  @Field(() => [String], {
    description: 'Event types it receives: exact types, or patterns whose `*` matches the rest (`voice.*`, `*`).',
  })
  @Column({ name: 'event_types', type: 'text', transformer: jsonList })
  eventTypes!: string[];

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 500, nullable: true })
  description!: string | null;

  @Field({ description: 'False: nothing is sent (set by you, or after deliveries failed for the retry period).' })
  @Column({ type: 'boolean' })
  enabled!: boolean;

  @Field({ description: "True: it receives every user's audit events (needs admin:integrations), not only yours." })
  @Column({ name: 'all_users', type: 'boolean' })
  allUsers!: boolean;

  @Field(() => String, { nullable: true, description: '`failing` when deliveries failed for the retry period.' })
  @Column({ name: 'disabled_reason', type: 'varchar', length: 32, nullable: true })
  disabledReason!: string | null;

  @Field(() => Int, { description: '1 when created; every change adds 1. Updates and deletes name it.' })
  @Column({ type: 'integer' })
  version!: number;

  @Field()
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Field()
  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;

  /** `whsec_…`: signs every delivery. */
  @Column({ type: 'varchar', length: 100 })
  secret!: string;

  /** The secret before the last rotation, signing alongside until `previousSecretUntil`. */
  @Column({ name: 'previous_secret', type: 'varchar', length: 100, nullable: true })
  previousSecret!: string | null;

  @Column({ name: 'previous_secret_until', type: 'datetime', precision: 3, nullable: true })
  previousSecretUntil!: Date | null;

  /** When its oldest undelivered event is due; null when none is waiting. Workers look for due ones. */
  @Column({ name: 'next_delivery_at', type: 'datetime', precision: 3, nullable: true })
  nextDeliveryAt!: Date | null;

  /** The worker delivering to it (one in flight per endpoint) and until when; in the past: free. */
  @Column({ name: 'lease_owner', type: 'varchar', length: 36, nullable: true })
  leaseOwner!: string | null;

  @Column({ name: 'lease_until', type: 'datetime', precision: 3 })
  leaseUntil!: Date;
}
