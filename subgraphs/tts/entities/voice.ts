import { Directive, Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { RequiresScopes } from '../../../lib/scopes';
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

@RequiresScopes('tts:read')
@Directive('@key(fields: "id")')
@ObjectType({
  description: 'A voice configuration of its owner: a base voice of the speech engine and how to speak with it.',
})
@Entity('voices')
@Index(['ownerId', 'nameKey'], { unique: true })
export class Voice {
  /** UUIDv7: ordered by creation, so pages follow the id. */
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Field(() => ID)
  @Column({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  @Field({ description: "Unique among the owner's voices, ignoring case; 1–100 characters, trimmed." })
  @Column({ type: 'varchar', length: 100 })
  name!: string;

  /** Lower-cased name: the uniqueness key, the same on every database collation. */
  @Column({ name: 'name_key', type: 'varchar', length: 100 })
  nameKey!: string;

  @Field(() => String, { nullable: true })
  @Column({ type: 'text', nullable: true })
  description!: string | null;

  @Field({ description: 'A base voice of the speech engine (see baseVoices).' })
  @Column({ name: 'base_voice', type: 'varchar', length: 64 })
  baseVoice!: string;

  @Field(() => String, {
    nullable: true,
    description: 'Base voices joined by "+", each optionally weighted: f3(2)+m3(1).',
  })
  @Column({ name: 'voice_blend', type: 'varchar', length: 500, nullable: true })
  voiceBlend!: string | null;

  @Field({ description: 'A language tag of the engine; en-us when not given.' })
  @Column({ type: 'varchar', length: 35 })
  language!: string;

  @Field(() => Float, { description: 'Speaking speed, 0.25 to 4.0; 1.0 when not given.' })
  @Column({ type: 'double' })
  speed!: number;

  @Field(() => Int, { description: '1 when created; every change adds 1. Deletion must name it.' })
  @Column({ type: 'integer' })
  version!: number;

  @Field()
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Field()
  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;
}
