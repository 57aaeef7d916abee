// The kit's job queue (lib/kit/jobs.ts) takes the place of vault_user_deletions: its tables, with
// the deletions a stopped process left moved over as jobs.
import { v7 as uuidv7 } from 'uuid';
import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { columns } from '../../../lib/database/portable';
import { createJobTables, dropJobTables, JOBS_TABLE } from '../../../lib/kit/jobs';

export class KitJobs1796000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await createJobTables(queryRunner);
    const left = (await queryRunner.query(
      'SELECT owner_id, requested_at FROM vault_user_deletions ORDER BY requested_at',
    )) as { owner_id: string; requested_at: unknown }[];
    for (const { owner_id: ownerId, requested_at: requestedAt } of left)
      await queryRunner.query(
        `INSERT INTO ${JOBS_TABLE} (id, kind, owner_id, params, state, counted, claim, lease_until, takes, batches, created_at)
         VALUES (?, 'vault.user_deleted', ?, '{}', 'pending', 0, NULL, NULL, 0, 0, ?)`,
        [uuidv7(), ownerId, requestedAt],
      );
    await queryRunner.dropTable('vault_user_deletions');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'vault_user_deletions',
        columns: [c.uuid('owner_id', { isPrimary: true }), c.timestamp('requested_at')],
      }),
    );
    await dropJobTables(queryRunner);
  }
}
