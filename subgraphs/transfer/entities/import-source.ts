import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * What an import made from a part of a file: a note (keyed by its source path and content hash,
 * so that the same file imported again creates nothing) or a vault file (keyed by the job and its
 * path, so that the job's notes can link to it). The transfer module's own memory: the notes and
 * vault modules keep nothing of where their rows came from.
 */
@Entity('transfer_sources')
@Index(['ownerId', 'kind', 'sourceKey'], { unique: true })
@Index(['jobId'])
export class ImportSource {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  @Column({ name: 'job_id', type: 'varchar', length: 36 })
  jobId!: string;

  /** `note` or `file`. */
  @Column({ type: 'varchar', length: 8 })
  kind!: string;

  /** SHA-256 (hex) of what identifies it: the path and content hash (a note), the job and path (a file). */
  @Column({ name: 'source_key', type: 'varchar', length: 64 })
  sourceKey!: string;

  @Column({ type: 'text' })
  path!: string;

  /** The note's or the vault item's id. */
  @Column({ name: 'target_id', type: 'varchar', length: 36 })
  targetId!: string;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
