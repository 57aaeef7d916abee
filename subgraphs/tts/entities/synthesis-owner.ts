import { Column, DataSource, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row per user who has requested speech, for two things the job rows alone cannot do:
 * a request locks its owner's row while it counts the owner's jobs (so concurrent requests
 * cannot all see room under SYNTHESIS_QUEUE_PER_USER), and workers take the next job from the
 * owner they served longest ago (round robin across users).
 */
@Entity('synthesis_owners')
export class SynthesisOwner {
  @PrimaryColumn({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  /** When one of the owner's jobs was last taken by a worker; null: never. */
  @Column({ name: 'last_claimed_at', type: 'datetime', precision: 3, nullable: true })
  lastClaimedAt!: Date | null;

  /** When the owner last requested a job (written under the lock). */
  @Column({ name: 'last_queued_at', type: 'datetime', precision: 3, nullable: true })
  lastQueuedAt!: Date | null;
}

/**
 * The owner's row, made if missing, before a transaction locks it. Inserted on its own: on MySQL
 * an INSERT IGNORE of an existing key takes a shared lock, and two of them upgrading to the
 * transaction's UPDATE would deadlock.
 */
export async function ensureSynthesisOwner(dataSource: DataSource, ownerId: string): Promise<void> {
  await dataSource.manager
    .createQueryBuilder()
    .insert()
    .into(SynthesisOwner)
    .values({ ownerId, lastClaimedAt: null, lastQueuedAt: null })
    .orIgnore()
    .execute();
}
