import { Directive, Field, ID, Int, ObjectType } from 'type-graphql';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { RequiresScopes } from '../../../lib/scopes';

@Directive('@key(fields: "id")')
// Every field of it is the module's to read (its reads need `examples:read`, its writes `examples:write`).
@RequiresScopes('examples:read')
@ObjectType({ description: 'Owned by one user. Say here what it is.' })
@Entity('example_items')
export class ExampleItem {
  /** UUIDv7: ordered by creation, so pages follow the id. */
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  /** The user who owns it; the gateway resolves `owner` from the auth subgraph. */
  @Column({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  @Field({ description: '1 to 200 characters, trimmed.' })
  @Column({ type: 'varchar', length: 200 })
  title!: string;

  @Field(() => Int, { description: '1 when created; every change adds 1. Updates and deletes name it.' })
  @Column({ type: 'integer' })
  version!: number;

  @Field()
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Field()
  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;
}
