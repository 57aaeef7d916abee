import { Directive, Field, ID, Int, ObjectType } from 'type-graphql';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { RequiresScopes } from '../../../lib/scopes';

/** The fields a note and a listing's summary of it share (GraphQL and REST name them alike). */
@ObjectType() // never in the schema itself: Note and NoteSummary extend it
export abstract class NoteFieldsBase {
  /** UUIDv7: ordered by creation. */
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Field(() => ID, { description: 'The user who owns it.' })
  @Column({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  @Field({ description: "0 to 200 characters; given empty, the body's first line." })
  @Column({ type: 'varchar', length: 200 })
  title!: string;

  @Field(() => ID, { nullable: true, description: 'The folder it is in; null: none.' })
  @Column({ name: 'folder_id', type: 'varchar', length: 36, nullable: true })
  folderId!: string | null;

  @Field(() => [String], { description: 'The tags given and the #hashtags of the body (outside code), lower-case.' })
  @Column({ type: 'simple-json' })
  tags!: string[];

  @Field({ description: 'Pinned notes come first in listings.' })
  @Column({ type: 'boolean' })
  pinned!: boolean;

  @Field({ description: 'Archived notes leave the default listing.' })
  @Column({ type: 'boolean' })
  archived!: boolean;

  @Field(() => Date, { nullable: true })
  @Column({ name: 'archived_at', type: 'datetime', precision: 3, nullable: true })
  archivedAt!: Date | null;

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

@Directive('@key(fields: "id")')
@RequiresScopes('notes:read')
@ObjectType({ description: 'A Markdown note of one user, with tags, wiki links and a folder.' })
@Entity('notes')
export class Note extends NoteFieldsBase {
  @Field({ description: 'Markdown, at most 100,000 characters.' })
  @Column({ type: 'text' })
  body!: string;

  /** The tags the client gave (the rest come from the body): kept so a body edit recomputes the union. */
  @Column({ name: 'given_tags', type: 'simple-json' })
  givenTags!: string[];

  /** Wiki links resolve by it: the title as titleKey() compares it. */
  @Column({ name: 'title_key', type: 'varchar', length: 200 })
  titleKey!: string;

  /** What listings show: the body's first 300 characters. */
  @Column({ type: 'varchar', length: 300 })
  excerpt!: string;

  /** Null: live. Set: in the trash since then (lib/kit/trash.ts); gone from every read but the trash's. */
  @Column({ name: 'deleted_at', type: 'datetime', precision: 3, nullable: true })
  deletedAt!: Date | null;

  /** SQLite: the note's row in the FTS5 index (notes_fts.rowid); MySQL indexes the columns themselves. */
  @Column({ name: 'search_id', type: 'integer', nullable: true })
  searchId!: number | null;
}

/** A note as listings show it: its excerpt, never the body. */
@RequiresScopes('notes:read')
@ObjectType({ description: 'A note in a listing: its first 300 characters as `excerpt`, not its body.' })
export class NoteSummary extends NoteFieldsBase {
  @Field({ description: 'The first 300 characters of the body.' })
  excerpt!: string;
}
