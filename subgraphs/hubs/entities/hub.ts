import { Directive, Field, ID, Int, ObjectType } from 'type-graphql';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { RequiresScopes } from '../../../lib/scopes';

@Directive('@key(fields: "id")')
@RequiresScopes('hubs:read')
@ObjectType({ description: "A user's graph of nodes and edges, in the JSON Canvas 1.0 model." })
@Entity('hubs')
export class Hub {
  /** UUIDv7: ordered by creation, so pages follow the id. */
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  /** The user who owns it; the gateway resolves `owner` from the auth subgraph. */
  @Field(() => ID)
  @Column({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  @Field({ description: '1 to 100 characters, trimmed.' })
  @Column({ type: 'varchar', length: 100 })
  name!: string;

  @Field({ description: 'At most 1,000 characters; empty when not given.' })
  @Column({ type: 'varchar', length: 1000, default: '' })
  description!: string;

  @Field(() => Int)
  @Column({ name: 'node_count', type: 'integer', default: 0 })
  nodeCount!: number;

  @Field(() => Int)
  @Column({ name: 'edge_count', type: 'integer', default: 0 })
  edgeCount!: number;

  /** UTF-8 bytes of all node texts, against HUB_MAX_TEXT_BYTES. */
  @Column({ name: 'text_bytes', type: 'integer', default: 0 })
  textBytes!: number;

  /**
   * Moved by every write to the hub's nodes and edges (not served): the key of the graph kept in
   * memory (graph-cache.ts).
   */
  @Column({ name: 'graph_version', type: 'integer', default: 0 })
  graphVersion!: number;

  @Field(() => Int, { description: '1 when created; a hub PATCH adds 1 (node and edge changes do not).' })
  @Column({ type: 'integer' })
  version!: number;

  @Field()
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Field({ description: 'Moves with every change of the hub, its nodes and its edges.' })
  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;

  /** Null: live. Set: in the trash since then (lib/kit/trash.ts), with its nodes and edges; read by the trash only. */
  @Column({ name: 'deleted_at', type: 'datetime', precision: 3, nullable: true })
  deletedAt!: Date | null;
}
