// The rows the notes module derives from each note (tags, wiki links) and its per-owner counters.
// None is a GraphQL type (its background jobs are the kit's: lib/kit/jobs.ts).
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

/** Per owner: what the caps count, and the row whose lock serialises an owner's folder and cap changes. */
@Entity('note_owners')
export class NoteOwner {
  @PrimaryColumn({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  @Column({ name: 'note_count', type: 'integer' })
  noteCount!: number;

  @Column({ name: 'folder_count', type: 'integer' })
  folderCount!: number;
}
