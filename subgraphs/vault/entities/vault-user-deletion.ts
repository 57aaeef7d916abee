import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A deleted user whose items are still being removed, a batch at a time (enrichment-worker.ts). */
@Entity('vault_user_deletions')
export class VaultUserDeletion {
  @PrimaryColumn({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  @Column({ name: 'requested_at', type: 'datetime', precision: 3 })
  requestedAt!: Date;
}
