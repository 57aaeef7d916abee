import { Field, ID, Int, ObjectType } from 'type-graphql';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { RequiresScopes } from '../../../lib/scopes';
import { NODE_TYPES } from '../hub-rules';

export { NODE_TYPES };
export type NodeType = (typeof NODE_TYPES)[number];
/** Node types that point at another module's entity by `ref_id`. */
export const REF_TYPES = ['note', 'vault_item', 'voice'] as const;
export type RefType = (typeof REF_TYPES)[number];
export const isRefType = (type: string): type is RefType => (REF_TYPES as readonly string[]).includes(type);

@RequiresScopes('hubs:read')
// simpleResolvers: as HubEdge (the field resolvers note, vaultItem and voice keep theirs).
@ObjectType({
  description: 'A node of a hub: a JSON Canvas node, or a reference to a note, vault item or voice.',
  simpleResolvers: true,
})
@Entity('hub_nodes')
export class HubNode {
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Field(() => ID)
  @Column({ name: 'hub_id', type: 'varchar', length: 36 })
  hubId!: string;

  @Field({ description: 'text | link | note | vault_item | voice | group.' })
  @Column({ type: 'varchar', length: 16 })
  type!: string;

  @Field(() => Int, { description: 'A 32-bit integer.' }) @Column({ type: 'integer' }) x!: number;
  @Field(() => Int, { description: 'A 32-bit integer.' }) @Column({ type: 'integer' }) y!: number;
  @Field(() => Int, { description: '1 to 100,000.' }) @Column({ type: 'integer' }) width!: number;
  @Field(() => Int, { description: '1 to 100,000.' }) @Column({ type: 'integer' }) height!: number;

  @Field(() => String, { nullable: true, description: '"1" to "6" (the canvas presets) or #RRGGBB.' })
  @Column({ type: 'varchar', length: 7, nullable: true })
  color!: string | null;

  @Field(() => String, { nullable: true, description: 'At most 200 characters (a group’s title).' })
  @Column({ type: 'varchar', length: 200, nullable: true })
  label!: string | null;

  @Field(() => String, { nullable: true, description: 'Markdown, of a text node.' })
  @Column({ type: 'text', nullable: true })
  text!: string | null;

  @Field(() => String, { nullable: true, description: 'The URL of a link node.' })
  @Column({ type: 'varchar', length: 2048, nullable: true })
  url!: string | null;

  @Field(() => ID, { nullable: true, description: 'The note, vault item or voice a ref node points at.' })
  @Column({ name: 'ref_id', type: 'varchar', length: 36, nullable: true })
  refId!: string | null;

  @Field({ description: 'True once what a ref node points at was deleted; the node stays.' })
  @Column({ type: 'boolean', default: false })
  missing!: boolean;

  @Field(() => Int, { description: '1 when added; every change of the node adds 1.' })
  @Column({ type: 'integer' })
  version!: number;

  @Field()
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Field()
  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;
}
