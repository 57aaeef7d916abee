import { Directive, Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { RequiresScopes } from '../../../lib/scopes';

export type TransferDirection = 'import' | 'export';
export type TransferState = 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';
export const FINISHED_STATES: readonly TransferState[] = ['succeeded', 'failed', 'canceled'];

/** What an import created or passed over, by kind (the contract's `counts`). */
@RequiresScopes('transfer:read')
@ObjectType({ description: 'What an import created or passed over.' })
export class TransferCounts {
  @Field(() => Int) notes!: number;
  @Field(() => Int) folders!: number;
  @Field(() => Int) vaultItems!: number;
  @Field(() => Int) hubs!: number;
  @Field(() => Int, { description: 'Records that could not be imported (see errors).' })
  skipped!: number;
  @Field(() => Int, { description: 'Records already there (the same link, the same note): nothing created.' })
  duplicates!: number;
}

export const emptyCounts = (): TransferCounts => ({
  notes: 0,
  folders: 0,
  vaultItems: 0,
  hubs: 0,
  skipped: 0,
  duplicates: 0,
});

@RequiresScopes('transfer:read')
@ObjectType({ description: 'Records done of the total (the total is known once the file has been read).' })
export class TransferProgress {
  @Field(() => Int) done!: number;
  @Field(() => Int) total!: number;
}

@RequiresScopes('transfer:read')
@ObjectType({ description: 'A record that could not be imported, or why the job failed.' })
export class TransferError {
  @Field({ description: 'Where in the file: a path in the zip, a bookmark title or URL; empty for the whole job.' })
  path!: string;
  @Field() message!: string;
}

/** Who asked for the job, as their token said: the job acts as them (and within their scopes) through the gateway. */
export interface JobPrincipal {
  userId: string;
  sessionId: string;
  roles: string[];
  scopes: string[];
}

@Directive('@key(fields: "id")')
@RequiresScopes('transfer:read')
@ObjectType({
  description: 'An import (a file brought in) or an export (the whole account as a zip), run in the background.',
})
@Entity('transfer_jobs')
@Index(['ownerId', 'direction', 'id'])
export class TransferJob {
  /** UUIDv7: ordered by creation, so pages follow the id. */
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  @Column({ type: 'varchar', length: 8 })
  direction!: TransferDirection;

  @Field({ description: 'netscape, markdown, canvas, karakeep or export (imports); zip (exports).' })
  @Column({ type: 'varchar', length: 16 })
  format!: string;

  @Field({ description: 'queued, running, succeeded, failed or canceled.' })
  @Column({ type: 'varchar', length: 16 })
  state!: TransferState;

  /** The upload has ended (an import): only then is it queued for the runner. */
  @Column({ type: 'boolean' })
  uploaded!: boolean;

  /** Bytes received (an import's file) or written (an export's zip). */
  @Field(() => Float)
  @Column({ type: 'bigint', transformer: { to: (v: number) => v, from: (v: string | number) => Number(v) } })
  bytes!: number;

  /** Pieces of the uploaded file in the blob store (`import-<id>-<n>.bin`). */
  @Column({ type: 'integer' })
  pieces!: number;

  /** Where the next batch starts in the parsed records (`import-<id>.jsonl`): a byte offset; null until the file was read. */
  @Column({
    type: 'bigint',
    nullable: true,
    transformer: { to: (v: number | null) => v, from: (v: string | number | null) => (v === null ? null : Number(v)) },
  })
  cursor!: number | null;

  @Column({ type: 'integer' })
  done!: number;

  @Column({ type: 'integer' })
  total!: number;

  @Field(() => TransferCounts)
  @Column({ type: 'simple-json' })
  counts!: TransferCounts;

  @Field(() => [TransferError], { description: 'At most 100.' })
  @Column({ type: 'simple-json' })
  errors!: TransferError[];

  /** An export's choices (`include`). */
  @Column({ type: 'simple-json', nullable: true })
  options!: { include?: string[] } | null;

  /** The owner while an export of theirs is queued or running, else null: unique, so one export runs per user. */
  @Column({ name: 'active_owner', type: 'varchar', length: 36, nullable: true })
  activeOwner!: string | null;

  @Column({ name: 'target_folder_id', type: 'varchar', length: 36, nullable: true })
  targetFolderId!: string | null;

  @Column({ type: 'simple-json' })
  principal!: JobPrincipal;

  /** When the last `import.progress` event was written (at most one a second). */
  @Column({ name: 'progress_at', type: 'datetime', precision: 3, nullable: true })
  progressAt!: Date | null;

  @Field()
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Field(() => Date, { nullable: true })
  @Column({ name: 'finished_at', type: 'datetime', precision: 3, nullable: true })
  finishedAt!: Date | null;
}
