import { Field, ID, Int, ObjectType } from 'type-graphql';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { RequiresScopes } from '../../../lib/scopes';

@RequiresScopes('notes:read')
@ObjectType({ description: 'A folder of notes: folders make a tree, at most 10 deep.' })
@Entity('note_folders')
export class NoteFolder {
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  @Field({ description: '1 to 100 characters without "/", unique among its siblings (ignoring case).' })
  @Column({ type: 'varchar', length: 100 })
  name!: string;

  /** Sibling names are unique by it (the name lower-cased). */
  @Column({ name: 'name_key', type: 'varchar', length: 100 })
  nameKey!: string;

  @Field(() => ID, { nullable: true, description: 'The folder it is in; null: at the top.' })
  @Column({ name: 'parent_id', type: 'varchar', length: 36, nullable: true })
  parentId!: string | null;

  /** parent_id, or '' at the top: a unique index over NULLs would not hold. */
  @Column({ name: 'parent_key', type: 'varchar', length: 36 })
  parentKey!: string;

  @Field(() => Int)
  @Column({ type: 'integer' })
  version!: number;

  @Field()
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Field()
  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;

  @Field({ description: 'The names from the top down to this folder, joined with "/".' })
  path!: string;

  @Field(() => Int, { description: 'The notes directly in it, archived ones included.' })
  noteCount!: number;
}
