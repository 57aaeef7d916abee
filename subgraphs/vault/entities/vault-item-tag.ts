import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One tag of one item, for the `tag` filter and GET /vault/tags (the item's `tags` column is what it answers). */
@Entity('vault_item_tags')
export class VaultItemTag {
  @PrimaryColumn({ name: 'item_id', type: 'varchar', length: 36 })
  itemId!: string;

  @PrimaryColumn({ type: 'varchar', length: 50 })
  name!: string;

  @Column({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;
}
