// The rows the notes module derives from each note (tags, wiki links); its caps are the kit's counters.
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
