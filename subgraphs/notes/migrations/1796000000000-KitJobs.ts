// The kit's job queue (lib/kit/jobs.ts) takes the place of note_jobs: its tables, with what a
// stopped process left in note_jobs moved over (still to be done; a cascade is not counted against
// the owner's limit, a rename is).
import { v7 as uuidv7 } from 'uuid';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createJobTables, dropJobTables, JOBS_TABLE, JOB_OWNERS_TABLE } from '../../../lib/kit/jobs';

const KINDS: Record<string, string> = { tag_rename: 'notes.tag_rename', user_cascade: 'notes.user_deleted' };

export class KitJobs1796000000000 implements MigrationInterface {
  name = 'KitJobs1796000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await createJobTables(queryRunner);
    const left = (await queryRunner.query(
      'SELECT id, owner_id, kind, params, created_at FROM note_jobs ORDER BY created_at, id',
    )) as { id: string; owner_id: string; kind: string; params: string; created_at: unknown }[];
    const pending = new Map<string, number>();
    for (const job of left) {
      const counted = job.kind === 'tag_rename';
      await queryRunner.query(
        `INSERT INTO ${JOBS_TABLE} (id, kind, owner_id, params, state, counted, claim, lease_until, takes, batches, created_at)
         VALUES (?, ?, ?, ?, 'pending', ?, NULL, NULL, 0, 0, ?)`,
        // A new UUIDv7 keeps each owner's jobs in the order they were asked for.
        [uuidv7(), KINDS[job.kind] ?? job.kind, job.owner_id, job.params, counted ? 1 : 0, job.created_at],
      );
      if (counted) pending.set(job.owner_id, (pending.get(job.owner_id) ?? 0) + 1);
    }
    for (const [ownerId, count] of pending)
      await queryRunner.query(
        `INSERT INTO ${JOB_OWNERS_TABLE} (owner_id, pending, last_served_at) VALUES (?, ?, NULL)`,
        [ownerId, count],
      );
    await queryRunner.dropTable('note_jobs');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const c = (await import('../../../lib/database/portable')).columns(queryRunner);
    const { Table } = await import('typeorm');
    await queryRunner.createTable(
      new Table({
        name: 'note_jobs',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('owner_id'),
          c.string('kind', 20),
          c.text('params'),
          c.timestamp('created_at'),
        ],
      }),
    );
    await dropJobTables(queryRunner);
  }
}
