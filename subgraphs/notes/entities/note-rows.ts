// The rows the notes module derives from each note (tags, wiki links), its per-owner counters
// and its background jobs. None is a GraphQL type.
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One tag of one note: the tag filter and the tag counts read these. */
@Entity('note_tags')
export class NoteTag {
  @PrimaryColumn({ name: 'note_id', type: 'varchar', length: 36 })
  noteId!: string;

  @PrimaryColumn({ type: 'varchar', length: 50 })
  tag!: string;

  @Column({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;
}

/** One wiki link of a note: `t:<title key>` or `i:<note id>`, resolved when read (so a link may precede its target). */
@Entity('note_links')
export class NoteLink {
  @PrimaryColumn({ name: 'source_id', type: 'varchar', length: 36 })
  sourceId!: string;

  @PrimaryColumn({ name: 'target_key', type: 'varchar', length: 202 })
  targetKey!: string;

  @Column({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;
}

export type NoteJobKind = 'tag_rename' | 'user_cascade';

/** Work over many rows (a tag rename, a deleted user's notes), done in batches until it is done. */
@Entity('note_jobs')
export class NoteJob {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  @Column({ type: 'varchar', length: 20 })
  kind!: NoteJobKind;

  /** tag_rename: `{ from, to }`. */
  @Column({ type: 'simple-json' })
  params!: Record<string, string>;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
