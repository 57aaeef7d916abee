import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * The projection of refs: a note, vault item or voice that exists, and its owner, as the owning
 * modules' events told (refs-projection.ts). A node's `ref_id` is checked against it; the other
 * modules' tables are never read.
 */
@Entity('hub_refs')
export class HubRef {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  /** note | vault_item | voice: the node type that may point at it. */
  @Column({ type: 'varchar', length: 16 })
  kind!: string;

  @Column({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;
}
