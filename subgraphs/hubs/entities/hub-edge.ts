import { Field, ID, ObjectType } from 'type-graphql';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { RequiresScopes } from '../../../lib/scopes';

@RequiresScopes('hubs:read')
// simpleResolvers: graphql-js's default resolver reads each field (no type-graphql wrapper per field of
// 20,000 edges); the fields need nothing else (scopes are directives, checked before execution).
@ObjectType({ description: 'An edge between two nodes of one hub, as in JSON Canvas.', simpleResolvers: true })
@Entity('hub_edges')
export class HubEdge {
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Field(() => ID)
  @Column({ name: 'hub_id', type: 'varchar', length: 36 })
  hubId!: string;

  @Field(() => ID)
  @Column({ name: 'from_node', type: 'varchar', length: 36 })
  fromNode!: string;

  @Field(() => ID)
  @Column({ name: 'to_node', type: 'varchar', length: 36 })
  toNode!: string;

  @Field(() => String, { nullable: true, description: 'top | right | bottom | left.' })
  @Column({ name: 'from_side', type: 'varchar', length: 6, nullable: true })
  fromSide!: string | null;

  @Field(() => String, { nullable: true, description: 'top | right | bottom | left.' })
  @Column({ name: 'to_side', type: 'varchar', length: 6, nullable: true })
  toSide!: string | null;

  @Field(() => String, { nullable: true, description: 'none | arrow (JSON Canvas: none when left out).' })
  @Column({ name: 'from_end', type: 'varchar', length: 5, nullable: true })
  fromEnd!: string | null;

  @Field(() => String, { nullable: true, description: 'none | arrow (JSON Canvas: arrow when left out).' })
  @Column({ name: 'to_end', type: 'varchar', length: 5, nullable: true })
  toEnd!: string | null;

  @Field(() => String, { nullable: true, description: 'At most 200 characters.' })
  @Column({ type: 'varchar', length: 200, nullable: true })
  label!: string | null;

  @Field(() => String, { nullable: true, description: '"1" to "6" or #RRGGBB.' })
  @Column({ type: 'varchar', length: 7, nullable: true })
  color!: string | null;

  @Field()
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
