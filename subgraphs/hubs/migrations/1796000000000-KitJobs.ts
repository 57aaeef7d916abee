// The kit's job queue (lib/kit/jobs.ts) takes the place of hub_deletions: its tables, with the
// deletions a stopped process left moved over as jobs (their hub's owner is no longer known: the
// hub id stands for it, which only places them in the round).
import { v7 as uuidv7 } from 'uuid';
import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { columns } from '../../../lib/database/portable';
import { createJobTables, dropJobTables, JOBS_TABLE } from '../../../lib/kit/jobs';

export class KitJobs1796000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await createJobTables(queryRunner);
    const left = (await queryRunner.query('SELECT hub_id FROM hub_deletions')) as { hub_id: string }[];
    const now = new Date();
    for (const { hub_id: hubId } of left)
      await queryRunner.query(
        `INSERT INTO ${JOBS_TABLE} (id, kind, owner_id, params, state, counted, claim, lease_until, takes, batches, created_at)
         VALUES (?, 'hubs.hub_rows', ?, ?, 'pending', 0, NULL, NULL, 0, 0, ?)`,
        [uuidv7(), hubId, JSON.stringify({ hubId }), now.toISOString().replace('T', ' ').replace('Z', '')],
      );
    await queryRunner.dropTable('hub_deletions');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    await queryRunner.createTable(
      new Table({ name: 'hub_deletions', columns: [c.uuid('hub_id', { isPrimary: true })] }),
    );
    await dropJobTables(queryRunner);
  }
}
